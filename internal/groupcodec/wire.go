package groupcodec

import "github.com/kafkalite/kafkalite/internal/wire"

// reader and writer are the shared primitive encodings (internal/wire)
// with this package's errors.
type reader struct{ wire.Reader }

type writer struct{ wire.Writer }

func newReader(b []byte, name string) reader { return reader{wire.NewReader(b, name)} }

func newWriter(dst []byte, what string) writer {
	return writer{wire.Writer{B: dst, What: what, Invalid: ErrInvalid}}
}

// error returns the first failure as a [*DecodeError], or a nil error
// (never a typed nil).
func (r *reader) error() error {
	f := r.Err
	if f == nil {
		return nil
	}
	return &DecodeError{What: f.What, Offset: f.Offset, Reason: f.Reason, unsupported: f.UnsupportedVersion}
}
