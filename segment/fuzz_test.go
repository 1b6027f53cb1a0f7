package segment

import (
	"errors"
	"testing"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// FuzzRecover recovers a .log made of arbitrary bytes. Invariants: no panic;
// Recover either fails with a typed error (legacy format) and truncates
// nothing, or succeeds and leaves a .log of exactly
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
		writeFile(t, mem, "/p/"+FileName(0, LogSuffix), data)
		cfg := testConfig()
		cfg.IndexIntervalBytes = 64
		cfg.RecoveryBufferBytes = 4096
		s, err := Open(mem, "/p", 0, cfg, OpenOptions{Active: true})
		require.NotNil(t, s, "open fails only in ways recovery repairs: %v", err)
		defer s.Close()
		res, err := s.Recover(RecoverOptions{})
		if err != nil {
			require.ErrorIs(t, err, ErrLegacyFormat, "untyped recovery failure")
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

// FuzzSealedRead reads a sealed segment whose .log is arbitrary bytes and
// whose .index is missing, so that the first read rebuilds it from those
// bytes (no recovery rescans a sealed segment). Invariants: no panic; every
// read either fails with an error matching ErrCorruptLog (typed
// corruption) or ErrLegacyFormat, never an untyped one, or returns whole
// batches whose headers
// parse, whose offsets increase, and the first of which ends at or after
// the offset asked for; VerifyCRC on them is nil or matches
// record.ErrCRC; the tail and time lookups fail only with typed errors.
func FuzzSealedRead(f *testing.F) {
	golden := readHexBytes(f, "testdata/golden/00000000000000001000.log.hex")
	f.Add(golden, int64(1000))
	f.Add(golden[:len(golden)/2], int64(1000))
	f.Add(append(batchAt(f, 0, 3, 10, 1), append(make([]byte, 61), batchAt(f, 3, 2, 10, 5)...)...), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, base int64) {
		if base < 0 || base > 1<<40 {
			return
		}
		mem := vfs.NewMem()
		require.NoError(t, mem.MkdirAll("/p"))
		writeFile(t, mem, "/p/"+FileName(base, LogSuffix), data)
		cfg := testConfig()
		cfg.IndexIntervalBytes = 64
		s, err := Open(mem, "/p", base, cfg, OpenOptions{})
		require.NoError(t, err)
		defer s.Close()
		typed := func(err error) {
			if err != nil && !errors.Is(err, ErrCorruptLog) && !errors.Is(err, ErrLegacyFormat) {
				t.Fatalf("untyped error %v", err)
			}
		}
		off := base
		for range 200 {
			sl, err := s.Read(off, 4096, s.Size(), true)
			if err != nil {
				typed(err)
				off++
				continue
			}
			if sl == nil {
				break
			}
			b, err := sl.Bytes(nil)
			require.NoError(t, err)
			prev := base - 1
			for pos := 0; pos < len(b); {
				n, err := record.BatchSize(b[pos:])
				require.NoError(t, err)
				h, err := record.ParseHeader(b[pos : pos+n])
				require.NoError(t, err)
				require.Greater(t, h.BaseOffset, prev)
				require.GreaterOrEqual(t, h.LastOffset(), h.BaseOffset)
				if pos == 0 {
					require.GreaterOrEqual(t, h.LastOffset(), off)
				}
				prev = h.LastOffset()
				pos += n
			}
			if err := sl.VerifyCRC(); err != nil {
				require.ErrorIs(t, err, record.ErrCorrupt)
			}
			sl.Release()
			off = prev + 1
		}
		_, err = s.NextOffset()
		typed(err)
		_, _, err = s.FindOffsetByTimestamp(0, base)
		if err != nil && !errors.Is(err, record.ErrCorrupt) && !errors.Is(err, record.ErrTooLarge) && !errors.Is(err, ErrLegacyFormat) {
			t.Fatalf("untyped error %v", err)
		}
	})
}
