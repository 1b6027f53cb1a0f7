package wire

import (
	"errors"
	"fmt"
)

// Codec is a codec package's identity in its errors: its name and its
// three sentinels, which the package exports under its own names
// (groupcodec.ErrCorrupt is its Codec's ErrCorrupt) and documents.
type Codec struct {
	Name string
	// ErrCorrupt matches every decoding failure ([*DecodeError]).
	ErrCorrupt error
	// ErrUnsupportedVersion matches a decoder's failure about a version
	// (with ErrCorrupt) and an encoder's refusal of a version argument.
	ErrUnsupportedVersion error
	// ErrInvalid matches an encoder's refusal of a value Kafka's format
	// cannot represent ([Writer]'s errors). It does not match ErrCorrupt.
	ErrInvalid error
}

// NewCodec makes the sentinels of the codec called name: "<name>: corrupt
// data", "<name>: unsupported version" and "<name>: <invalid>".
func NewCodec(name, invalid string) *Codec {
	return &Codec{Name: name,
		ErrCorrupt:            errors.New(name + ": corrupt data"),
		ErrUnsupportedVersion: errors.New(name + ": unsupported version"),
		ErrInvalid:            errors.New(name + ": " + invalid)}
}

// DecodeError describes input that failed to decode. It unwraps to its
// codec's ErrCorrupt and, for a version the codec does not read, to its
// ErrUnsupportedVersion; Also adds a sentinel of the codec's own
// (remotecodec's unknown apiKey).
type DecodeError struct {
	// What names the structure and version being decoded and, when known,
	// the field: "GroupMetadataValue v3: members[1].clientHost".
	What string
	// Offset is the byte position, counted from the start of the input
	// given to the decoder, where the offending field starts.
	Offset int
	// Reason says which rule is broken, with the values found.
	Reason string
	// Also is a further sentinel the error matches, or nil.
	Also error

	codec       *Codec
	unsupported bool
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: corrupt %s at byte %d: %s", e.codec.Name, e.What, e.Offset, e.Reason)
}

// Unwrap returns the codec's ErrCorrupt, with its ErrUnsupportedVersion
// when the error is about the version, and Also.
func (e *DecodeError) Unwrap() []error {
	errs := []error{e.codec.ErrCorrupt}
	if e.unsupported {
		errs = append(errs, e.codec.ErrUnsupportedVersion)
	}
	if e.Also != nil {
		errs = append(errs, e.Also)
	}
	return errs
}

// DecodeError returns r's first failure as a *DecodeError of the codec
// (also matching also, when not nil), or a nil error, never a typed nil.
func (c *Codec) DecodeError(r *Reader, also error) error {
	f := r.Err
	if f == nil {
		return nil
	}
	return &DecodeError{What: f.What, Offset: f.Offset, Reason: f.Reason, Also: also, codec: c, unsupported: f.UnsupportedVersion}
}

// Writer returns a Writer appending to dst whose errors wrap the codec's
// ErrInvalid.
func (c *Codec) Writer(dst []byte, what string) Writer {
	return Writer{B: dst, What: what, Invalid: c.ErrInvalid}
}

// Unsupportedf is an encoder's refusal of a version argument: the codec's
// ErrUnsupportedVersion with the message.
func (c *Codec) Unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", c.ErrUnsupportedVersion, fmt.Sprintf(format, args...))
}
