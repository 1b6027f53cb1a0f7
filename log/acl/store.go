package acl

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// The ACL store: the directory's ACLs, in one file in the root of the log
// directory, next to the topic store.
//
//	<log.dir>/kafkalite-acls.json
//
// Kafka keeps them as AccessControlEntryRecords in its KRaft metadata
// log; kafkalite keeps them in this file. Its format, version 1 (UTF-8
// JSON; key order and whitespace do not matter):
//
//	{
//	  "version": 1,
//	  "acls": [
//	    {"resourceType": "TOPIC", "resourceName": "orders-", "patternType": "PREFIXED",
//	     "principal": "User:alice", "host": "*", "operation": "WRITE", "permissionType": "ALLOW"}
//	  ]
//	}
//
//   - version: 1. A reader refuses other versions; any change of format
//     bumps it.
//   - acls: the bindings, each with Kafka's names for its enums, each one
//     that [Binding.Validate] accepts, none twice. Written sorted.
//
// Unknown fields are an error, as is anything else that breaks these
// rules: a [*CorruptStoreError]. The file is written whole (a .tmp file,
// fsynced, renamed over it, the directory fsynced), so after a crash it is
// the old one or the new one.

const (
	storeFile    = "kafkalite-acls.json"
	storeVersion = 1
	// maxStoreBytes bounds the store: a creation that would make it
	// larger is refused ([ErrStoreFull]), and a load reads no more.
	maxStoreBytes = 64 << 20
	// maxBatch is Kafka's bound on the ACLs one request creates or
	// deletes (its controller's MAX_RECORDS_PER_USER_OP).
	maxBatch = 10000
)

// ErrCorruptStore is matched by [*CorruptStoreError].
var ErrCorruptStore = errors.New("acl: corrupt ACL store")

// CorruptStoreError says which ACL store file is unreadable and why. It
// matches [ErrCorruptStore] and Err, the cause, if any.
type CorruptStoreError struct {
	File   string
	Reason string
	Err    error
}

func (e *CorruptStoreError) Error() string {
	return fmt.Sprintf("acl: corrupt ACL store %s: %s", e.File, e.Reason)
}

// Unwrap returns the cause, if any.
func (e *CorruptStoreError) Unwrap() error { return e.Err }

// Is matches ErrCorruptStore.
func (e *CorruptStoreError) Is(target error) bool { return target == ErrCorruptStore }

// ErrStoreFull is kafkalite's own bound (Kafka has none): a creation that
// would make the ACL store larger than 64 MiB is refused, and nothing is
// created. POLICY_VIOLATION on the wire.
var ErrStoreFull = errors.New("acl: the ACL store would exceed 64 MiB")

// ErrBatchTooLarge is a CreateAcls that would add more than 10000 ACLs at
// once, refused whole as Kafka's controller refuses it
// (POLICY_VIOLATION, "Unable to perform excessively large batch
// operation."). A deletion of more than 10000 is an [*InvalidError], as
// in Kafka.
var ErrBatchTooLarge = errors.New("acl: Unable to perform excessively large batch operation.")

type storedBinding struct {
	ResourceType string `json:"resourceType"`
	ResourceName string `json:"resourceName"`
	PatternType  string `json:"patternType"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permissionType"`
}

type storeDoc struct {
	Version *int            `json:"version"`
	ACLs    []storedBinding `json:"acls"`
}

func byName[T ~int8](names []string, s string) (T, bool) {
	i := slices.Index(names, s)
	return T(i), i >= 0
}

func loadStore(fsys vfs.FS, dir string) ([]Binding, error) {
	name := filepath.Join(dir, storeFile)
	f, err := fsys.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	size, err := f.Size()
	if err == nil && size > maxStoreBytes {
		err = &CorruptStoreError{File: name, Reason: fmt.Sprintf("%d bytes, more than the %d allowed", size, maxStoreBytes)}
	}
	var data []byte
	if err == nil {
		data = make([]byte, size)
		var n int
		if n, err = f.ReadAt(data, 0); err == io.EOF && int64(n) == size {
			err = nil
		}
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return nil, err
	}
	return decodeStore(name, data)
}

func decodeStore(name string, data []byte) ([]Binding, error) {
	corrupt := func(reason string, err error) ([]Binding, error) {
		return nil, &CorruptStoreError{File: name, Reason: reason, Err: err}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc storeDoc
	if err := dec.Decode(&doc); err != nil {
		return corrupt("not a JSON ACL store: "+err.Error(), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return corrupt("data after the JSON object", nil)
	}
	if doc.Version == nil {
		return corrupt("no version", nil)
	}
	if *doc.Version != storeVersion {
		return corrupt(fmt.Sprintf("unsupported version %d", *doc.Version), nil)
	}
	out := make([]Binding, 0, len(doc.ACLs))
	seen := make(map[Binding]bool, len(doc.ACLs))
	for i, s := range doc.ACLs {
		rt, ok1 := byName[ResourceType](resourceTypeNames[:], s.ResourceType)
		pt, ok2 := byName[PatternType](patternTypeNames[:], s.PatternType)
		op, ok3 := byName[Operation](operationNames[:], s.Operation)
		pm, ok4 := byName[PermissionType](permissionTypeNames[:], s.Permission)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return corrupt(fmt.Sprintf("ACL %d: an unknown name", i), nil)
		}
		b := Binding{ResourceType: rt, ResourceName: s.ResourceName, PatternType: pt, Principal: s.Principal,
			Host: s.Host, Operation: op, Permission: pm}
		if err := b.Validate(); err != nil {
			return corrupt(fmt.Sprintf("ACL %d: %v", i, err), err)
		}
		if seen[b] {
			return corrupt(fmt.Sprintf("ACL %d twice", i), nil)
		}
		seen[b] = true
		out = append(out, b)
	}
	return out, nil
}

// encodeStore is the store's bytes for bindings (sorted: the same ACLs give
// the same bytes).
func encodeStore(bindings []Binding) ([]byte, error) {
	doc := storeDoc{Version: new(int), ACLs: make([]storedBinding, 0, len(bindings))}
	*doc.Version = storeVersion
	for _, b := range bindings {
		doc.ACLs = append(doc.ACLs, storedBinding{ResourceType: b.ResourceType.String(), ResourceName: b.ResourceName,
			PatternType: b.PatternType.String(), Principal: b.Principal, Host: b.Host, Operation: b.Operation.String(),
			Permission: b.Permission.String()})
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	return append(data, '\n'), err
}

func compareBindings(a, b Binding) int {
	return cmp.Or(cmp.Compare(a.ResourceType, b.ResourceType), cmp.Compare(a.ResourceName, b.ResourceName),
		cmp.Compare(a.PatternType, b.PatternType), cmp.Compare(a.Principal, b.Principal), cmp.Compare(a.Host, b.Host),
		cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Permission, b.Permission))
}

// resourceKey groups the bindings of one resource pattern.
type resourceKey struct {
	t    ResourceType
	p    PatternType
	name string
}

// index is an immutable set of bindings, arranged for Authorize.
type index struct {
	bindings []Binding // sorted by compareBindings
	set      map[Binding]struct{}
	byRes    map[resourceKey][]Binding
	// maxPrefix is the longest prefixed pattern's name per type: no
	// longer prefix of a resource's name needs a lookup.
	maxPrefix map[ResourceType]int
}

func newIndex(bindings []Binding) *index {
	x := &index{bindings: slices.SortedFunc(slices.Values(bindings), compareBindings),
		set: make(map[Binding]struct{}, len(bindings)), byRes: map[resourceKey][]Binding{}, maxPrefix: map[ResourceType]int{}}
	for _, b := range x.bindings {
		x.set[b] = struct{}{}
		k := resourceKey{b.ResourceType, b.PatternType, b.ResourceName}
		x.byRes[k] = append(x.byRes[k], b)
		if b.PatternType == PatternPrefixed {
			x.maxPrefix[b.ResourceType] = max(x.maxPrefix[b.ResourceType], len(b.ResourceName))
		}
	}
	return x
}

// store is a directory's ACLs: a Dir service, one per directory, shared
// by its Authorizers. Reads take the current index without a lock;
// changes are serialised by writeMu, written to the file, then published.
type store struct {
	fsys     vfs.FS
	dir      string
	maxBytes int

	writeMu sync.Mutex // serialises changes, from the file's write to their publication
	closed  bool       // guarded by writeMu
	cur     atomic.Pointer[index]
}

func openStore(fsys vfs.FS, dir string) (*store, error) {
	bindings, err := loadStore(fsys, dir)
	if err != nil {
		return nil, err
	}
	s := &store{fsys: fsys, dir: dir, maxBytes: maxStoreBytes}
	s.cur.Store(newIndex(bindings))
	return s, nil
}

// Close ends changes; the ACLs stay readable.
func (s *store) Close() error {
	s.writeMu.Lock()
	s.closed = true
	s.writeMu.Unlock()
	return nil
}

// errClosed is returned by changes after Close.
var errClosed = errors.New("acl: the ACL store is closed")

// replaceLocked writes next as the store, atomically and durably, and
// publishes it. REQUIRES: s.writeMu held.
func (s *store) replaceLocked(next []Binding) error {
	x := newIndex(next)
	data, err := encodeStore(x.bindings)
	if err != nil {
		return err
	}
	if len(data) > s.maxBytes {
		return ErrStoreFull
	}
	if err := checkpoint.WriteFileAtomic(s.fsys, filepath.Join(s.dir, storeFile), data); err != nil {
		// The failed write may have left the new store in place
		// (renamed, not synced): put the old one back.
		old, eerr := encodeStore(s.cur.Load().bindings)
		if eerr == nil {
			eerr = checkpoint.WriteFileAtomic(s.fsys, filepath.Join(s.dir, storeFile), old)
		}
		return errors.Join(err, eerr)
	}
	s.cur.Store(x)
	return nil
}

// create adds the valid bindings, all or none: it returns one error per
// binding (nil: created, or there already) and an error for the whole
// call (nothing created).
func (s *store) create(bindings []Binding) ([]error, error) {
	errs := make([]error, len(bindings))
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	cur := s.cur.Load()
	var added []Binding
	adding := map[Binding]bool{}
	for i, b := range bindings {
		if errs[i] = b.Validate(); errs[i] != nil {
			continue
		}
		if _, ok := cur.set[b]; ok || adding[b] {
			continue
		}
		if len(added) == maxBatch {
			return nil, ErrBatchTooLarge
		}
		adding[b] = true
		added = append(added, b)
	}
	if len(added) == 0 {
		return errs, nil
	}
	if err := s.replaceLocked(append(slices.Clip(cur.bindings), added...)); err != nil {
		return nil, err
	}
	return errs, nil
}

// DeleteResult is one deletion filter's outcome: the bindings it removed,
// or why it failed (nothing removed for it).
type DeleteResult struct {
	Deleted []Binding
	Err     error
}

// delete removes the bindings each valid filter matches, all in one
// write. The error is for the whole call (nothing removed).
func (s *store) delete(filters []Filter) ([]DeleteResult, error) {
	out := make([]DeleteResult, len(filters))
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	cur := s.cur.Load()
	removed := map[Binding]bool{}
	for i, f := range filters {
		if out[i].Err = f.validateDelete(); out[i].Err != nil {
			continue
		}
		for _, b := range cur.bindings {
			if !f.Matches(b) {
				continue
			}
			if len(removed) >= maxBatch {
				return nil, invalid("Cannot remove more than %d acls in a single delete operation.", maxBatch)
			}
			removed[b] = true
			out[i].Deleted = append(out[i].Deleted, b)
		}
	}
	if len(removed) == 0 {
		return out, nil
	}
	next := make([]Binding, 0, len(cur.bindings)-len(removed))
	for _, b := range cur.bindings {
		if !removed[b] {
			next = append(next, b)
		}
	}
	if err := s.replaceLocked(next); err != nil {
		return nil, err
	}
	return out, nil
}

// describe returns the bindings f matches, sorted.
func (s *store) describe(f Filter) []Binding {
	var out []Binding
	for _, b := range s.cur.Load().bindings {
		if f.Matches(b) {
			out = append(out, b)
		}
	}
	return out
}
