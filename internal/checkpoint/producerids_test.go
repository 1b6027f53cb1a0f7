package checkpoint

import (
	"io/fs"
	"testing"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/stretchr/testify/require"
)

func TestNextProducerID(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/d"))
	_, err := ReadNextProducerID(mem, "/d/"+ProducerIDsFile)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.NoError(t, WriteNextProducerID(mem, "/d/"+ProducerIDsFile, 3000))
	require.Equal(t, "0\n3000\n", string(readAll(t, mem, "/d/"+ProducerIDsFile)))
	n, err := ReadNextProducerID(mem, "/d/"+ProducerIDsFile)
	require.NoError(t, err)
	require.Equal(t, int64(3000), n)
	require.ErrorIs(t, WriteNextProducerID(mem, "/d/"+ProducerIDsFile, -1), ErrInvalid)
}

func TestParseNextProducerID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0\n3000\n", 3000, true},
		{"0\r\n7", 7, true},
		{"0\n9223372036854775807\n", 9223372036854775807, true},
		{"", 0, false},
		{"1\n3000\n", 0, false},
		{"0\n", 0, false},
		{"0\n-1\n", 0, false},
		{"0\nx\n", 0, false},
		{"0\n5\n6\n", 0, false},
		{"0\n5\n\n", 0, false},
		{"0\n9223372036854775808\n", 0, false},
	} {
		got, err := parseNextProducerID("f", []byte(tc.in))
		if !tc.ok {
			requireFormatError(t, err)
			continue
		}
		require.NoError(t, err, "%q", tc.in)
		require.Equal(t, tc.want, got)
	}
}

func FuzzNextProducerID(f *testing.F) {
	addSeeds(f, "0\n3000\n", "0\r\n7", "0\n+5\n", "0\n-0\n", "0\n5\n\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := parseNextProducerID("f", data)
		if err != nil {
			requireFormatError(t, err)
			return
		}
		require.GreaterOrEqual(t, n, int64(0))
		enc := appendNextProducerID(nil, n)
		again, err := parseNextProducerID("f", enc)
		require.NoError(t, err)
		require.Equal(t, n, again)
		require.Equal(t, enc, appendNextProducerID(nil, again))
	})
}
