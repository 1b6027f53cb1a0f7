package segment

import (
	"errors"
	"testing"

	"github.com/kafkalite/kafkalite/internal/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// FuzzRecover recovers a .log made of arbitrary bytes. Invariants: no panic;
// Recover either fails with a typed error (legacy format, offset overflow)
// and truncates nothing, or succeeds and leaves a .log of exactly
// ValidBytes whose batches all validate, read back whole, and are indexed by
// entries that point at batch starts; a second recovery finds nothing to
// truncate.
func FuzzRecover(f *testing.F) {
	f.Add(readHexBytes(f, "testdata/golden/00000000000000001000.log.hex"))
	f.Add(append(batchAt(f, 0, 3, 10, 1), make([]byte, 40)...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := vfs.NewMem()
		require.NoError(t, mem.MkdirAll("/p"))
		file, err := mem.Create("/p/" + FileName(0, LogSuffix))
		require.NoError(t, err)
		_, err = file.Write(data)
		require.NoError(t, err)
		require.NoError(t, file.Close())
		cfg := testConfig()
		cfg.IndexIntervalBytes = 64
		cfg.RecoveryBufferBytes = 4096
		s, err := Open(mem, "/p", 0, cfg, OpenOptions{Active: true})
		require.NotNil(t, s, "open fails only in ways recovery repairs: %v", err)
		defer s.Close()
		res, err := s.Recover(RecoverOptions{})
		if err != nil {
			require.True(t, errors.Is(err, ErrLegacyFormat) || errors.Is(err, ErrOffsetOverflow), "untyped recovery failure %v", err)
			return
		}
		require.Equal(t, int64(len(data)), res.ValidBytes+res.TruncatedBytes)
		require.Equal(t, string(data[:res.ValidBytes]), string(readAll(t, s, 0)))
		for pos := int64(0); pos < res.ValidBytes; {
			n, err := record.BatchSize(data[pos:])
			require.NoError(t, err)
			_, err = record.Validate(data[pos : pos+int64(n)])
			require.NoError(t, err)
			pos += int64(n)
		}
		checkIndexes(t, s)
		again, err := s.Recover(RecoverOptions{})
		require.NoError(t, err)
		require.Zero(t, again.TruncatedBytes)
		require.Equal(t, res.NextOffset, again.NextOffset)
	})
}
