package checkpoint

import (
	"errors"
	"fmt"
)

// Sentinel errors. Compare with [errors.Is]: they are returned wrapped, with
// the file and the values involved.
var (
	// ErrCorrupt means a file's contents break its format: a wrong version,
	// a count line that disagrees with the entries, a malformed line or
	// number, an invalid topic name, a file over the size limit. Returned
	// as a [*FormatError]. A missing file is not corrupt: each reader says
	// what it returns then.
	ErrCorrupt = errors.New("checkpoint: corrupt file")

	// ErrInvalid means a value handed to a writer (or to
	// [LeaderEpochCache.Assign], [MetaProperties.Validate], [ParseTopicID])
	// cannot be represented in Kafka's format: an invalid topic name, a
	// negative partition, epoch or offset where Kafka forbids one, the zero
	// topic id, an incomplete meta.properties. Nothing is written.
	ErrInvalid = errors.New("checkpoint: invalid value")
)

// FormatError reports a file that breaks its format. It matches
// [ErrCorrupt] under [errors.Is].
type FormatError struct {
	// File is the path the reader was given.
	File string
	// Line is the 1-based line number of the offending line, or 0 when the
	// problem is not one line's (a count mismatch is reported on the count
	// line, 2).
	Line int
	// Reason says which rule is broken, with the values found.
	Reason string
}

func (e *FormatError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("checkpoint: corrupt file %s: line %d: %s", e.File, e.Line, e.Reason)
	}
	return fmt.Sprintf("checkpoint: corrupt file %s: %s", e.File, e.Reason)
}

// Unwrap returns [ErrCorrupt].
func (e *FormatError) Unwrap() error { return ErrCorrupt }

func corruptf(file string, line int, format string, args ...any) error {
	return &FormatError{File: file, Line: line, Reason: fmt.Sprintf(format, args...)}
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}
