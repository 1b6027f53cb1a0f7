package record

import (
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"
)

// TestLZ4LevelsAsKafka: as Kafka's Lz4BlockOutputStream, only the default
// level (9) uses lz4's fast compressor; every other level uses the
// high-compression one (0 is record.DefaultLevel); 18 is refused.
func TestLZ4LevelsAsKafka(t *testing.T) {
	for _, tc := range []struct {
		level int
		want  lz4.CompressionLevel
	}{
		{DefaultLevel, lz4.Fast},
		{9, lz4.Fast},
		{1, lz4.Level1},
		{8, lz4.Level8},
		{10, lz4.Level9},
		{17, lz4.Level9},
	} {
		got, err := lz4Level(tc.level)
		require.NoError(t, err, "level %d", tc.level)
		require.Equal(t, tc.want, got, "level %d", tc.level)
	}
	for _, bad := range []int{18, -2} {
		_, err := lz4Level(bad)
		require.Error(t, err, "level %d", bad)
	}
}
