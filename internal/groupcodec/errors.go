package groupcodec

import "github.com/kafkalite/kafkalite/internal/wire"

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
	ErrCorrupt = codec.ErrCorrupt

	// ErrUnsupportedVersion means a version this package does not handle:
	// from a decoder (inside a [*DecodeError], together with [ErrCorrupt])
	// a version prefix above what Kafka reads or a negative one; from an
	// explicit-version encoder such as [AppendOffsetCommitValueVersion], a
	// version argument outside the schema's valid versions.
	ErrUnsupportedVersion = codec.ErrUnsupportedVersion

	// ErrInvalid means a value handed to an encoder cannot be represented
	// in Kafka's format: a string longer than 32767 bytes (Kafka's limit for
	// every string field, flexible or not) or a byte slice or array longer
	// than 2^31-2 (its flexible count, n+1, must fit in an int32). Nothing
	// is appended. It does not match [ErrCorrupt].
	ErrInvalid = codec.ErrInvalid
)

// codec gives this package's errors their name and sentinels.
var codec = wire.NewCodec("groupcodec", "value not representable")

// DecodeError describes input that failed to decode: what was being read,
// the byte position and why. It unwraps to [ErrCorrupt] and, for a version
// the package does not read, to [ErrUnsupportedVersion].
type DecodeError = wire.DecodeError

func unsupportedf(format string, args ...any) error { return codec.Unsupportedf(format, args...) }
