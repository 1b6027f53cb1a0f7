package snapshot

import (
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/golden"
	"github.com/stretchr/testify/require"
)

// FuzzDecode feeds arbitrary bytes to Decode. Invariants:
//
//   - nothing panics; an error is a *CorruptError matching ErrCorrupt;
//   - what decodes has exactly (len-10)/46 entries, and Encode of the
//     entries gives back the input byte for byte (the format has one
//     encoding per entry list).
//
// Seeds: the hex files in testdata/ and the inputs below, each one rule
// short of valid.
func FuzzDecode(f *testing.F) {
	golden.AddSeeds(f, "testdata")
	two := Encode(nil, goldenTwo)
	f.Add([]byte{})
	f.Add(two[:9])
	f.Add(two[:56])
	f.Add(resum(append(Encode(nil, goldenTwo), 0)))
	f.Add(resum(append([]byte{0, 1, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff}, two[10:]...)))
	f.Add(resum([]byte{0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe}))
	f.Add(resum([]byte{0, 2, 0, 0, 0, 0, 0, 0, 0, 0}))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := Decode(data)
		if err != nil {
			var ce *CorruptError
			require.ErrorAs(t, err, &ce)
			require.ErrorIs(t, err, ErrCorrupt)
			require.Nil(t, entries)
			return
		}
		require.Len(t, entries, (len(data)-headerLen)/entryLen)
		require.Equal(t, data, Encode(nil, entries))
	})
}
