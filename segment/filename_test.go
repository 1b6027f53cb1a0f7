package segment

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFileNames(t *testing.T) {
	tests := []struct {
		name   string
		offset int64
		suffix string
	}{
		{"00000000000000000000.log", 0, ".log"},
		{"00000000000000368769.index", 368769, ".index"},
		{"09223372036854775807.timeindex", 1<<63 - 1, ".timeindex"},
		{"00000000000000001234.snapshot", 1234, ".snapshot"},
		{"00000000000000000042.log.deleted", 42, ".log.deleted"},
		{"00000000000000000042.txnindex.swap", 42, ".txnindex.swap"},
	}
	for _, tc := range tests {
		off, suffix, err := ParseFileName(tc.name)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.offset, off)
		require.Equal(t, tc.suffix, suffix)
		if len(tc.suffix) > 0 && (tc.suffix == LogSuffix || tc.suffix == IndexSuffix || tc.suffix == TimeIndexSuffix || tc.suffix == SnapshotSuffix) {
			require.Equal(t, tc.name, FileName(off, suffix))
		}
	}
	for _, bad := range []string{
		"", "0.log", "0000000000000000000.log", "000000000000000000000.log", "0000000000000000000a.log",
		"-0000000000000000001.log", "00000000000000000000", "00000000000000000000log", "99999999999999999999.log",
		"leader-epoch-checkpoint", "+0000000000000000001.log",
	} {
		_, _, err := ParseFileName(bad)
		require.ErrorIs(t, err, ErrBadFileName, bad)
	}
}
