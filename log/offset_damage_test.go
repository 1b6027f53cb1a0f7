package log

import (
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
	"github.com/stretchr/testify/require"
)

// flipBaseOffsetBit flips bit 40 of a batch's base offset (outside the
// CRC): the batch claims offsets around 2^40.
func flipBaseOffsetBit(t *testing.T, f *fixture, b fixtureBatch) {
	t.Helper()
	name := f.file(b.segment, segment.LogSuffix)
	v := readAt(t, f.fsys, name, b.position+2, 1)
	v[0] ^= 0x01
	writeAt(t, f.fsys, name, b.position+2, v)
}

// consume reads the partition from its start as a consumer does that
// skips what it cannot read: on an error at offset o it goes on at o+1.
// It returns the records read and the offsets that failed.
func consume(t *testing.T, l *Log) (recs []record.Record, failed []int64) {
	t.Helper()
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		next, err := l.ReadRecords(off, 4096, func(rec *record.Record, _ *record.BatchHeader) error {
			recs = append(recs, rec.Clone())
			return nil
		})
		if err != nil {
			require.ErrorIs(t, err, record.ErrCorrupt)
			failed = append(failed, off)
			off++
			continue
		}
		require.Greater(t, next, off)
		off = next
	}
	return recs, failed
}

// TestBaseOffsetOutsideItsSegmentIsCorruption: a batch whose base offset
// lost a bit outside the CRC claims offsets that were never written. It
// is never served as records: a read of its offsets fails with a typed
// corruption error naming the file and position, every other record stays
// readable, and no read returns an offset the log does not hold. Where
// recovery scans the segment (the active one after a crash), it truncates
// there.
func TestBaseOffsetOutsideItsSegmentIsCorruption(t *testing.T) {
	cases := []struct {
		name    string
		segment int // whose batch 3 is flipped
		clean   bool
		// truncated: recovery cuts the log at the batch.
		truncated bool
	}{
		{"sealed segment, clean shutdown", 2, true, false},
		{"sealed segment below the recovery point, crash", 2, false, false},
		{"active segment, clean shutdown", fixtureSegments - 1, true, false},
		{"active segment, crash", fixtureSegments - 1, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, c matrix.Case) {
				f := newFixture(t, c, nil)
				b := f.batchesOf(tc.segment)[3]
				flipBaseOffsetBit(t, f, b)

				_, l := f.reopen(t, tc.clean)
				if tc.truncated {
					require.Equal(t, b.baseOffset, l.LogEndOffset(), "recovery truncated at the batch")
					f.requireRecords(t, l, 0, b.baseOffset)
					return
				}
				require.Equal(t, int64(len(f.recs)), l.LogEndOffset())
				recs, failed := consume(t, l)
				var want []record.Record
				var lost []int64
				for _, r := range f.recs {
					if r.Offset >= b.baseOffset && r.Offset <= b.lastOffset {
						lost = append(lost, r.Offset)
						continue
					}
					want = append(want, r)
				}
				require.Equal(t, lost, failed, "exactly the batch's offsets fail")
				require.Len(t, recs, len(want))
				for i := range want {
					requireSameRecord(t, want[i], recs[i])
				}
				for off := b.baseOffset; off <= b.lastOffset; off++ {
					_, _, err := l.ReadRecord(off)
					requireCorruptAt(t, err, f.file(tc.segment, segment.LogSuffix), b.position)
					_, err = l.Read(off, 1, true)
					se := requireCorruptAt(t, err, f.file(tc.segment, segment.LogSuffix), b.position)
					require.Equal(t, b.lastOffset+1, se.NextOffset, "where reads go on")
				}
			})
		})
	}
}

// TestFlippedFirstBatchIsNotRedelivered is the independent suite's case: a partition
// of 20 one-record batches whose first batch's base offset lost a bit.
// Before, offset 2^40 was served first and a consumer reading from the
// earliest offset got it on every poll. Now, after a clean shutdown,
// offset 0 fails with a typed error and 1..19 read as written; after a
// crash, recovery truncates at the batch (Kafka's rule for the segment it
// rescans). Either way no read returns an offset that was not written.
func TestFlippedFirstBatchIsNotRedelivered(t *testing.T) {
	for _, sd := range shutdowns {
		t.Run(sd.name, func(t *testing.T) {
			matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, c matrix.Case) {
				f := newFixture(t, c, func(t *testing.T, f *fixture, l *Log) []record.Record {
					var recs []record.Record
					for range 20 {
						recs = append(recs, f.appendBatch(t, l, 1)...)
					}
					return recs
				})
				flipBaseOffsetBit(t, f, f.batches[0])

				_, l := f.reopen(t, sd.clean)
				if !sd.clean {
					require.Zero(t, l.LogEndOffset(), "recovery truncated at the first batch")
					recs, failed := consume(t, l)
					require.Empty(t, recs)
					require.Empty(t, failed)
					return
				}
				res, err := l.Read(0, 1<<20, true)
				se := requireCorruptAt(t, err, f.file(0, segment.LogSuffix), 0)
				require.Equal(t, int64(1), se.NextOffset, "where reads go on")
				require.Nil(t, res.Slice)
				recs, failed := consume(t, l)
				require.Equal(t, []int64{0}, failed)
				require.Len(t, recs, 19)
				for i, r := range recs {
					requireSameRecord(t, f.recs[i+1], r)
				}
			})
		})
	}
}

// TestRecoveryChecksOffsetRanges: the recovery scan treats a batch whose
// offsets leave the segment (past the next segment's base, or beyond the
// relative offsets of an index) as corruption and truncates there, instead
// of failing the whole directory.
func TestRecoveryChecksOffsetRanges(t *testing.T) {
	matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, c matrix.Case) {
		f := newFixture(t, c, nil)
		// Every segment from the second on is recovered.
		require.NoError(t, writeRecoveryPoint(f, f.bases[1]))
		b := f.batchesOf(1)[5]
		flipBaseOffsetBit(t, f, b)

		_, l := f.reopen(t, false)
		require.Equal(t, b.baseOffset, l.LogEndOffset(), "recovery truncated at the batch")
		f.requireRecords(t, l, 0, b.baseOffset)
		require.Len(t, l.local.segs(), 2, "the later segments went (Kafka's rule)")
	})
}

// writeRecoveryPoint sets the fixture's recovery-point checkpoint.
func writeRecoveryPoint(f *fixture, offset int64) error {
	return checkpoint.WriteOffsets(f.fsys, filepath.Join(f.path, checkpoint.RecoveryPointFile),
		map[checkpoint.TopicPartition]int64{{Topic: "t", Partition: 0}: offset})
}
