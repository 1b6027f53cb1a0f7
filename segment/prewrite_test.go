package segment

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/record"
)

// TestPrewrite walks a batch through Prewrite and AppendPrewritten, and
// another through Prewrite and DiscardPrewrite: readers see nothing of a
// prewritten batch until its header is written, the appended bytes are
// those of a plain Append, and a discarded body leaves the file as it was
// (cut back, or zeros where the file is preallocated).
func TestPrewrite(t *testing.T) {
	for _, prealloc := range []bool{false, true} {
		forEachFS(t, func(t *testing.T, e testFS) {
			cfg := testConfig()
			cfg.Preallocate, cfg.SegmentBytes = prealloc, 64<<10
			s := create(t, e, 0, cfg)
			defer func() { require.NoError(t, s.Close()) }()
			b1, b2, b3 := batchAt(t, 0, 3, 50, 1000), batchAt(t, 3, 4, 50, 1000), batchAt(t, 7, 2, 50, 1000)
			require.NoError(t, s.Append(b1, header(t, b1)))
			s.Publish()

			require.NoError(t, s.Prewrite(b2))
			require.Equal(t, int64(len(b1)), s.Size(), "a prewrite appends nothing")
			require.Equal(t, b1, readAll(t, s, 0))
			require.NoError(t, s.AppendPrewritten(b2, header(t, b2)))
			s.Publish()
			require.Equal(t, append(bytes.Clone(b1), b2...), readAll(t, s, 0), "the bytes of a plain Append")

			end := int64(len(b1) + len(b2))
			require.NoError(t, s.Prewrite(b3))
			require.NoError(t, s.DiscardPrewrite(len(b3)))
			require.Equal(t, end, s.Size())
			if prealloc {
				require.Equal(t, cfg.SegmentBytes, fileSize(t, e, s.LogFile()), "a preallocated file keeps its size")
				tail := make([]byte, len(b3))
				_, err := s.log.ReadAt(tail, end)
				require.NoError(t, err)
				require.Equal(t, make([]byte, len(b3)), tail, "and zeros past its batches")
			} else {
				require.Equal(t, end, fileSize(t, e, s.LogFile()), "the file is cut back")
			}
			// The next batch goes where the discarded one would have.
			require.NoError(t, s.Append(b3, header(t, b3)))
			require.Equal(t, end+int64(len(b3)), s.Size())
		})
	}
}

// TestPrewriteThenCrash: a process killed between Prewrite and
// AppendPrewritten leaves the body in the file with a zero header in front
// of it; recovery cuts it off, so a batch never validated is never read.
func TestPrewriteThenCrash(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		cfg := testConfig()
		s := create(t, e, 0, cfg)
		b1, b2 := batchAt(t, 0, 3, 50, 1000), batchAt(t, 3, 4, 50, 1000)
		require.NoError(t, s.Append(b1, header(t, b1)))
		require.NoError(t, s.Prewrite(b2))
		// The process dies; its files stay as they are (Close writes the
		// indexes, which recovery rebuilds anyway, and leaves the .log).
		require.NoError(t, s.Close())
		require.Equal(t, int64(len(b1)+len(b2)), fileSize(t, e, s.LogFile()), "the body is in the file")

		// The next process opens them: Open finds the damaged tail, and
		// the log recovers the segment.
		again, err := Open(e.fs, e.dir, 0, cfg, OpenOptions{Active: true})
		require.NotNil(t, again, "%v", err)
		require.ErrorIs(t, err, record.ErrCorrupt)
		defer func() { require.NoError(t, again.Close()) }()
		res, err := again.Recover(RecoverOptions{})
		require.NoError(t, err)
		require.Equal(t, int64(len(b1)), res.ValidBytes)
		require.Equal(t, int64(len(b2)), res.TruncatedBytes)
		require.Equal(t, int64(3), res.NextOffset)
		require.ErrorIs(t, res.Cause, record.ErrCorrupt, "a zero batch length is corrupt")
		require.Equal(t, b1, readAll(t, again, 0))
	})
}
