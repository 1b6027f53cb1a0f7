package sharecodec

import (
	"errors"

	"github.com/kafkalite/kafkalite/internal/wire"
)

// Sentinel errors. Compare with [errors.Is].
var (
	// ErrInvalid matches everything this package refuses: every decoding
	// failure (a [*DecodeError]: input too short for the next field, a
	// negative length other than the null marker, a null where the schema
	// forbids one, a length or count past the end of the input or over
	// Kafka's limits, a malformed unsigned varint, a known tagged field of
	// the wrong size, an unknown record type or value version, an empty
	// value) and every value an encoder cannot write (a group id over
	// 32767 bytes, an unknown record type). Encoders append nothing when
	// they fail.
	ErrInvalid = codec.ErrInvalid

	// ErrCorrupt matches decoding failures only (every [*DecodeError]),
	// not an encoder's refusal.
	ErrCorrupt = codec.ErrCorrupt

	// ErrUnsupportedVersion matches a value whose version prefix is not
	// one Kafka 4.4 reads (only 0), inside a [*DecodeError]. Kafka's
	// coordinator skips such a record while loading the partition.
	ErrUnsupportedVersion = codec.ErrUnsupportedVersion

	// ErrUnknownType matches a key whose record type is neither
	// [TypeShareSnapshot] nor [TypeShareUpdate], inside a [*DecodeError].
	// Kafka's coordinator skips such a record while loading the
	// partition.
	ErrUnknownType = errors.New("sharecodec: unknown record type")

	// ErrTombstone is what [DecodeSnapshot] and [DecodeUpdate] return for
	// a nil value: a null record value, which deletes the share-partition's
	// state. It is not a decoding failure and matches neither [ErrInvalid]
	// nor [ErrCorrupt].
	ErrTombstone = errors.New("sharecodec: null value (tombstone)")
)

// codec gives this package's errors their name and sentinels.
var codec = wire.NewCodec("sharecodec", "invalid record")

// DecodeError describes input that failed to decode: what was being read,
// the byte position and why. It matches [ErrInvalid] and [ErrCorrupt],
// and [ErrUnsupportedVersion] or [ErrUnknownType] where they apply.
type DecodeError = wire.DecodeError
