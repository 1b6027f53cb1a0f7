package sharecodec

import "github.com/kafkalite/kafkalite/internal/wire"

// reader and writer are the shared primitive encodings (internal/wire)
// with this package's errors.
type reader struct{ wire.Reader }

type writer struct{ wire.Writer }

func newReader(b []byte, name string) reader { return reader{wire.NewReader(b, name)} }

func newWriter(dst []byte, what string) writer { return writer{codec.Writer(dst, what)} }

// error returns the first failure as a [*DecodeError] that also matches
// also (ErrInvalid, or a sentinel that wraps it), or a nil error.
func (r *reader) error(also error) error { return codec.DecodeError(&r.Reader, also) }
