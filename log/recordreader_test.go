package log

import (
	"runtime"
	"testing"

	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestRecordReaderReusesItsBuffers: a RecordReader reads the same records
// as Log.ReadRecords and Log.ReadCommittedRecords, over every codec, and a
// loop of its reads allocates a fraction of what Log.ReadRecords does,
// which allocates a read buffer (and a decoder) per call.
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

			// Bytes allocated by reading everything 5 times (after the
			// reads above grew rr's buffers): Log.ReadRecords allocates a
			// read buffer per call, the RecordReader only what Log.Read
			// itself needs to find the batches.
			allocated := func(r read) uint64 {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for range 5 {
					for off := int64(0); off < l.LogEndOffset(); {
						off, _ = r(off, func(*record.Record, *record.BatchHeader) error { return nil })
					}
				}
				runtime.ReadMemStats(&after)
				return after.TotalAlloc - before.TotalAlloc
			}
			plainBytes, reusedBytes := allocated(plain), allocated(reused)
			t.Logf("bytes allocated by 5 reads of everything: Log.ReadRecords %d, RecordReader %d", plainBytes, reusedBytes)
			require.Less(t, reusedBytes*4, plainBytes, "a RecordReader reuses its buffers")
		})
	}
}
