package log

import (
	"testing"
	"unsafe"

	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestRecordReaderReusesItsBuffers: a RecordReader reads the same records
// as Log.ReadRecords and Log.ReadCommittedRecords, over every codec, and a
// loop of its reads keeps one read buffer and one decoder, where each
// Log.ReadRecords allocates both.
func TestRecordReaderReusesItsBuffers(t *testing.T) {
	for _, codec := range []record.Compression{record.None, record.Gzip, record.Snappy, record.LZ4, record.Zstd} {
		t.Run(codec.String(), func(t *testing.T) {
			e := newEnv(t)
			d := e.open(t)
			defer d.Close()
			createTopic(t, d, "t", 1, nil)
			l := partition(t, d, "t", 0)
			for range 40 {
				_, err := l.Append(producerBatch(t, 50, 100, e.clock.Now().UnixMilli(), codec))
				require.NoError(t, err)
			}
			const maxBytes = 16 << 10
			type read func(offset int64, fn func(rec *record.Record, h *record.BatchHeader) error) (int64, error)
			all := func(r read) (values []string) {
				for off := int64(0); off < l.LogEndOffset(); {
					next, err := r(off, func(rec *record.Record, _ *record.BatchHeader) error {
						values = append(values, string(rec.Value))
						return nil
					})
					require.NoError(t, err)
					require.Greater(t, next, off)
					off = next
				}
				return values
			}
			var rr RecordReader
			plain := func(off int64, fn func(*record.Record, *record.BatchHeader) error) (int64, error) {
				return l.ReadRecords(off, maxBytes, fn)
			}
			reused := func(off int64, fn func(*record.Record, *record.BatchHeader) error) (int64, error) {
				return rr.ReadRecords(l, off, maxBytes, fn)
			}
			committed := func(off int64, fn func(*record.Record, *record.BatchHeader) error) (int64, error) {
				return rr.ReadCommittedRecords(l, off, maxBytes, fn)
			}
			want := all(plain)
			require.Len(t, want, 2000)
			require.Equal(t, want, all(reused))
			require.Equal(t, want, all(committed))

			// After the reads above grew them, a loop of reads keeps the
			// same buffer and decoder: nothing is allocated for them (the
			// bytes are in BenchmarkReadRecords; a count of allocations
			// here would also count the Dir's own goroutines).
			buf, dec := unsafe.SliceData(rr.buf), rr.r
			for range 5 {
				for off := int64(0); off < l.LogEndOffset(); {
					next, err := reused(off, func(*record.Record, *record.BatchHeader) error { return nil })
					require.NoError(t, err)
					off = next
				}
			}
			require.Same(t, buf, unsafe.SliceData(rr.buf), "the read buffer is reused")
			require.Same(t, dec, rr.r, "the decoder is reused")
		})
	}
}
