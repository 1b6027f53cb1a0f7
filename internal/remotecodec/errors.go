package remotecodec

import (
	"errors"

	"github.com/kafkalite/kafkalite/internal/wire"
)

// Sentinel errors. Compare with [errors.Is]: decoders return them inside a
// [*DecodeError] that says what was being read and where.
var (
	// ErrCorrupt matches every decoding failure: input too short for the
	// next field, a malformed unsigned varint, a null where the schema
	// forbids one, a length or count past the end of the input, a string
	// over 32767 bytes, a known tagged field of the wrong size, bytes left
	// after the record, a state id Kafka does not know, a segment without
	// leader epochs or with offsets Kafka refuses, and an unknown frame
	// version, apiKey or version (which also match [ErrUnsupportedVersion]
	// or [ErrUnknownAPIKey]).
	ErrCorrupt = codec.ErrCorrupt

	// ErrUnsupportedVersion means a version this package does not handle:
	// from [ParseValue] (inside a [*DecodeError], together with
	// [ErrCorrupt]) a frame version other than 1 or a record version the
	// record's schema does not have; from [AppendValueVersion], a version
	// argument the record's schema does not have.
	ErrUnsupportedVersion = codec.ErrUnsupportedVersion

	// ErrUnknownAPIKey means a value whose apiKey is none of the four
	// record types (0–3), inside a [*DecodeError] together with
	// [ErrCorrupt]. Kafka's RemoteLogMetadataSerde fails on it the same way.
	ErrUnknownAPIKey = errors.New("remotecodec: unknown apiKey")

	// ErrInvalid means a record handed to an encoder cannot be written: a
	// string longer than 32767 bytes, bytes or an array longer than 2^31-2,
	// a state id Kafka does not know, a segment without leader epochs or
	// with a negative start offset or an end offset below it (Kafka cannot
	// build such a RemoteLogSegmentMetadata and its metadata consumer
	// stops on reading one), a tagged field set at a version that lacks
	// it, or a nil record. Nothing is appended. It does not match
	// [ErrCorrupt].
	ErrInvalid = codec.ErrInvalid
)

// codec gives this package's errors their name and sentinels.
var codec = wire.NewCodec("remotecodec", "record not representable")

// DecodeError describes input that failed to decode: what was being read,
// the byte position and why. It unwraps to [ErrCorrupt] and, for a version
// the package does not read, to [ErrUnsupportedVersion].
type DecodeError = wire.DecodeError
