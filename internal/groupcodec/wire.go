package groupcodec

import "github.com/kafkalite/kafkalite/internal/wire"

// reader and writer are the shared primitive encodings (internal/wire)
// with this package's errors.
type reader struct{ wire.Reader }

type writer struct{ wire.Writer }

func newReader(b []byte, name string) reader { return reader{wire.NewReader(b, name)} }

func newWriter(dst []byte, what string) writer { return writer{codec.Writer(dst, what)} }

// error returns the first failure as a [*DecodeError], or a nil error.
func (r *reader) error() error { return codec.DecodeError(&r.Reader, nil) }

// valueReader starts reading the value b of record type t, of the family
// (e.g. "ConsumerGroup", in words "consumer group") whose types names
// holds (types lists them for the error): the reader past the version, and the version
// read; an unknown type, a short value or a version other than 0 (every
// value of these families has only version 0) is the error returned.
func valueReader(t RecordType, b []byte, names map[RecordType]string, family, words, types string) (reader, int16, error) {
	name, ok := names[t]
	r := newReader(b, name+"Value")
	if !ok {
		r.Name = family + "Value"
		r.FailAt(0, "", "record type %d is not a %s type (%s)", t, words, types)
		return r, -1, r.error()
	}
	version := r.Int16("version")
	if r.OK() && version != 0 {
		r.FailVersion(version, "0")
	}
	if !r.OK() {
		return r, version, r.error()
	}
	r.Ver = int(version)
	return r, version, nil
}
