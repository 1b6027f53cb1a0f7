package remotecodec

import (
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/golden"
	"github.com/stretchr/testify/require"
)

// FuzzDecode feeds arbitrary bytes to ParseValue and checks: nothing
// panics; a failure is a *DecodeError matching ErrCorrupt; a value that
// decodes, encoded again at the version it was read at, encodes without
// error and decodes to the same record and version. The encoding need not
// be the input: Kafka's reader accepts over-long varints, booleans other
// than 1 and unknown tags, which the encoder writes canonically or drops.
// Seeds: every golden file.
func FuzzDecode(f *testing.F) {
	golden.AddSeeds(f, golden.Dir)
	for _, s := range []string{"", "01", "01 02 00", "01 04 00", "00 00 00", "01 00 01"} {
		f.Add(h(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, version, err := parseValue(b)
		if err != nil {
			requireDecodeError(t, err)
			return
		}
		again, err := AppendValueVersion(nil, rec, version)
		require.NoError(t, err)
		rec2, version2, err := parseValue(again)
		require.NoError(t, err)
		require.Equal(t, version, version2)
		require.Equal(t, rec, rec2)
	})
}
