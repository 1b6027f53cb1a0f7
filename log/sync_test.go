package log

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// TestSyncMakesDataDurableAndFlushTheIndexes: a Sync fsyncs the active
// segment's .log alone (one fsync where a flush of the segment makes three:
// .log, .index, .timeindex) and the full flush of the segments sealed since;
// the recovery point stops at the active segment's base offset, because its
// indexes are not durable. A crash then loses no synced record: the restart
// rescans the active segment and rebuilds its indexes, and point reads find
// every record. Flush fsyncs the indexes too and moves the recovery point
// to the log end.
func TestSyncMakesDataDurableAndFlushTheIndexes(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	ffs := vfs.NewFaultFS(e.mem)
	e.cfg.FS = ffs
	d := e.open(t)
	createTopic(t, d, "t", 1, map[string]string{"segment.bytes": "20000"})
	l := partition(t, d, "t", 0)
	now := e.clock.Now().UnixMilli()
	for range 5 { // 5 × 6 KB: the log rolls
		_, err := l.Append(producerBatch(t, 50, 100, now, record.None))
		require.NoError(t, err)
	}
	segs := l.local.segs()
	require.Greater(t, len(segs), 1, "the log rolled")
	active := segs[len(segs)-1].BaseOffset()
	require.NoError(t, l.Sync(ctx, l.LogEndOffset()))
	require.Equal(t, active, l.RecoveryPoint(), "the active segment's indexes are not durable")
	require.Equal(t, l.LogEndOffset(), l.DurableOffset())

	// One more append and Sync, no roll: one fsync, of the .log.
	synced := map[string]int{}
	ffs.OnOp(func(op vfs.Op, path string) {
		if op == vfs.OpSync {
			synced[path[strings.LastIndex(path, "."):]]++
		}
	})
	_, err := l.Append(producerBatch(t, 50, 100, now, record.None))
	require.NoError(t, err)
	require.NoError(t, l.Sync(ctx, l.LogEndOffset()))
	ffs.OnOp(nil)
	require.Equal(t, map[string]int{".log": 1}, synced)
	require.Equal(t, active, l.RecoveryPoint())
	end := l.LogEndOffset()

	// A power loss now keeps what was synced.
	crashed := e.mem.CrashClone()
	require.NoError(t, d.Close())
	e.cfg.FS = crashed
	d2 := e.open(t)
	defer func() { require.NoError(t, d2.Close()) }()
	l2 := partition(t, d2, "t", 0)
	require.Equal(t, end, l2.LogEndOffset(), "every synced record survives")
	require.Positive(t, d2.Stats().Recovery.SegmentsRecovered, "the active segment was rescanned")
	for off := range end {
		rec, ok, err := l2.ReadRecord(off)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, off, rec.Offset)
	}

	require.NoError(t, l2.Flush(ctx))
	require.Equal(t, end, l2.RecoveryPoint(), "a flush makes the indexes durable too")
}
