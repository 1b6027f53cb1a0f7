package sharecodec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzDecode feeds arbitrary bytes to the key and both value decoders and
// checks: nothing panics; a failure is a *DecodeError matching ErrInvalid;
// what decodes encodes again to the bytes read (the encoding is
// canonical, but for unknown tagged fields and bytes after the record,
// which Kafka drops too) and decodes to the same record.
func FuzzDecode(f *testing.F) {
	for name := range kafkaRecords() {
		r := readKafkaRecord(f, name)
		f.Add(r.key)
		if r.value != nil {
			f.Add(r.value)
		}
	}
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if k, err := DecodeKey(b); err != nil {
			requireDecodeError(t, err)
		} else {
			again, err := AppendKey(nil, k)
			require.NoError(t, err)
			require.Equal(t, b[:len(again)], again)
		}
		if s, err := DecodeSnapshot(b); err != nil {
			if b != nil {
				requireDecodeError(t, err)
			}
		} else {
			again, err := AppendSnapshot(nil, s)
			require.NoError(t, err)
			s2, err := DecodeSnapshot(again)
			require.NoError(t, err)
			require.Equal(t, s, s2)
			again2, err := AppendSnapshot(nil, s2)
			require.NoError(t, err)
			require.Equal(t, again, again2)
		}
		if u, err := DecodeUpdate(b); err != nil {
			if b != nil {
				requireDecodeError(t, err)
			}
		} else {
			again, err := AppendUpdate(nil, u)
			require.NoError(t, err)
			u2, err := DecodeUpdate(again)
			require.NoError(t, err)
			require.Equal(t, u, u2)
			again2, err := AppendUpdate(nil, u2)
			require.NoError(t, err)
			require.Equal(t, again, again2)
		}
	})
}
