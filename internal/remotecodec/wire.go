package remotecodec

import (
	"encoding/binary"

	"github.com/kafkalite/kafkalite/internal/wire"
)

// reader and writer are the shared primitive encodings (internal/wire)
// with this package's errors and Kafka's uuid type.
type reader struct {
	wire.Reader
	unknownKey bool // the failure is an unknown apiKey
}

type writer struct{ wire.Writer }

func newReader(b []byte, name string) reader { return reader{Reader: wire.NewReader(b, name)} }

func newWriter(dst []byte, what string) writer { return writer{codec.Writer(dst, what)} }

// uuid reads Kafka's uuid: 16 bytes, the most significant long first.
func (r *reader) uuid(field string) [16]byte {
	var u [16]byte
	msb := r.Int64(field)
	lsb := r.Int64(field)
	if !r.OK() {
		return u
	}
	binary.BigEndian.PutUint64(u[:8], uint64(msb))
	binary.BigEndian.PutUint64(u[8:], uint64(lsb))
	return u
}

// bool reads Kafka's boolean: one byte, anything but 0 is true (as Java's
// readByte() != 0).
func (r *reader) bool(field string) bool { return r.Int8(field) != 0 }

// uuid appends u as Kafka's uuid.
func (w *writer) uuid(u [16]byte) { w.B = append(w.B, u[:]...) }

// bool appends Kafka's boolean: 1 or 0.
func (w *writer) bool(v bool) {
	if v {
		w.Int8(1)
		return
	}
	w.Int8(0)
}

// error returns the first failure as a [*DecodeError] (also matching
// [ErrUnknownAPIKey] when it is about the apiKey), or a nil error.
func (r *reader) error() error {
	var also error
	if r.unknownKey {
		also = ErrUnknownAPIKey
	}
	return codec.DecodeError(&r.Reader, also)
}
