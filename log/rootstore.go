package log

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// readVersionedStore reads the JSON store name (at most limit bytes) into
// doc with decodeVersionedStore. found is false for a missing file (doc
// untouched); a store too large or breaking decodeVersionedStore's rules
// is a [*CorruptStoreError] of store (the store's sentinel).
func readVersionedStore(fsys vfs.FS, name string, limit int64, doc any, version func() *int, want int, store error) (found bool, err error) {
	data, err := readRootFile(fsys, name, limit)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	var tooLarge *storeTooLargeError
	if errors.As(err, &tooLarge) {
		return false, &CorruptStoreError{Store: store, File: name, Reason: tooLarge.Error()}
	}
	if err != nil {
		return false, err
	}
	return true, decodeVersionedStore(name, data, doc, version, want, store)
}

// decodeVersionedStore decodes the JSON store data (the file name) into
// doc, which must have a version field that version returns, refusing
// unknown fields, data after the object and other versions than want: a
// [*CorruptStoreError] of store.
func decodeVersionedStore(name string, data []byte, doc any, version func() *int, want int, store error) error {
	corrupt := func(reason string, err error) error {
		return &CorruptStoreError{Store: store, File: name, Reason: reason, Err: err}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(doc); err != nil {
		return corrupt("not a JSON store: "+err.Error(), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return corrupt("data after the JSON object", nil)
	}
	switch v := version(); {
	case v == nil:
		return corrupt("no version", nil)
	case *v != want:
		return corrupt(fmt.Sprintf("unsupported version %d", *v), nil)
	}
	return nil
}

// CorruptStoreError says which of the directory's store files is unreadable
// and why. It matches Store, the store's sentinel ([ErrCorruptTopicStore],
// [ErrCorruptBrokerConfigStore], [ErrCorruptGroupConfigStore],
// [ErrCorruptClientQuotaStore], [ErrCorruptScramStore]), and Err, the
// cause (a JSON error), if any.
type CorruptStoreError struct {
	Store  error
	File   string
	Reason string
	Err    error
}

func (e *CorruptStoreError) Error() string {
	return fmt.Sprintf("%v %s: %s", e.Store, e.File, e.Reason)
}

// Unwrap returns the cause, if any.
func (e *CorruptStoreError) Unwrap() error { return e.Err }

// Is matches Store.
func (e *CorruptStoreError) Is(target error) bool { return target == e.Store }
