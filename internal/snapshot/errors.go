package snapshot

import (
	"errors"
	"fmt"
)

// Sentinel errors. Compare with [errors.Is]: they are returned wrapped, with
// the file and the values involved.
var (
	// ErrCorrupt means a snapshot's bytes break the format: too short, an
	// unknown version, a CRC mismatch, an entry count that disagrees with
	// the bytes present, a file over the size limit. Returned as a
	// [*CorruptError]. Kafka deletes such a snapshot and rebuilds the
	// producer state from the log. A missing file is not corrupt: [Read]
	// returns an error matching fs.ErrNotExist.
	ErrCorrupt = errors.New("snapshot: corrupt producer snapshot")

	// ErrInvalid means a value handed to [Write] cannot be written: a
	// negative offset. Nothing is written.
	ErrInvalid = errors.New("snapshot: invalid value")
)

// CorruptError reports a snapshot whose bytes break the format. It matches
// [ErrCorrupt] under [errors.Is].
type CorruptError struct {
	// File is the path [Read] was given, or "" from [Decode].
	File string
	// Reason says which rule is broken, with the values found.
	Reason string
}

func (e *CorruptError) Error() string {
	if e.File == "" {
		return "snapshot: corrupt producer snapshot: " + e.Reason
	}
	return fmt.Sprintf("snapshot: corrupt producer snapshot %s: %s", e.File, e.Reason)
}

// Unwrap returns [ErrCorrupt].
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

func corruptf(format string, args ...any) *CorruptError {
	return &CorruptError{Reason: fmt.Sprintf(format, args...)}
}
