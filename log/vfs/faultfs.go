package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
)

// Op is a kind of filesystem operation, as [FaultFS] counts and matches them.
type Op int

// The operations. Several methods share one Op where a test would not tell
// them apart.
const (
	OpAny      Op = iota // in a [Rule]: every operation
	OpCreate             // FS.Create
	OpOpen               // FS.Open, FS.OpenReadWrite
	OpRead               // File.ReadAt
	OpWrite              // File.Write, File.WriteAt
	OpSync               // File.Sync
	OpTruncate           // File.Truncate
	OpClose              // File.Close
	OpStat               // FS.Stat, File.Size
	OpList               // FS.List
	OpRemove             // FS.Remove, FS.RemoveAll
	OpRename             // FS.Rename
	OpMkdir              // FS.MkdirAll
	OpSyncDir            // FS.SyncDir
	OpLock               // FS.Lock
	numOps
)

var opNames = [numOps]string{
	"any", "create", "open", "read", "write", "sync", "truncate", "close",
	"stat", "list", "remove", "rename", "mkdir", "syncdir", "lock",
}

func (op Op) String() string {
	if op < 0 || op >= numOps {
		return fmt.Sprintf("Op(%d)", int(op))
	}
	return opNames[op]
}

// ErrInjected matches (with errors.Is) every error a [FaultFS] injects, in
// addition to the [Rule]'s own error.
var ErrInjected = errors.New("vfs: injected fault")

// injectedError marks a Rule's error as injected without hiding it.
type injectedError struct{ err error }

func (e *injectedError) Error() string        { return e.err.Error() + " (injected)" }
func (e *injectedError) Unwrap() error        { return e.err }
func (e *injectedError) Is(target error) bool { return target == ErrInjected }

// Rule says which operations of a [FaultFS] fail, and how.
//
// An operation matches when its kind is Op (or Op is [OpAny]), its path
// contains Path, and Match, if set, returns true. For OpRename the path is
// the old name, but Path matches either name. For file operations the path
// is the name the file was opened with. Match runs with the FaultFS's lock
// held: it must not call the FaultFS.
type Rule struct {
	Op    Op
	Path  string                        // substring of the path; "" matches every path
	Match func(op Op, path string) bool // optional further test

	// Nth is the matching operation, counted from 1 since the rule was
	// injected, that fails; 0 is the same as 1. With Sticky, every matching
	// operation after the Nth fails too.
	Nth    int
	Sticky bool

	// Err is the cause returned, wrapped so that it is an *fs.PathError
	// (*os.LinkError for rename) matching both Err and [ErrInjected]. Nil
	// means [ErrInjected] alone. [ENOSPC] and [EIO] build common rules.
	Err error

	// TornBytes and TornFraction tear an OpWrite: the first TornBytes bytes
	// of the buffer (if TornFraction > 0, that fraction of it, rounded down)
	// are written through to the inner file before the error is returned,
	// with the count written. Both zero: nothing is written.
	TornBytes    int
	TornFraction float64
}

// ENOSPC returns a rule failing the nth operation op on paths containing
// path with syscall.ENOSPC (no space left on device).
func ENOSPC(op Op, path string, nth int) Rule {
	return Rule{Op: op, Path: path, Nth: nth, Err: syscall.ENOSPC}
}

// EIO returns a rule failing the nth operation op on paths containing path
// with syscall.EIO (input/output error).
func EIO(op Op, path string, nth int) Rule {
	return Rule{Op: op, Path: path, Nth: nth, Err: syscall.EIO}
}

func (r *Rule) matches(op Op, path, newpath string) bool {
	if r.Op != OpAny && r.Op != op {
		return false
	}
	if !strings.Contains(path, r.Path) && (op != OpRename || !strings.Contains(newpath, r.Path)) {
		return false
	}
	return r.Match == nil || r.Match(op, path)
}

// tornLen is how many of n bytes a failing write lets through.
func (r *Rule) tornLen(n int) int {
	k := r.TornBytes
	if r.TornFraction > 0 {
		k = int(float64(n) * r.TornFraction)
	}
	return min(max(k, 0), n)
}

// FaultFS wraps an [FS] and fails chosen operations deterministically, per
// the [Rule]s injected, and counts and reports every operation so that a
// crash test can stop at each sync point. It is safe for concurrent use.
// Rules are checked in the order injected and the first that fires wins;
// every matching rule counts the operation all the same, so a later rule
// whose turn it was does not fire then.
//
// A failed operation does nothing to the inner filesystem, except that a
// torn write writes its prefix and a failed Close still closes the inner
// file. In particular, after an injected Sync failure the inner file is as
// if Sync had not been called: on a [MemFS] the unsynced data is still in
// the current contents (visible to reads) but not synced, and a CrashClone
// loses it. Files of a FaultFS are not operating-system files ([OSFile]
// returns nil), so [Map] reports [ErrNotSupported] and all I/O is seen.
type FaultFS struct {
	inner FS

	mu       sync.Mutex // protects the following
	rules    []*ruleState
	counts   [numOps]int
	injected int
	onOp     func(op Op, path string)
}

type ruleState struct {
	Rule
	seen int // matching operations so far
}

var _ FS = (*FaultFS)(nil)

// NewFaultFS returns a FaultFS over inner with no rules.
func NewFaultFS(inner FS) *FaultFS { return &FaultFS{inner: inner} }

// Inject adds a rule.
func (f *FaultFS) Inject(r Rule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &ruleState{Rule: r})
}

// Clear removes every rule. Counts are kept.
func (f *FaultFS) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// OnOp sets a function called before every operation (nil removes it), with
// no lock of the FaultFS held: it may call [MemFS.CrashClone] on the inner
// filesystem, or inject rules. It runs on the goroutine making the operation,
// so a concurrent workload needs a hook safe for concurrent use. Calling CrashClone in the hook of an OpSync
// gives the state just before that sync; the state just after it is the one
// seen by the hook of the next operation.
func (f *FaultFS) OnOp(fn func(op Op, path string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onOp = fn
}

// Count returns how many operations of kind op have been made ([OpAny]:
// of every kind), failed ones included.
func (f *FaultFS) Count(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if op == OpAny {
		total := 0
		for _, c := range f.counts {
			total += c
		}
		return total
	}
	if op < 0 || op >= numOps {
		return 0
	}
	return f.counts[op]
}

// Injected returns how many faults have been injected so far.
func (f *FaultFS) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// check counts the operation, runs the hook and returns the rule that fails
// it, or nil.
func (f *FaultFS) check(op Op, path, newpath string) *Rule {
	f.mu.Lock()
	f.counts[op]++
	var fire *Rule
	for _, r := range f.rules {
		if !r.matches(op, path, newpath) {
			continue
		}
		r.seen++
		if fire == nil && (r.seen == max(r.Nth, 1) || (r.Sticky && r.seen > r.Nth)) {
			fire = &r.Rule
		}
	}
	if fire != nil {
		f.injected++
	}
	hook := f.onOp
	f.mu.Unlock()
	if hook != nil {
		hook(op, path)
	}
	return fire
}

func injectedCause(r *Rule) error {
	if r.Err == nil {
		return ErrInjected
	}
	return &injectedError{err: r.Err}
}

func pathFault(r *Rule, op Op, path string) error {
	return &fs.PathError{Op: op.String(), Path: path, Err: injectedCause(r)}
}

func (f *FaultFS) Create(name string) (File, error) {
	if r := f.check(OpCreate, name, ""); r != nil {
		return nil, pathFault(r, OpCreate, name)
	}
	return f.wrap(f.inner.Create(name))
}

func (f *FaultFS) Open(name string) (File, error) {
	if r := f.check(OpOpen, name, ""); r != nil {
		return nil, pathFault(r, OpOpen, name)
	}
	return f.wrap(f.inner.Open(name))
}

func (f *FaultFS) OpenReadWrite(name string) (File, error) {
	if r := f.check(OpOpen, name, ""); r != nil {
		return nil, pathFault(r, OpOpen, name)
	}
	return f.wrap(f.inner.OpenReadWrite(name))
}

func (f *FaultFS) wrap(file File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: f, f: file}, nil
}

func (f *FaultFS) Remove(name string) error {
	if r := f.check(OpRemove, name, ""); r != nil {
		return pathFault(r, OpRemove, name)
	}
	return f.inner.Remove(name)
}

func (f *FaultFS) RemoveAll(name string) error {
	if r := f.check(OpRemove, name, ""); r != nil {
		return pathFault(r, OpRemove, name)
	}
	return f.inner.RemoveAll(name)
}

func (f *FaultFS) Rename(oldname, newname string) error {
	if r := f.check(OpRename, oldname, newname); r != nil {
		return &os.LinkError{Op: OpRename.String(), Old: oldname, New: newname, Err: injectedCause(r)}
	}
	return f.inner.Rename(oldname, newname)
}

func (f *FaultFS) MkdirAll(dir string) error {
	if r := f.check(OpMkdir, dir, ""); r != nil {
		return pathFault(r, OpMkdir, dir)
	}
	return f.inner.MkdirAll(dir)
}

func (f *FaultFS) List(dir string) ([]FileInfo, error) {
	if r := f.check(OpList, dir, ""); r != nil {
		return nil, pathFault(r, OpList, dir)
	}
	return f.inner.List(dir)
}

func (f *FaultFS) Stat(name string) (FileInfo, error) {
	if r := f.check(OpStat, name, ""); r != nil {
		return FileInfo{}, pathFault(r, OpStat, name)
	}
	return f.inner.Stat(name)
}

func (f *FaultFS) SyncDir(dir string) error {
	if r := f.check(OpSyncDir, dir, ""); r != nil {
		return pathFault(r, OpSyncDir, dir)
	}
	return f.inner.SyncDir(dir)
}

func (f *FaultFS) Lock(name string) (io.Closer, error) {
	if r := f.check(OpLock, name, ""); r != nil {
		return nil, pathFault(r, OpLock, name)
	}
	return f.inner.Lock(name)
}

// faultFile is an open file of a [FaultFS].
type faultFile struct {
	fs *FaultFS
	f  File
}

var _ File = (*faultFile)(nil)

func (f *faultFile) Name() string { return f.f.Name() }

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if r := f.fs.check(OpRead, f.f.Name(), ""); r != nil {
		return 0, pathFault(r, OpRead, f.f.Name())
	}
	return f.f.ReadAt(p, off)
}

func (f *faultFile) Write(p []byte) (int, error) {
	if r := f.fs.check(OpWrite, f.f.Name(), ""); r != nil {
		k := r.tornLen(len(p))
		if k == 0 {
			return 0, pathFault(r, OpWrite, f.f.Name())
		}
		n, err := f.f.Write(p[:k])
		if err != nil {
			return n, err
		}
		return n, pathFault(r, OpWrite, f.f.Name())
	}
	return f.f.Write(p)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if r := f.fs.check(OpWrite, f.f.Name(), ""); r != nil {
		k := r.tornLen(len(p))
		if k == 0 {
			return 0, pathFault(r, OpWrite, f.f.Name())
		}
		n, err := f.f.WriteAt(p[:k], off)
		if err != nil {
			return n, err
		}
		return n, pathFault(r, OpWrite, f.f.Name())
	}
	return f.f.WriteAt(p, off)
}

func (f *faultFile) Sync() error {
	if r := f.fs.check(OpSync, f.f.Name(), ""); r != nil {
		return pathFault(r, OpSync, f.f.Name())
	}
	return f.f.Sync()
}

func (f *faultFile) Truncate(size int64) error {
	if r := f.fs.check(OpTruncate, f.f.Name(), ""); r != nil {
		return pathFault(r, OpTruncate, f.f.Name())
	}
	return f.f.Truncate(size)
}

func (f *faultFile) Size() (int64, error) {
	if r := f.fs.check(OpStat, f.f.Name(), ""); r != nil {
		return 0, pathFault(r, OpStat, f.f.Name())
	}
	return f.f.Size()
}

// Close closes the inner file even when the fault fires, as close(2) frees
// the descriptor whatever it reports.
func (f *faultFile) Close() error {
	if r := f.fs.check(OpClose, f.f.Name(), ""); r != nil {
		return errors.Join(pathFault(r, OpClose, f.f.Name()), f.f.Close())
	}
	return f.f.Close()
}
