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
// doc, which must have a version field that version returns, refusing
// unknown fields, data after the object and other versions than want.
// found is false for a missing file (doc untouched); a store that breaks
// these rules is corrupt(reason, cause).
func readVersionedStore(fsys vfs.FS, name string, limit int64, doc any, version func() *int, want int,
	corrupt func(reason string, err error) error) (found bool, err error) {
	data, err := readRootFile(fsys, name, limit)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	var tooLarge *storeTooLargeError
	if errors.As(err, &tooLarge) {
		return false, corrupt(tooLarge.Error(), nil)
	}
	if err != nil {
		return false, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(doc); err != nil {
		return false, corrupt("not a JSON store: "+err.Error(), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return false, corrupt("data after the JSON object", nil)
	}
	switch v := version(); {
	case v == nil:
		return false, corrupt("no version", nil)
	case *v != want:
		return false, corrupt(fmt.Sprintf("unsupported version %d", *v), nil)
	}
	return true, nil
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
