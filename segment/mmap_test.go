package segment

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/record"
)

// view reads a slice with View, reporting whether it was viewed in place.
func view(t *testing.T, sl *Slice) ([]byte, bool) {
	t.Helper()
	var got []byte
	ok, err := sl.View(func(b []byte) error {
		got = bytes.Clone(b)
		return nil
	})
	require.NoError(t, err)
	return got, ok
}

func TestSliceView(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s := create(t, e, 0, testConfig())
		batches := fill(t, s, 0, 10, 5, 100, 1000)
		sl, err := s.Read(20, 1<<20, s.Size(), true)
		require.NoError(t, err)
		got, ok := view(t, sl)
		if e.mem != nil {
			require.False(t, ok, "the memory FS cannot be mapped")
			sl.Release()
			require.NoError(t, s.Close())
			return
		}
		require.True(t, ok)
		require.Equal(t, bytes.Join(batches[4:], nil), got)

		// What is appended later is in the mapping of the active segment.
		more := fill(t, s, 50, 2, 5, 100, 2000)
		sl2, err := s.Read(50, 1<<20, s.Size(), true)
		require.NoError(t, err)
		got, ok = view(t, sl2)
		require.True(t, ok)
		require.Equal(t, bytes.Join(more, nil), got)
		sl2.Release()

		// A slice truncated away is not viewed (ReadAt reports the
		// missing bytes); one below the cut still is.
		low, err := s.Read(0, 1, s.Size(), true)
		require.NoError(t, err)
		_, err = s.TruncateTo(30)
		require.NoError(t, err)
		_, ok = view(t, sl)
		require.False(t, ok)
		got, ok = view(t, low)
		require.True(t, ok)
		require.Equal(t, batches[0], got)
		sl.Release()

		// Sealed, deleted and closed: a live slice still views its bytes.
		require.NoError(t, s.Seal())
		require.NoError(t, s.RenameForDeletion())
		require.NoError(t, s.Remove())
		got, ok = view(t, low)
		require.True(t, ok)
		require.Equal(t, batches[0], got)
		low.Release()
		_, err = low.View(func([]byte) error { return nil })
		require.ErrorIs(t, err, ErrClosed)
		_, err = e.fs.Stat(path(e, 0, LogSuffix) + DeletedSuffix)
		require.ErrorIs(t, err, fs.ErrNotExist)
	})
}

// TestViewRacesWriter runs readers that read and view slices while the
// writer appends, truncates, seals, reactivates and finally closes and
// removes the segment (run it with -race). A view that ran while no
// truncation happened since its Read must see exactly the batches Read
// found; a SIGBUS or SIGSEGV would kill the test: the design (see
// "Memory-mapped reads" in mmap.go) rules them out.
func TestViewRacesWriter(t *testing.T) {
	e := fsKinds(t)[0]
	cfg := testConfig()
	cfg.Preallocate = true // Seal and Close trim the file too
	cfg.SegmentBytes = 1 << 20
	s := create(t, e, 0, cfg)
	var next atomic.Int64        // the writer's next offset
	var truncations atomic.Int64 // a sequence count: odd while one runs
	var viewed, touched atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				gen := truncations.Load()
				n := next.Load()
				if n == 0 {
					continue
				}
				sl, err := s.Read(rand.Int64N(n), 1+rand.IntN(8<<10), s.Size(), true)
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil || sl == nil {
					continue // the writer truncated under the pread fallback
				}
				ok, err := sl.View(func(b []byte) error {
					var sum int64
					for _, c := range b { // touch every byte
						sum += int64(c)
					}
					touched.Add(sum)
					if gen%2 != 0 || truncations.Load() != gen {
						return nil // the batches may have moved
					}
					for pos := 0; pos < len(b); {
						size, err := record.BatchSize(b[pos:])
						if err != nil {
							return err
						}
						if pos+size > len(b) {
							return record.ErrTruncated
						}
						if _, err := record.Validate(b[pos : pos+size]); err != nil {
							return err
						}
						pos += size
					}
					return nil
				})
				if ok && err != nil && gen%2 == 0 && truncations.Load() == gen {
					t.Errorf("view of [%d, +%d): %v", sl.Position, sl.Size, err)
				}
				if ok {
					viewed.Add(1)
				}
				sl.Release()
			}
		}()
	}
	for round := range 1500 {
		n := next.Load()
		b := batchAt(t, n, 1+rand.IntN(20), rand.IntN(300), 1000+n)
		require.NoError(t, s.Append(b, header(t, b)))
		next.Store(header(t, b).NextOffset())
		switch {
		case round%37 == 36:
			require.NoError(t, s.Seal())
			_, err := s.TruncateTo(next.Load()) // active again, nothing cut
			require.NoError(t, err)
		case round%11 == 10 && n > 0:
			to := rand.Int64N(n)
			truncations.Add(1)
			_, err := s.TruncateTo(to)
			truncations.Add(1)
			require.NoError(t, err)
			got, err := s.NextOffset()
			require.NoError(t, err)
			next.Store(got)
		}
	}
	require.NoError(t, s.RenameForDeletion())
	require.NoError(t, s.Remove()) // closes; the readers' slices keep it
	close(done)
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("%d views in place, %d truncations", viewed.Load(), truncations.Load()/2)
	require.NotZero(t, viewed.Load(), "some reads were viewed in place")
	_, err := e.fs.Stat(path(e, 0, LogSuffix) + DeletedSuffix)
	require.ErrorIs(t, err, fs.ErrNotExist, "removed after the last slice")
}
