package log

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/remotecodec"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/remote/remotetest"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
	"github.com/stretchr/testify/require"
)

// tieredEnv is an env whose Dirs have tiered storage: a FileStore on the
// same memory filesystem (under /remote), so that a crash clone takes both.
// Passes run only when the test calls TierNow.
func tieredEnv(t *testing.T) *env {
	e := newEnv(t)
	e.cfg.RemoteLogStorageSystemEnable = true
	e.cfg.RemoteLogManagerTaskInterval = time.Hour
	e.cfg.RemoteStorage = remote.NewFileStore(e.mem, "/remote")
	return e
}

// tieredEnvOn is a tieredEnv on the memory filesystem, or on the operating
// system's with the directory and the store in a temporary directory.
func tieredEnvOn(t *testing.T, osfs bool) *env {
	e := tieredEnv(t)
	if osfs {
		root := t.TempDir()
		e.cfg.FS = vfs.Default
		e.cfg.RemoteStorage = remote.NewFileStore(vfs.Default, filepath.Join(root, "remote"))
		e.dirPath = filepath.Join(root, "data")
	}
	return e
}

// tieredProps are a tiered topic's: segments of about 3 batches.
var tieredProps = map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000"}

// fill appends n uncompressed batches of 5 records of 100 bytes.
func fill(t *testing.T, l *Log, n int) {
	t.Helper()
	for range n {
		_, err := l.Append(producerBatch(t, 5, 100, l.now().UnixMilli(), record.None))
		require.NoError(t, err)
	}
}

// requireCopies checks that the Dir's finished copies of l are exactly its
// sealed segments, each whole in the store: the .log and indexes equal to
// the local files.
func requireCopies(t *testing.T, d *Dir, l *Log) {
	t.Helper()
	copies, err := d.RemoteSegments(l.Topic(), l.Partition())
	require.NoError(t, err)
	segs := l.local.segs()
	require.Len(t, copies, len(segs)-1, "one copy per sealed segment")
	for i, m := range copies {
		require.Equal(t, segs[i].BaseOffset(), m.StartOffset)
		require.Equal(t, segs[i+1].BaseOffset()-1, m.EndOffset)
		require.Equal(t, remote.CopySegmentFinished, m.State)
		require.NotEmpty(t, m.LeaderEpochs)
		for _, f := range []struct {
			ext   string
			fetch func() (io.ReadCloser, error)
		}{
			{".log", func() (io.ReadCloser, error) {
				return d.cfg.RemoteStorage.FetchLogSegment(context.Background(), m, 0, -1)
			}},
			{".index", func() (io.ReadCloser, error) {
				return d.cfg.RemoteStorage.FetchIndex(context.Background(), m, remote.OffsetIndex)
			}},
			{".timeindex", func() (io.ReadCloser, error) {
				return d.cfg.RemoteStorage.FetchIndex(context.Background(), m, remote.TimeIndex)
			}},
		} {
			r, err := f.fetch()
			require.NoError(t, err, "%s %s", m.ID, f.ext)
			got, err := io.ReadAll(r)
			r.Close()
			require.NoError(t, err)
			want := readFile(t, d.fsys, filepath.Join(l.Dir(), segment.FileName(m.StartOffset, f.ext)))
			require.Equal(t, want, got, "%s %s", m.ID, f.ext)
		}
	}
}

func readFile(t *testing.T, fsys vfs.FS, name string) []byte {
	t.Helper()
	f, err := fsys.Open(name)
	require.NoError(t, err)
	defer f.Close()
	size, err := f.Size()
	require.NoError(t, err)
	b := make([]byte, size)
	_, err = f.ReadAt(b, 0)
	if !errors.Is(err, io.EOF) {
		require.NoError(t, err)
	}
	return b
}

// metadataStates returns the states __remote_log_metadata records, in
// order, as "START-END:STATE" (updates as "update:STATE").
func metadataStates(t *testing.T, d *Dir) []string {
	t.Helper()
	var out []string
	for _, l := range d.tier.metas {
		for _, r := range records(t, l, l.LogStartOffset()) {
			v, err := remotecodec.ParseValue(r.Value)
			require.NoError(t, err)
			switch v := v.(type) {
			case remotecodec.RemoteLogSegmentMetadataRecord:
				out = append(out, fmt.Sprintf("%d-%d:%s", v.StartOffset, v.EndOffset, v.RemoteLogSegmentState))
			case remotecodec.RemoteLogSegmentMetadataUpdateRecord:
				out = append(out, "update:"+v.RemoteLogSegmentState.String())
			}
		}
	}
	return out
}

// TestTierCopiesSealedSegments: a pass copies every sealed segment of a
// tiered topic (never the active one), each recorded as started, then
// finished, in __remote_log_metadata in Kafka's schemas; a second pass
// copies nothing; the next sealed segments are copied by the next pass;
// the stats say so.
func TestTierCopiesSealedSegments(t *testing.T) {
	e := tieredEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "tiered", 1, tieredProps)
	createTopic(t, d, "local", 1, map[string]string{"segment.bytes": "2000"})
	l := partition(t, d, "tiered", 0)
	fill(t, l, 10)
	fill(t, partition(t, d, "local", 0), 10)
	sealed := len(l.local.segs()) - 1
	require.Greater(t, sealed, 2)
	require.Equal(t, sealed, l.Stats().RemoteCopyLagSegments)

	res, err := d.TierNow(context.Background())
	require.NoError(t, err)
	require.Equal(t, sealed, res.Copied)
	requireCopies(t, d, l)
	st := l.Stats()
	require.Equal(t, sealed, st.RemoteSegments)
	require.Zero(t, st.RemoteCopyLagSegments)
	states := metadataStates(t, d)
	require.Len(t, states, 2*sealed)
	require.True(t, strings.HasSuffix(states[0], ":COPY_SEGMENT_STARTED"), states[0])
	require.Equal(t, "update:COPY_SEGMENT_FINISHED", states[1])
	local, err := d.RemoteSegments("local", 0)
	require.NoError(t, err)
	require.Empty(t, local, "a topic without remote.storage.enable is not copied")

	res, err = d.TierNow(context.Background())
	require.NoError(t, err)
	require.Zero(t, res.Copied)

	fill(t, l, 5)
	res, err = d.TierNow(context.Background())
	require.NoError(t, err)
	require.Positive(t, res.Copied)
	requireCopies(t, d, l)
}

// TestTierStopsAtTheLastStableOffset: a segment with data of an open
// transaction, or one after it, is not copied until the transaction ends.
func TestTierStopsAtTheLastStableOffset(t *testing.T) {
	e := tieredEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "tiered", 1, tieredProps)
	l := partition(t, d, "tiered", 0)
	fill(t, l, 2)
	const pid = 7
	appendTxn(t, l, txnBatch(t, pid, 0, 0, 5))
	fill(t, l, 8)
	lso := l.LastStableOffset()
	_, err := d.TierNow(context.Background())
	require.NoError(t, err)
	copies, err := d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	for _, m := range copies {
		require.Less(t, m.EndOffset, lso, "copied past the last stable offset")
	}
	require.Positive(t, l.Stats().RemoteCopyLagSegments)
	_, err = l.AppendTxnMarker(access.Internal{}, pid, 0, record.EndTxnMarker{Type: record.ControlCommit})
	require.NoError(t, err)
	fill(t, l, 3)
	_, err = d.TierNow(context.Background())
	require.NoError(t, err)
	requireCopies(t, d, l)
}

// txnBatch is a transactional batch of n records of producer pid.
func txnBatch(t *testing.T, pid int64, epoch int16, seq int32, n int) []byte {
	t.Helper()
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, Attributes: record.Attributes(0).WithTransactional(true),
		ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq}, record.DefaultLevel)
	for i := range n {
		require.NoError(t, b.Append(time.Now().UnixMilli(), fmt.Appendf(nil, "t%d", i), []byte("in a transaction"), nil))
	}
	out, err := b.Build()
	require.NoError(t, err)
	return append([]byte(nil), out...)
}

// TestTierRefusals: remote.storage.enable needs the directory's tiered
// storage and is refused on compacted topics; a directory with tiered
// storage needs a store.
func TestTierRefusals(t *testing.T) {
	ctx := context.Background()
	plain := newEnv(t)
	d := plain.open(t)
	_, err := d.CreateTopic(ctx, "t", 1, map[string]string{"remote.storage.enable": "true"})
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, "tiered storage is off")
	require.NoError(t, d.Close())

	e := tieredEnv(t)
	d = e.open(t)
	_, err = d.CreateTopic(ctx, "c", 1, map[string]string{"remote.storage.enable": "true", "cleanup.policy": "compact"})
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, "compacted")
	createTopic(t, d, "t", 1, nil)
	_, err = d.AlterTopicConfig(ctx, "t", map[string]string{"remote.storage.enable": "true"})
	require.NoError(t, err)
	require.NoError(t, d.Close())

	e.cfg.RemoteStorage = nil
	_, err = Open(ctx, "/data", e.cfg)
	require.ErrorIs(t, err, ErrInvalidConfig)
}

// TestTierReopen: the copies are known again after a reopen (replayed from
// __remote_log_metadata), so a pass copies only what is new.
func TestTierReopen(t *testing.T) {
	e := tieredEnv(t)
	d := e.open(t)
	createTopic(t, d, "tiered", 2, tieredProps)
	for p := range int32(2) {
		fill(t, partition(t, d, "tiered", p), 8)
	}
	first, err := d.TierNow(context.Background())
	require.NoError(t, err)
	require.NoError(t, d.Close())

	d = e.open(t)
	defer d.Close()
	for p := range int32(2) {
		requireCopies(t, d, partition(t, d, "tiered", p))
	}
	res, err := d.TierNow(context.Background())
	require.NoError(t, err)
	require.Zero(t, res.Copied)
	require.Positive(t, first.Copied)
}

// TestTierStoreFails: a copy the store fails leaves the segment recorded as
// started and the local segment in place; the next pass deletes what the
// failed copy left and copies the segment again.
func TestTierStoreFails(t *testing.T) {
	e := tieredEnv(t)
	faults := vfs.NewFaultFS(e.mem)
	e.cfg.RemoteStorage = remote.NewFileStore(faults, "/remote")
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "tiered", 1, tieredProps)
	l := partition(t, d, "tiered", 0)
	fill(t, l, 10)
	before := records(t, l, 0)

	faults.Inject(vfs.EIO(vfs.OpWrite, "/remote", 3))
	res, err := d.TierNow(context.Background())
	require.ErrorIs(t, err, remote.ErrStorage)
	require.Equal(t, 0, res.Copied)
	require.Equal(t, before, records(t, l, 0), "the local data is untouched")
	faults.Clear()

	res, err = d.TierNow(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Deleted, "the failed copy")
	requireCopies(t, d, l)
	require.Contains(t, metadataStates(t, d), "update:DELETE_SEGMENT_FINISHED")
	files := remotetest.Files(e.mem, "/remote")
	require.Len(t, files, 6*(len(l.local.segs())-1), "no file of the failed copy is left (six per copy with the manifest)")
}

// TestTierDeletesCopiesOfWhatIsGone: copies below the log start offset
// (after DeleteRecords) and copies of a deleted topic are deleted from the
// store by the next pass.
func TestTierDeletesCopiesOfWhatIsGone(t *testing.T) {
	e := tieredEnv(t)
	d := e.open(t)
	defer d.Close()
	ctx := context.Background()
	createTopic(t, d, "tiered", 1, tieredProps)
	createTopic(t, d, "doomed", 1, tieredProps)
	l := partition(t, d, "tiered", 0)
	fill(t, l, 10)
	fill(t, partition(t, d, "doomed", 0), 10)
	_, err := d.TierNow(ctx)
	require.NoError(t, err)
	copies, err := d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	doomedCopies, err := d.RemoteSegments("doomed", 0)
	require.NoError(t, err)

	_, err = l.DeleteRecordsBefore(copies[1].EndOffset + 1)
	require.NoError(t, err)
	require.NoError(t, d.DeleteTopic(ctx, "doomed"))
	res, err := d.TierNow(ctx)
	require.NoError(t, err)
	require.Equal(t, 2+len(doomedCopies), res.Deleted)
	left, err := d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	require.Equal(t, copies[2:], left)
	for _, m := range append(copies[:2], doomedCopies...) {
		_, err := d.cfg.RemoteStorage.FetchLogSegment(ctx, m, 0, -1)
		require.ErrorIs(t, err, remote.ErrNotFound, "%s", m.ID)
	}
}

// TestTierSkipsBadMetadata: records of __remote_log_metadata that do not
// decode, or update a copy never started, or break the state order, are
// skipped at replay with a warning; the copies stay as recorded.
func TestTierSkipsBadMetadata(t *testing.T) {
	e := tieredEnv(t)
	d := e.open(t)
	createTopic(t, d, "tiered", 1, tieredProps)
	l := partition(t, d, "tiered", 0)
	fill(t, l, 8)
	_, err := d.TierNow(context.Background())
	require.NoError(t, err)
	copies, err := d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	meta := d.tier.metas[0]
	appendValue := func(v []byte) {
		b, err := record.AppendBatch(nil, record.BatchHeader{Magic: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
			PartitionLeaderEpoch: -1}, record.DefaultLevel, []record.Record{{Timestamp: 1, Value: v}})
		require.NoError(t, err)
		_, err = meta.AppendInternal(access.Internal{}, b)
		require.NoError(t, err)
	}
	appendValue([]byte{1, 0, 0, 0xff}) // truncated
	unknown := remotecodec.RemoteLogSegmentMetadataUpdateRecord{RemoteLogSegmentID: codecID(remote.SegmentID{Topic: "tiered",
		TopicID: copies[0].ID.TopicID, Partition: 0, ID: remote.UUID{9}}), RemoteLogSegmentState: remotecodec.CopySegmentFinished}
	v, err := remotecodec.AppendValue(nil, unknown)
	require.NoError(t, err)
	appendValue(v)
	backwards := remotecodec.RemoteLogSegmentMetadataUpdateRecord{RemoteLogSegmentID: codecID(copies[0].ID),
		RemoteLogSegmentState: remotecodec.CopySegmentStarted}
	v, err = remotecodec.AppendValue(nil, backwards)
	require.NoError(t, err)
	appendValue(v)
	require.NoError(t, d.Close())

	d = e.open(t)
	defer d.Close()
	require.Equal(t, 3, d.tier.skipped)
	again, err := d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	require.Equal(t, copies, again)
}

// TestTierCrashPoints loses power (the memory filesystem's CrashClone)
// after each filesystem operation of a pass that copies three segments,
// then opens what survives and checks the rule: every copy recorded as
// finished is whole in the store; the next pass deletes what unfinished
// copies left, copies the rest, and leaves no other file in the store.
func TestTierCrashPoints(t *testing.T) {
	ctx := context.Background()
	base := tieredEnv(t)
	d := base.open(t)
	createTopic(t, d, "tiered", 1, tieredProps)
	fill(t, partition(t, d, "tiered", 0), 10)
	require.NoError(t, d.Close())
	snapshot := base.mem.CrashClone() // everything closed cleanly is durable

	points := 0
	for point := 1; ; point++ {
		mem := snapshot.CrashClone()
		faults := vfs.NewFaultFS(mem)
		e := &env{mem: mem, clock: base.clock, cfg: base.cfg}
		e.cfg.FS = faults
		e.cfg.RemoteStorage = remote.NewFileStore(faults, "/remote")
		d := e.open(t)
		var crashed *vfs.MemFS
		ops := 0
		faults.OnOp(func(vfs.Op, string) {
			ops++
			if ops == point {
				crashed = mem.CrashClone()
			}
		})
		_, err := d.TierNow(ctx)
		require.NoError(t, err)
		require.NoError(t, d.Close())
		if crashed == nil {
			break
		}
		points++
		after := &env{mem: crashed, clock: base.clock, cfg: base.cfg}
		after.cfg.FS = crashed
		after.cfg.RemoteStorage = remote.NewFileStore(crashed, "/remote")
		d = after.open(t)
		l := partition(t, d, "tiered", 0)
		copies, err := d.RemoteSegments("tiered", 0)
		require.NoError(t, err)
		for _, m := range copies {
			r, err := after.cfg.RemoteStorage.FetchLogSegment(ctx, m, 0, -1)
			require.NoError(t, err, "crash point %d: %s is recorded as finished", point, m.ID)
			_, err = io.ReadAll(r)
			r.Close()
			require.NoError(t, err, "crash point %d", point)
		}
		_, err = d.TierNow(ctx)
		require.NoError(t, err, "crash point %d", point)
		requireCopies(t, d, l)
		files := remotetest.Files(crashed, "/remote")
		require.Len(t, files, 6*(len(l.local.segs())-1), "crash point %d: files left in the store: %v", point, files)
		require.NoError(t, d.Close())
	}
	t.Logf("%d crash points", points)
	require.Greater(t, points, 20)
}

// TestTierBackground: with remote.log.manager.task.interval.ms short, the
// Dir's own loop copies sealed segments, and Close stops it.
func TestTierBackground(t *testing.T) {
	e := tieredEnv(t)
	e.cfg.RemoteLogManagerTaskInterval = 5 * time.Millisecond
	d := e.open(t)
	createTopic(t, d, "tiered", 1, tieredProps)
	l := partition(t, d, "tiered", 0)
	fill(t, l, 10)
	deadline := time.Now().Add(30 * time.Second)
	for l.Stats().RemoteCopyLagSegments > 0 {
		require.True(t, time.Now().Before(deadline), "the loop copied nothing in 30 s")
		select {
		case <-d.Changed():
		case <-time.After(5 * time.Millisecond):
		}
	}
	requireCopies(t, d, l)
	require.NoError(t, d.Close())
}

// committedRecords reads every record of a partition from offset,
// read_committed.
func committedRecords(t *testing.T, l *Log, from int64) []record.Record {
	t.Helper()
	var out []record.Record
	for from < l.LogEndOffset() {
		next, err := l.ReadCommittedRecords(from, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
			out = append(out, r.Clone())
			return nil
		})
		require.NoError(t, err)
		require.Greater(t, next, from)
		from = next
	}
	return out
}

// copiedAndTrimmed tiers l and applies local retention with
// local.retention.bytes=0 (set on the topic): every copied local segment
// goes, and reads below the first local segment come from the copies.
func copiedAndTrimmed(t *testing.T, d *Dir, l *Log) {
	t.Helper()
	_, err := d.TierNow(context.Background())
	require.NoError(t, err)
	res, err := l.EnforceRetention()
	require.NoError(t, err)
	require.Positive(t, res.SegmentsDeleted)
	st := l.Stats()
	require.Greater(t, st.LocalLogStartOffset, st.LogStartOffset, "the oldest offsets are only in the store")
}

// TestTierReadsCopies deletes every copied local segment (local retention)
// and reads the partition back from its start, over every codec and on
// the memory and the operating system's filesystems: ReadRecords,
// ReadCommittedRecords, ReadRecord and OffsetForTimestamp see what was
// appended, the log start offset stays, and so it does after a reopen.
func TestTierReadsCopies(t *testing.T) {
	codecs := []record.Compression{record.None, record.Gzip, record.Snappy, record.LZ4, record.Zstd}
	for _, osfs := range []bool{false, true} {
		for _, codec := range codecs {
			t.Run(fmt.Sprintf("%s/os=%v", codec, osfs), func(t *testing.T) {
				e := tieredEnvOn(t, osfs)
				d := e.open(t)
				segmentBytes := "2000" // about three uncompressed batches
				if codec != record.None {
					segmentBytes = "250" // the values compress well: about two batches
				}
				props := map[string]string{"remote.storage.enable": "true", "segment.bytes": segmentBytes, "local.retention.bytes": "0"}
				createTopic(t, d, "tiered", 1, props)
				l := partition(t, d, "tiered", 0)
				base := e.clock.Now().UnixMilli()
				for i := range 12 {
					_, err := l.Append(producerBatch(t, 5, 100, base+int64(i)*1000, codec))
					require.NoError(t, err)
				}
				want := records(t, l, 0)
				copiedAndTrimmed(t, d, l)
				require.Zero(t, l.LogStartOffset())
				require.Equal(t, want, records(t, l, 0))

				require.Equal(t, want, committedRecords(t, l, 0))
				rec, ok, err := l.ReadRecord(7)
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, want[7], rec)
				found, ok, err := l.OffsetForTimestamp(base + 2000)
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, int64(10), found.Offset, "the third batch")
				require.Positive(t, l.Stats().RemoteFetchCacheHits+l.Stats().RemoteFetchCacheMisses)

				require.NoError(t, d.Close())
				d = e.open(t)
				defer d.Close()
				l = partition(t, d, "tiered", 0)
				require.Zero(t, l.LogStartOffset(), "kept in log-start-offset-checkpoint")
				require.Equal(t, want, records(t, l, 0))
			})
		}
	}
}

// TestTierReadCommittedAcrossTheBoundary: an aborted transaction whose
// data and marker are in a copy is still filtered by read_committed reads,
// and AbortedTransactions lists it.
func TestTierReadCommittedAcrossTheBoundary(t *testing.T) {
	e := tieredEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "tiered", 1, map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000", "local.retention.bytes": "0"})
	l := partition(t, d, "tiered", 0)
	const pid = 7
	res := appendTxn(t, l, withTimestamps(t, txnBatch(t, pid, 0, 0, 5), e.clock.Now().UnixMilli()))
	_, err := l.AppendTxnMarker(access.Internal{}, pid, 0, record.EndTxnMarker{Type: record.ControlAbort})
	require.NoError(t, err)
	fill(t, l, 12)
	all := records(t, l, 0)
	copiedAndTrimmed(t, d, l)
	require.Greater(t, l.Stats().LocalLogStartOffset, res.LastOffset+1, "the transaction is in a copy")

	aborted, err := l.AbortedTransactions(0, l.LastStableOffset())
	require.NoError(t, err)
	require.Len(t, aborted, 1)
	require.Equal(t, int64(pid), aborted[0].ProducerID)
	require.Equal(t, all[5:], committedRecords(t, l, 0), "the aborted records are left out")
}

// TestTierTotalRetention: retention.bytes over the copies and the local
// segments not copied moves the log start offset past the oldest copies;
// the next pass deletes them from the store, and reads below the start
// are out of range.
func TestTierTotalRetention(t *testing.T) {
	e := tieredEnv(t)
	d := e.open(t)
	defer d.Close()
	ctx := context.Background()
	createTopic(t, d, "tiered", 1, map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000",
		"local.retention.bytes": "0", "retention.bytes": "6000"})
	l := partition(t, d, "tiered", 0)
	fill(t, l, 20)
	want := records(t, l, 0)
	_, err := d.TierNow(ctx)
	require.NoError(t, err)
	before, err := d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	var remoteBytes int64
	for _, m := range before {
		remoteBytes += int64(m.SizeInBytes)
	}
	require.Greater(t, remoteBytes, int64(6000))

	_, err = l.EnforceRetention()
	require.NoError(t, err)
	start := l.LogStartOffset()
	require.Positive(t, start)
	res, err := d.TierNow(ctx)
	require.NoError(t, err)
	require.Positive(t, res.Deleted)
	after, err := d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	remoteBytes = 0
	for _, m := range after {
		require.GreaterOrEqual(t, m.EndOffset, start)
		remoteBytes += int64(m.SizeInBytes)
	}
	// Kafka's rule: a copy goes while what is left stays at or above the
	// limit, so the total (the copies and the local segments not copied)
	// may exceed it by less than a copy.
	for _, s := range l.local.segs() {
		if s.BaseOffset() > l.HighestTieredOffset() {
			remoteBytes += s.Size()
		}
	}
	require.Less(t, remoteBytes, int64(6000+2000))
	_, err = l.ReadRecords(0, 1<<20, func(*record.Record, *record.BatchHeader) error { return nil })
	var oor *OffsetOutOfRangeError
	require.ErrorAs(t, err, &oor)
	require.Equal(t, want[start:], records(t, l, start))
}

// TestTierFetchFailures: a copy the store lost, or returns damaged, is
// an error for the reads that need it (typed: remote.ErrNotFound,
// remote.ErrCorrupt), never other data; the local offsets read as before.
func TestTierFetchFailures(t *testing.T) {
	for _, damage := range []string{"lost", "corrupt"} {
		t.Run(damage, func(t *testing.T) {
			e := tieredEnv(t)
			d := e.open(t)
			defer d.Close()
			createTopic(t, d, "tiered", 1, map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000", "local.retention.bytes": "0"})
			l := partition(t, d, "tiered", 0)
			fill(t, l, 12)
			copiedAndTrimmed(t, d, l)
			copies, err := d.RemoteSegments("tiered", 0)
			require.NoError(t, err)
			var logFile string
			for _, f := range remotetest.Files(e.mem, "/remote") {
				if strings.Contains(f, copies[0].ID.ID.String()) && strings.HasSuffix(f, ".log") {
					logFile = f
				}
			}
			require.NotEmpty(t, logFile)
			want := remote.ErrNotFound
			if damage == "lost" {
				require.NoError(t, e.mem.Remove(strings.TrimSuffix(logFile, ".log")+".manifest"))
			} else {
				f, err := e.mem.OpenReadWrite(logFile)
				require.NoError(t, err)
				_, err = f.WriteAt([]byte{0xff, 0xff}, 100)
				require.NoError(t, err)
				require.NoError(t, f.Close())
				want = remote.ErrCorrupt
			}
			_, err = l.ReadRecords(0, 1<<20, func(*record.Record, *record.BatchHeader) error { return nil })
			require.ErrorIs(t, err, want)
			local := l.Stats().LocalLogStartOffset
			got := records(t, l, local)
			require.Equal(t, local, got[0].Offset)
		})
	}
}

// TestTierCacheBound: with a cache smaller than one copy, every read of a
// copy fetches it again (the least recently used goes), and reads stay
// right.
func TestTierCacheBound(t *testing.T) {
	e := tieredEnv(t)
	e.cfg.RemoteLogIndexFileCacheTotalSize = 1
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "tiered", 1, map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000", "local.retention.bytes": "0"})
	l := partition(t, d, "tiered", 0)
	fill(t, l, 12)
	want := records(t, l, 0)
	copiedAndTrimmed(t, d, l)
	for range 2 {
		require.Equal(t, want, records(t, l, 0))
	}
	st := l.Stats()
	copies, err := d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	require.GreaterOrEqual(t, st.RemoteFetchCacheMisses, int64(2*len(copies)), "fetched again each time")
	var cached []string
	for _, f := range remotetest.Files(e.mem, filepath.Join("/data", remoteIndexCacheDir, remoteCacheDir)) {
		if strings.HasSuffix(f, ".log") {
			cached = append(cached, f)
		}
	}
	require.LessOrEqual(t, len(cached), 1, "at most the copy read last stays")
}

// TestTierClockGoesBackwards: a clock that goes back does not make
// retention delete anything early (local segments and copies are old only
// by a clock that has passed them), and forward again it applies.
func TestTierClockGoesBackwards(t *testing.T) {
	e := tieredEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "tiered", 1, map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000",
		"local.retention.ms": "3600000", "retention.ms": "86400000"})
	l := partition(t, d, "tiered", 0)
	fill(t, l, 12)
	_, err := d.TierNow(context.Background())
	require.NoError(t, err)
	segs := len(l.local.segs())
	e.clock.Add(-48 * time.Hour)
	res, err := l.EnforceRetention()
	require.NoError(t, err)
	require.Zero(t, res.SegmentsDeleted)
	require.Len(t, l.local.segs(), segs)
	require.Zero(t, l.LogStartOffset())

	e.clock.Add(48*time.Hour + 2*time.Hour) // past local retention, within the total
	res, err = l.EnforceRetention()
	require.NoError(t, err)
	require.Positive(t, res.SegmentsDeleted)
	require.Zero(t, l.LogStartOffset(), "the copies still hold the start")
	e.clock.Add(48 * time.Hour) // past the total retention too
	_, err = l.EnforceRetention()
	require.NoError(t, err)
	require.Equal(t, l.LocalLogStartOffset(), l.LogStartOffset())
}

// blockingStore is a StorageManager whose copies wait for release.
type blockingStore struct {
	remote.StorageManager
	started chan struct{}
	release chan struct{}
}

func (s *blockingStore) CopyLogSegmentData(ctx context.Context, m remote.SegmentMetadata, data remote.SegmentData) ([]byte, error) {
	select {
	case s.started <- struct{}{}:
	default:
	}
	<-s.release
	return s.StorageManager.CopyLogSegmentData(ctx, m, data)
}

// TestTierRetentionShrinksDuringACopy: while a segment is being copied,
// retention.bytes shrinks below what the partition holds; retention
// deletes nothing local that is not copied (Kafka keeps a tiered topic's
// local segments until they are in remote storage), so the copy finishes
// and is recorded; then retention expires the oldest copies, the next
// pass deletes them, and every offset from the log start on reads as
// appended.
func TestTierRetentionShrinksDuringACopy(t *testing.T) {
	e := tieredEnv(t)
	store := &blockingStore{StorageManager: e.cfg.RemoteStorage, started: make(chan struct{}, 1), release: make(chan struct{})}
	e.cfg.RemoteStorage = store
	d := e.open(t)
	defer d.Close()
	ctx := context.Background()
	createTopic(t, d, "tiered", 1, tieredProps)
	l := partition(t, d, "tiered", 0)
	fill(t, l, 12)
	want := records(t, l, 0)
	segs := len(l.local.segs())
	passed := make(chan error, 1)
	go func() {
		_, err := d.TierNow(ctx)
		passed <- err
	}()
	<-store.started
	_, err := d.AlterTopicConfig(ctx, "tiered", map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000",
		"retention.bytes": "2500"})
	require.NoError(t, err)
	res, err := l.EnforceRetention()
	require.NoError(t, err)
	require.Zero(t, res.SegmentsDeleted, "nothing is copied yet")
	require.Zero(t, l.LogStartOffset())
	require.Len(t, l.local.segs(), segs)
	store.release <- struct{}{} // the first copy
	close(store.release)        // and the others
	require.NoError(t, <-passed)

	_, err = l.EnforceRetention()
	require.NoError(t, err)
	require.Positive(t, l.LogStartOffset(), "retention passed the oldest copies")
	tiered, err := d.TierNow(ctx)
	require.NoError(t, err)
	require.Positive(t, tiered.Deleted, "the copies below the log start offset")
	copies, err := d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	for _, m := range copies {
		require.GreaterOrEqual(t, m.EndOffset, l.LogStartOffset())
	}
	got := records(t, l, l.LogStartOffset())
	require.Equal(t, want[len(want)-len(got):], got)
}
