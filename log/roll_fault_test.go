package log

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// TestFailedRollHeals: a roll whose next segment cannot be created (no
// file descriptor left: EMFILE, as a process at its RLIMIT_NOFILE gets, on
// the .log, the .index or the .timeindex) fails its append with
// ErrStorage and changes nothing: the partition is not failed, the log end
// offset stays, no file of the segment is left behind, and once
// descriptors come back the next append rolls and is appended. Every
// acknowledged record is then in the log once, in order, and after a
// reopen too. On the memory and the OS filesystems, with appends written
// after their validation and overlapped with it, for an append that rolls
// and for Log.Roll.
func TestFailedRollHeals(t *testing.T) {
	for _, fsName := range []string{"memory", "os"} {
		for _, file := range []string{segment.LogSuffix, segment.IndexSuffix, segment.TimeIndexSuffix} {
			for _, how := range []string{"append", "Roll"} {
				t.Run(fmt.Sprintf("%s/%s/%s", fsName, file, how), func(t *testing.T) {
					forEachAppendMode(t, func(t *testing.T, overlap int) {
						testFailedRollHeals(t, fsName, file, how, overlap)
					})
				})
			}
		}
	}
}

func testFailedRollHeals(t *testing.T, fsName, file, how string, overlap int) {
	ctx := context.Background()
	e := newEnv(t)
	e.cfg.OverlapAppendBytes = overlap
	var inner vfs.FS = e.mem
	path := "/data"
	if fsName == "os" {
		inner, path = vfs.Default, filepath.Join(t.TempDir(), "data")
	}
	ffs := vfs.NewFaultFS(inner)
	cfg := e.cfg
	cfg.FS = ffs
	d, err := Open(ctx, path, cfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	createTopic(t, d, "t", 1, map[string]string{"segment.bytes": "2048", "segment.index.bytes": "4096"})
	l := partition(t, d, "t", 0)
	now := e.clock.Now().UnixMilli()

	var acked []string // values by offset
	appendOne := func() (AppendResult, error) {
		b := producerBatch(t, 1, 300, now, record.None)
		res, err := l.Append(b)
		if err == nil {
			require.Equal(t, int64(len(acked)), res.BaseOffset, "offsets stay dense")
			acked = append(acked, string(recordValue(t, b)))
		}
		return res, err
	}
	// Fill the first segment to just below a roll.
	for l.local.active().Size()+int64(len(producerBatch(t, 1, 300, now, record.None))) <= 2048 {
		_, err := appendOne()
		require.NoError(t, err)
	}
	segsBefore := len(l.local.segs())
	leo := l.LogEndOffset()

	// The descriptors are gone: every creation of the file fails.
	// (The rule matches the file's suffix: the OS directory's path holds
	// the test's name.)
	ffs.Inject(vfs.Rule{Op: vfs.OpCreate, Sticky: true, Err: syscall.EMFILE,
		Match: func(_ vfs.Op, p string) bool { return strings.HasSuffix(p, file) }})
	for range 3 {
		if how == "append" {
			_, err = appendOne()
		} else {
			err = l.Roll(ctx)
		}
		require.ErrorIs(t, err, ErrStorage)
		require.ErrorIs(t, err, syscall.EMFILE)
		require.NoError(t, l.Stats().Failed, "a failed roll does not fail the partition")
		require.Equal(t, leo, l.LogEndOffset())
		require.Len(t, l.local.segs(), segsBefore)
		names, err := ffs.List(filepath.Join(path, "t-0"))
		require.NoError(t, err)
		next := fmt.Sprintf("%020d", leo)
		for _, n := range names {
			require.False(t, strings.HasPrefix(n.Name, next+"."), "%s of the segment that was not created is left behind", n.Name)
		}
	}
	require.Equal(t, acked, denseValues(t, l), "what was appended before is read as it was")

	// The descriptors are back: the next append rolls.
	ffs.Clear()
	if how == "Roll" {
		require.NoError(t, l.Roll(ctx))
	}
	_, err = appendOne()
	require.NoError(t, err, "the append after the failed roll rolls")
	require.Len(t, l.local.segs(), segsBefore+1)
	require.Equal(t, leo, l.local.segs()[segsBefore].BaseOffset())
	for range 10 {
		_, err := appendOne()
		require.NoError(t, err)
	}
	require.NoError(t, l.Stats().Failed)
	require.Equal(t, acked, denseValues(t, l))

	require.NoError(t, d.Close())
	d, err = Open(ctx, path, cfg)
	require.NoError(t, err)
	l = partition(t, d, "t", 0)
	require.Equal(t, acked, denseValues(t, l), "after a reopen")
}

// denseValues reads every record value of l, by offset from 0.
func denseValues(t *testing.T, l *Log) []string {
	t.Helper()
	var out []string
	for i, r := range records(t, l, 0) {
		require.Equal(t, int64(i), r.Offset, "offsets are dense and each record is there once")
		out = append(out, string(r.Value))
	}
	return out
}

// recordValue is the value of a one-record batch.
func recordValue(t *testing.T, batch []byte) []byte {
	t.Helper()
	r := record.NewReader(record.ReaderOptions{})
	require.NoError(t, r.Reset(batch))
	require.True(t, r.Next())
	return r.Record().Value
}
