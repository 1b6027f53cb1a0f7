package txncodec

import (
	"errors"

	"github.com/kafkalite/kafkalite/internal/wire"
)

// Sentinel errors. Compare with [errors.Is]: decoders return them inside a
// [*DecodeError] that says what was being read and where.
var (
	// ErrCorrupt matches every decoding failure: input too short for the
	// next field, a negative length other than the null marker (-1, or 0 in
	// flexible encodings), a null where the schema forbids one, a length or
	// count past the end of the input, a malformed unsigned varint, a string
	// over 32767 bytes, a known tagged field of the wrong size, a
	// transaction status outside 0–7, and a version Kafka does not read
	// (which also matches [ErrUnsupportedVersion]).
	ErrCorrupt = codec.ErrCorrupt

	// ErrUnsupportedVersion means a version this package does not handle:
	// from a decoder, a key version other than 0 or a value version outside
	// 0–1 (inside a [*DecodeError], together with [ErrCorrupt]); from
	// [AppendValueVersion], a version argument outside 0–1.
	ErrUnsupportedVersion = codec.ErrUnsupportedVersion

	// ErrInvalid means a value handed to an encoder cannot be written: a
	// string longer than 32767 bytes, an array longer than 2^31-2, a
	// transaction status outside 0–7, or a tagged field with a non-default
	// value at version 0, which has no tagged fields. Nothing is appended.
	// It does not match [ErrCorrupt].
	ErrInvalid = codec.ErrInvalid

	// ErrTombstone is what [ParseValue] returns for a nil value: a null
	// record value (a tombstone), which deletes the transactional id. It is
	// not a decoding failure and does not match [ErrCorrupt]. Callers that
	// handle tombstones check for a nil value before calling ParseValue.
	ErrTombstone = errors.New("txncodec: null value (tombstone)")
)

// codec gives this package's errors their name and sentinels.
var codec = wire.NewCodec("txncodec", "value not representable")

// DecodeError describes input that failed to decode: what was being read,
// the byte position and why. It unwraps to [ErrCorrupt] and, for a version
// the package does not read, to [ErrUnsupportedVersion].
type DecodeError = wire.DecodeError
