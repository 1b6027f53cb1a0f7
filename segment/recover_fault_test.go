package segment

import (
	"bytes"
	"errors"
	"syscall"
	"testing"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/stretchr/testify/require"
)

// TestRecoverSealedSegmentWithTxnIndex is a regression test: recovering an
// inactive segment (one the recovery point falls in, with later segments
// after it) that has a .txnindex failed with index.ErrReadOnly, because the
// .txnindex stayed opened read-only while Recover truncated it. Found by
// the kill -9 harness (internal/testkit/crashtest).
func TestRecoverSealedSegmentWithTxnIndex(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s := create(t, e, 0, testConfig())
		batches := fill(t, s, 0, 4, 5, 100, 1000)
		want := []index.AbortedTxn{{ProducerID: 7, FirstOffset: 0, LastOffset: 4, LastStableOffset: 5}}
		require.NoError(t, s.AppendAbortedTxn(want[0]))
		require.NoError(t, s.Seal())
		require.NoError(t, s.Close())

		r, err := Open(e.fs, e.dir, 0, testConfig(), OpenOptions{Active: false})
		require.NoError(t, err)
		res, err := r.Recover(RecoverOptions{})
		require.NoError(t, err, "an inactive segment with a .txnindex recovers")
		require.Equal(t, int64(20), res.NextOffset)
		got, _, err := r.AppendAbortedTxns(nil, 0, 20)
		require.NoError(t, err)
		require.Equal(t, want, got, "the entries below the end are kept")
		// Replay may restore a lost entry into a recovered segment.
		more := index.AbortedTxn{ProducerID: 7, FirstOffset: 10, LastOffset: 14, LastStableOffset: 15}
		require.NoError(t, r.AppendAbortedTxn(more))
		require.Equal(t, bytes.Join(batches, nil), readAll(t, r, 0))
		require.NoError(t, r.Close())
	})
}

// TestRecoverFaults fails each filesystem operation recovery makes, once,
// with ENOSPC and with EIO: Recover returns the error (never a panic, never
// success with a damaged result), and a later Recover on a healthy
// filesystem still finds every batch.
func TestRecoverFaults(t *testing.T) {
	ops := []vfs.Op{vfs.OpOpen, vfs.OpCreate, vfs.OpRead, vfs.OpWrite, vfs.OpTruncate, vfs.OpSync, vfs.OpClose, vfs.OpStat}
	faults := 0
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		for _, op := range ops {
			for nth := 1; ; nth++ {
				mem := vfs.NewMem()
				require.NoError(t, mem.MkdirAll("/p-0"))
				e := testFS{fs: mem, dir: "/p-0", mem: mem}
				s := create(t, e, 0, testConfig())
				batches := fill(t, s, 0, 6, 5, 300, 1000)
				require.NoError(t, s.AppendAbortedTxn(index.AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 9, LastStableOffset: 10}))
				require.NoError(t, s.Seal())
				require.NoError(t, s.Close())
				// A torn tail to cut, so that recovery truncates too.
				f, err := mem.OpenReadWrite(path(e, 0, LogSuffix))
				require.NoError(t, err)
				_, err = f.WriteAt([]byte{0, 0, 0, 0, 0, 0, 0, 30, 0, 0}, int64(len(bytes.Join(batches, nil))))
				require.NoError(t, err)
				require.NoError(t, f.Close())

				ffs := vfs.NewFaultFS(mem)
				ffs.Inject(vfs.Rule{Op: op, Nth: nth, Err: errno})
				fe := testFS{fs: ffs, dir: "/p-0"}
				var recErr, closeErr error
				r, err := Open(fe.fs, fe.dir, 0, testConfig(), OpenOptions{Active: false})
				if r != nil {
					_, recErr = r.Recover(RecoverOptions{})
					closeErr = r.Close()
				}
				if ffs.Injected() == 0 {
					break // recovery makes fewer than nth such operations
				}
				faults++
				require.Error(t, errors.Join(err, recErr, closeErr), "%v #%d failed with %v and nobody said so", op, nth, errno)
				// The healthy filesystem recovers it all.
				h, err := Open(mem, "/p-0", 0, testConfig(), OpenOptions{Active: true})
				if err != nil {
					require.NotNil(t, h, "%v #%d: %v", op, nth, err)
				}
				res, err := h.Recover(RecoverOptions{})
				require.NoError(t, err, "%v #%d with %v", op, nth, errno)
				require.Equal(t, int64(30), res.NextOffset, "%v #%d with %v", op, nth, errno)
				require.Equal(t, bytes.Join(batches, nil), readAll(t, h, 0))
				got, _, err := h.AppendAbortedTxns(nil, 0, 30)
				require.NoError(t, err)
				require.Len(t, got, 1)
				require.NoError(t, h.Close())
			}
		}
	}
	t.Logf("%d faults injected", faults)
}
