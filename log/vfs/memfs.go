package vfs

import (
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// MemFS is an in-memory [FS] that can simulate a power loss: see
// [MemFS.CrashClone] and the crash model in the package documentation.
// It is safe for concurrent use.
//
// Names are cleaned and taken from the root: "a/b", "/a/b" and "/a/./b" are
// the same file. The root directory always exists. Differences from [Default]
// worth knowing: Open of a directory fails with syscall.EISDIR (there is no
// directory reading through a [File]); permissions do not exist; a file
// grown by Truncate is stored sparsely, so data is kept only up to the
// highest byte written and a preallocated index costs nothing; a file stores
// at most 4 GiB of data (writes beyond fail with syscall.EFBIG), though its
// size, set by Truncate, may be larger.
type MemFS struct {
	clock atomic.Pointer[func() time.Time]

	// mu protects the following, and the entries and modification times of
	// every directory node. Lock order: MemFS.mu, then memNode.mu.
	mu    sync.Mutex
	root  *memNode
	locks map[string]struct{} // held Lock names, cleaned
}

var _ FS = (*MemFS)(nil)

// NewMem returns an empty memory filesystem whose clock is time.Now.
func NewMem() *MemFS {
	m := &MemFS{locks: make(map[string]struct{})}
	m.root = m.newDir()
	return m
}

// SetClock replaces the clock that stamps modification times; nil restores
// time.Now. The clock is called with the MemFS's locks held: it must not call
// the MemFS.
func (m *MemFS) SetClock(now func() time.Time) {
	if now == nil {
		m.clock.Store(nil)
		return
	}
	m.clock.Store(&now)
}

func (m *MemFS) now() time.Time {
	if c := m.clock.Load(); c != nil {
		return (*c)()
	}
	return time.Now()
}

// noneDirty is memNode.dirtyFrom for a file unchanged since its last Sync.
const noneDirty = math.MaxInt64

// memNode is a file or a directory: the inode, which open files and
// directory entries point at.
type memNode struct {
	isDir bool

	// Directory state, protected by MemFS.mu.
	children       map[string]*memNode // current entries
	syncedChildren map[string]*memNode // entries as of the last SyncDir
	dirModTime     time.Time

	// File state.
	mu         sync.RWMutex // protects the following
	data       []byte       // current contents up to the highest byte written; len(data) <= size
	size       int64        // current logical size; bytes past len(data) read as zeros
	synced     []byte       // contents as of the last Sync, stored the same way
	syncedSize int64
	dirtyFrom  int64 // lowest offset changed since the last Sync; noneDirty if none
	modTime    time.Time
}

func (m *MemFS) newDir() *memNode {
	return &memNode{
		isDir:          true,
		children:       make(map[string]*memNode),
		syncedChildren: make(map[string]*memNode),
		dirModTime:     m.now(),
	}
}

func (m *MemFS) newFile() *memNode {
	return &memNode{dirtyFrom: noneDirty, modTime: m.now()}
}

// splitPath cleans name and splits it into its components below the root.
func splitPath(name string) []string {
	p := path.Clean("/" + filepath.ToSlash(name))
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

// walkLocked returns the node at the components parts.
// REQUIRES: m.mu is held.
func (m *MemFS) walkLocked(parts []string) (*memNode, error) {
	n := m.root
	for _, p := range parts {
		if !n.isDir {
			return nil, syscall.ENOTDIR
		}
		c, ok := n.children[p]
		if !ok {
			return nil, fs.ErrNotExist
		}
		n = c
	}
	return n, nil
}

// parentLocked returns the directory that holds name and name's base name.
// REQUIRES: m.mu is held.
func (m *MemFS) parentLocked(name string) (*memNode, string, error) {
	parts := splitPath(name)
	if len(parts) == 0 {
		return nil, "", syscall.EINVAL // the root has no parent
	}
	dir, err := m.walkLocked(parts[:len(parts)-1])
	if err != nil {
		return nil, "", err
	}
	if !dir.isDir {
		return nil, "", syscall.ENOTDIR
	}
	return dir, parts[len(parts)-1], nil
}

func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentLocked(name)
	if err != nil {
		if err == syscall.EINVAL {
			err = fs.ErrExist // the root exists
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if _, ok := dir.children[base]; ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	}
	n := m.newFile()
	dir.children[base] = n
	dir.dirModTime = m.now()
	return &memFile{fs: m, n: n, name: name, writable: true}, nil
}

func (m *MemFS) Open(name string) (File, error) { return m.open(name, false) }

func (m *MemFS) OpenReadWrite(name string) (File, error) { return m.open(name, true) }

func (m *MemFS) open(name string, writable bool) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.walkLocked(splitPath(name))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if n.isDir {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	}
	f := &memFile{fs: m, n: n, name: name, writable: writable}
	if writable {
		n.mu.RLock()
		f.pos = n.size
		n.mu.RUnlock()
	}
	return f, nil
}

func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentLocked(name)
	if err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	n, ok := dir.children[base]
	if !ok {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	if n.isDir && len(n.children) > 0 {
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.ENOTEMPTY}
	}
	delete(dir.children, base)
	dir.dirModTime = m.now()
	return nil
}

// RemoveAll removes name and everything below it from its parent directory;
// the removal is one directory entry, durable after SyncDir of the parent.
// Removing the root is refused with syscall.EINVAL.
func (m *MemFS) RemoveAll(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentLocked(name)
	switch {
	case err == syscall.EINVAL:
		return &fs.PathError{Op: "removeall", Path: name, Err: err}
	case err != nil:
		return nil // a missing parent: nothing to remove
	}
	if _, ok := dir.children[base]; ok {
		delete(dir.children, base)
		dir.dirModTime = m.now()
	}
	return nil
}

func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.renameLocked(oldname, newname); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return nil
}

// renameLocked follows rename(2): a file replaces a file, a directory
// replaces an empty directory, and a directory cannot move below itself.
// REQUIRES: m.mu is held.
func (m *MemFS) renameLocked(oldname, newname string) error {
	oldDir, oldBase, err := m.parentLocked(oldname)
	if err != nil {
		return err
	}
	n, ok := oldDir.children[oldBase]
	if !ok {
		return fs.ErrNotExist
	}
	newDir, newBase, err := m.parentLocked(newname)
	if err != nil {
		return err
	}
	if n.isDir {
		oldParts, newParts := splitPath(oldname), splitPath(newname)
		if len(newParts) > len(oldParts) && slices.Equal(oldParts, newParts[:len(oldParts)]) {
			return syscall.EINVAL
		}
	}
	if target, ok := newDir.children[newBase]; ok {
		if target == n {
			return nil
		}
		switch {
		case target.isDir && !n.isDir:
			return syscall.EISDIR
		case !target.isDir && n.isDir:
			return syscall.ENOTDIR
		case target.isDir && len(target.children) > 0:
			return syscall.ENOTEMPTY
		}
	}
	delete(oldDir.children, oldBase)
	newDir.children[newBase] = n
	now := m.now()
	oldDir.dirModTime, newDir.dirModTime = now, now
	return nil
}

// MkdirAll creates dir and its missing parents. Like every directory entry,
// a new directory is durable only after SyncDir of its parent.
func (m *MemFS) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.root
	for _, p := range splitPath(dir) {
		c, ok := n.children[p]
		if !ok {
			c = m.newDir()
			n.children[p] = c
			n.dirModTime = c.dirModTime
		}
		if !c.isDir {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		n = c
	}
	return nil
}

func (m *MemFS) List(dir string) ([]FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.walkLocked(splitPath(dir))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	if !n.isDir {
		return nil, &fs.PathError{Op: "readdirent", Path: dir, Err: syscall.ENOTDIR}
	}
	names := slices.Sorted(maps.Keys(n.children))
	infos := make([]FileInfo, len(names))
	for i, name := range names {
		infos[i] = n.children[name].infoLocked(name)
	}
	return infos, nil
}

func (m *MemFS) Stat(name string) (FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	parts := splitPath(name)
	n, err := m.walkLocked(parts)
	if err != nil {
		return FileInfo{}, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	base := "/"
	if len(parts) > 0 {
		base = parts[len(parts)-1]
	}
	return n.infoLocked(base), nil
}

// infoLocked describes n under the entry name.
// REQUIRES: MemFS.mu is held.
func (n *memNode) infoLocked(name string) FileInfo {
	if n.isDir {
		return FileInfo{Name: name, IsDir: true, ModTime: n.dirModTime}
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return FileInfo{Name: name, Size: n.size, ModTime: n.modTime}
}

// SyncDir makes dir's current entries its durable ones.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.walkLocked(splitPath(dir))
	if err != nil {
		return &fs.PathError{Op: "sync", Path: dir, Err: err}
	}
	if !n.isDir {
		return &fs.PathError{Op: "sync", Path: dir, Err: syscall.ENOTDIR}
	}
	n.syncedChildren = maps.Clone(n.children)
	return nil
}

// Lock takes the lock in this MemFS, creating the file if needed (an entry
// that, as with Create, is durable only after SyncDir).
func (m *MemFS) Lock(name string) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := "/" + strings.Join(splitPath(name), "/")
	if _, ok := m.locks[key]; ok {
		return nil, &fs.PathError{Op: "lock", Path: name, Err: ErrLocked}
	}
	dir, base, err := m.parentLocked(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if n, ok := dir.children[base]; !ok {
		dir.children[base] = m.newFile()
		dir.dirModTime = m.now()
	} else if n.isDir {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	}
	m.locks[key] = struct{}{}
	return &memLock{fs: m, key: key}, nil
}

type memLock struct {
	fs     *MemFS
	key    string
	closed atomic.Bool
}

func (l *memLock) Close() error {
	if l.closed.Swap(true) {
		return nil
	}
	l.fs.mu.Lock()
	defer l.fs.mu.Unlock()
	delete(l.fs.locks, l.key)
	return nil
}

// CrashClone returns a new, independent MemFS holding what a power loss now
// would leave: only durable directory entries, starting from the root, and
// every file reached with exactly its synced contents and size (see the crash
// model in the package documentation). Files and directories that are
// unreachable through durable entries are not in the clone; open files and
// locks are not carried over. The clone's state is fully durable, and it
// shares the clock.
func (m *MemFS) CrashClone() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := &MemFS{locks: make(map[string]struct{})}
	c.clock.Store(m.clock.Load())
	seen := make(map[*memNode]*memNode)
	c.root = cloneDurableLocked(m.root, seen)
	return c
}

// cloneDurableLocked copies the durable state of n and, for a directory, of
// everything its durable entries reach. seen maps the nodes copied so far to
// their copies, so that a file reached twice stays one file; a directory
// reached twice (possible when renames of directories were made durable in
// some directories only) is skipped the second time, which keeps the clone
// a tree. REQUIRES: MemFS.mu is held.
func cloneDurableLocked(n *memNode, seen map[*memNode]*memNode) *memNode {
	if c, ok := seen[n]; ok {
		return c
	}
	c := &memNode{isDir: n.isDir}
	seen[n] = c
	if n.isDir {
		c.children = make(map[string]*memNode, len(n.syncedChildren))
		c.dirModTime = n.dirModTime
		for _, name := range slices.Sorted(maps.Keys(n.syncedChildren)) {
			child := n.syncedChildren[name]
			if _, dup := seen[child]; dup && child.isDir {
				continue
			}
			c.children[name] = cloneDurableLocked(child, seen)
		}
		c.syncedChildren = maps.Clone(c.children)
		return c
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	c.data = slices.Clone(n.synced)
	c.synced = slices.Clone(n.synced)
	c.size, c.syncedSize = n.syncedSize, n.syncedSize
	c.dirtyFrom = noneDirty
	c.modTime = n.modTime
	return c
}
