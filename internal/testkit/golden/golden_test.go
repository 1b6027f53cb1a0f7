package golden

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseHex(t *testing.T) {
	tests := []struct {
		in   string
		want []byte
		bad  bool
	}{
		{in: "00 01\n# a comment\nff # trailing\n", want: []byte{0, 1, 0xff}},
		{in: "", want: []byte{}},
		{in: "0", bad: true},
		{in: "zz", bad: true},
	}
	for _, tt := range tests {
		got, err := ParseHex([]byte(tt.in))
		if tt.bad {
			require.Error(t, err, "%q", tt.in)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tt.want, got, "%q", tt.in)
	}
}

func TestHex(t *testing.T) {
	require.Equal(t, []byte{0, 4, 0xff}, Hex("0004 ff # a comment"))
	require.Panics(t, func() { Hex("0") })
}
