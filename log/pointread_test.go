package log

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/record"
)

// TestPointReadsJumpToMarks reads every offset of large batches, in random
// order and twice, with ReadRecord, and checks each answer against what
// was written: a dense batch (offset deltas 0, 1, 2, ...) and one with
// gaps (as compaction leaves them), in every codec (compressed batches
// have no marks: they are decompressed whole) and on both filesystems
// (the memory one reads by copy, without marks). The append makes the
// marks of the large uncompressed batches; for the others the first reads
// make them; later ones jump by them. Then the log is truncated
// inside a batch and other records appended at the same positions: no
// read is answered from marks of the bytes that were cut.
func TestPointReadsJumpToMarks(t *testing.T) {
	matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, c matrix.Case) {
		e := newEnv(t)
		fsys, dir := c.Dir(t)
		e.cfg.FS = fsys
		d, err := Open(context.Background(), dir, e.cfg)
		require.NoError(t, err)
		defer func() { require.NoError(t, d.Close()) }()
		createTopic(t, d, "t", 1, nil)
		l := partition(t, d, "t", 0)
		now := e.clock.Now().UnixMilli()
		batches := []struct {
			name  string
			codec record.Compression
			gap   int32 // offset deltas step by this
			value string
		}{{"dense", c.Codec, 1, "a"}, {"gaps", c.Codec, 3, "b"}, {"dense again", c.Codec, 1, "c"},
			// Batches of 64 KiB or more get their marks as they are appended.
			{"dense, large", c.Codec, 1, "d" + strings.Repeat("-", 120)}, {"gaps, large", c.Codec, 2, "e" + strings.Repeat("-", 120)}}
		want := map[int64]string{} // offset -> value
		var base int64
		for _, b := range batches {
			batch, end := markBatch(t, base, 700, b.gap, b.codec, b.value, now)
			_, err := l.AppendAsReplica(batch)
			require.NoError(t, err, b.name)
			res, err := l.Read(base, 1, true)
			require.NoError(t, err)
			marked := segHooks.Marks(res.Slice) != nil
			res.Release()
			require.Equal(t, len(batch) >= appendMarksMinBytes && b.codec == record.None, marked,
				"%s (%d bytes): marks made by the append", b.name, len(batch))
			for i := range int64(700) {
				want[base+i*int64(b.gap)] = fmt.Sprintf("%s%d", b.value, i)
			}
			base = end
		}
		end := l.LogEndOffset()
		expect := func(off int64) (int64, string) { // the first record at or after off
			for ; off < end; off++ {
				if v, ok := want[off]; ok {
					return off, v
				}
			}
			return -1, ""
		}
		check := func(round string) {
			offs := rand.Perm(int(end))
			for _, o := range offs {
				off := int64(o)
				rec, ok, err := l.ReadRecord(off)
				require.NoError(t, err)
				wantOff, wantValue := expect(off)
				require.Equal(t, wantOff >= 0, ok, "%s: offset %d", round, off)
				if ok {
					require.Equal(t, wantOff, rec.Offset, "%s: offset %d", round, off)
					require.Equal(t, wantValue, string(rec.Value), "%s: offset %d", round, off)
				}
			}
		}
		check("making marks")
		check("jumping")

		// Cut inside the first batch (its whole batch goes: the log ends at
		// 0) and append other records at the same file position.
		cut := int64(350)
		require.NoError(t, l.TruncateTo(cut))
		require.Zero(t, l.LogEndOffset())
		clear(want)
		batch, newEnd := markBatch(t, cut, 700, 2, c.Codec, "z", now)
		_, err = l.AppendAsReplica(batch)
		require.NoError(t, err)
		for i := range int64(700) {
			want[cut+i*2] = fmt.Sprintf("z%d", i)
		}
		end = newEnd
		check("after the cut")
	})
}

// markBatch builds a batch of n records at base whose offset deltas step
// by gap, values prefix0, prefix1, ..., and returns it and the offset
// after it.
func markBatch(t *testing.T, base int64, n int, gap int32, codec record.Compression, prefix string, ts int64) ([]byte, int64) {
	t.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{OffsetDelta: int32(i) * gap, Timestamp: ts, Key: fmt.Appendf(nil, "k%d", i),
			Value: fmt.Appendf(nil, "%s%d", prefix, i)}
	}
	b, err := record.AppendBatch(nil, record.BatchHeader{BaseOffset: base, PartitionLeaderEpoch: 0,
		Attributes: record.Attributes(0).WithCompression(codec), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		record.DefaultLevel, recs)
	require.NoError(t, err)
	return b, base + int64(n-1)*int64(gap) + 1
}
