package groupcodec

import (
	"errors"
	"fmt"
)

// Sentinel errors. Compare with [errors.Is]: decoders return them inside a
// [*DecodeError] that says what was being read and where.
var (
	// ErrCorrupt matches every decoding failure: input too short for the
	// next field, a negative length other than the null marker -1 (0 in
	// flexible encodings) or a null where the schema forbids one, a length
	// or array count past the end of the input, a malformed unsigned
	// varint, a string over 32767 bytes, a tagged field whose size
	// disagrees with its type, and a version above the ones Kafka reads
	// (which also matches [ErrUnsupportedVersion]).
	ErrCorrupt = errors.New("groupcodec: corrupt data")

	// ErrUnsupportedVersion means a version this package does not handle:
	// from a decoder (inside a [*DecodeError], together with [ErrCorrupt])
	// a version prefix above what Kafka reads or a negative one; from an
	// explicit-version encoder such as [AppendOffsetCommitValueVersion], a
	// version argument outside the schema's valid versions.
	ErrUnsupportedVersion = errors.New("groupcodec: unsupported version")

	// ErrInvalid means a value handed to an encoder cannot be represented
	// in Kafka's format: a string longer than 32767 bytes (Kafka's limit for
	// every string field, flexible or not) or a byte slice or array longer
	// than 2^31-2 (its flexible count, n+1, must fit in an int32). Nothing
	// is appended. It does not match [ErrCorrupt].
	ErrInvalid = errors.New("groupcodec: value not representable")
)

// DecodeError describes input that failed to decode. It unwraps to
// [ErrCorrupt] and, for an unknown version, to [ErrUnsupportedVersion].
type DecodeError struct {
	// What names the structure and version being decoded and, when known,
	// the field: "GroupMetadataValue v3: members[1].clientHost".
	What string
	// Offset is the byte position, counted from the start of the input
	// given to the decoder, where the offending field starts.
	Offset int
	// Reason says which rule is broken, with the values found.
	Reason string

	unsupported bool
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("groupcodec: corrupt %s at byte %d: %s", e.What, e.Offset, e.Reason)
}

// Unwrap returns [ErrCorrupt], and [ErrUnsupportedVersion] when the error is
// about the version.
func (e *DecodeError) Unwrap() []error {
	if e.unsupported {
		return []error{ErrCorrupt, ErrUnsupportedVersion}
	}
	return []error{ErrCorrupt}
}

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupportedVersion, fmt.Sprintf(format, args...))
}
