package producer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestCompressInParallel: batches of eight partitions flushed at once are
// drained in one round, compressed on several goroutines, then stamped
// and appended in order. For every codec and acks setting each partition
// holds its records in order, in one batch of that codec, carrying the
// producer's id and sequence 0 when idempotent, and every callback saw
// its record's offset.
func TestCompressInParallel(t *testing.T) {
	for _, codec := range []record.Compression{record.Gzip, record.Snappy, record.LZ4, record.Zstd} {
		for _, acks := range []Acks{AcksNone, AcksLeader, AcksAll} {
			t.Run(fmt.Sprintf("%v/acks=%d", codec, acks), func(t *testing.T) {
				const parts, per = 8, 60
				d := openDir(t, map[string]int32{"t": parts})
				p := newProducer(t, d, func(c *Config) {
					c.CompressionType = codec
					c.Acks = acks
					c.EnableIdempotence = acks == AcksAll
					c.Linger = time.Minute // nothing is ready before Flush
					c.DeliveryTimeout = 2 * time.Hour
				})
				ctx := context.Background()
				var mu sync.Mutex
				offsets := map[int32][]int64{}
				var errs []error
				for i := range parts * per {
					part := int32(i % parts)
					_, err := p.Send(ctx, &Record{Topic: "t", Partition: ptr(part), Value: fmt.Appendf(nil, `{"n":%d,"pad":"%040d"}`, i, i)},
						func(md RecordMetadata, err error) {
							mu.Lock()
							defer mu.Unlock()
							if err != nil {
								errs = append(errs, err)
								return
							}
							offsets[md.Partition] = append(offsets[md.Partition], md.Offset)
						})
					require.NoError(t, err)
				}
				require.NoError(t, p.Flush(ctx))
				mu.Lock()
				require.Empty(t, errs)
				mu.Unlock()
				for part := range int32(parts) {
					l, err := d.Partition("t", part)
					require.NoError(t, err)
					var headers []record.BatchHeader
					var values []string
					next, err := l.ReadRecords(0, 1<<20, func(r *record.Record, h *record.BatchHeader) error {
						if len(headers) == 0 || headers[len(headers)-1].BaseOffset != h.BaseOffset {
							headers = append(headers, *h)
						}
						values = append(values, string(r.Value))
						return nil
					})
					require.NoError(t, err)
					require.Equal(t, int64(per), next)
					for j, v := range values {
						i := j*parts + int(part)
						require.Equal(t, fmt.Sprintf(`{"n":%d,"pad":"%040d"}`, i, i), v, "partition %d record %d", part, j)
					}
					require.Len(t, headers, 1, "one batch per partition")
					require.Equal(t, codec, headers[0].Attributes.Compression())
					if acks == AcksAll {
						require.GreaterOrEqual(t, headers[0].ProducerID, int64(0))
						require.Equal(t, int32(0), headers[0].BaseSequence)
						require.Equal(t, int32(per-1), headers[0].LastSequence())
					} else {
						require.Equal(t, record.NoProducerID, headers[0].ProducerID)
					}
					want := make([]int64, per)
					for j := range want {
						want[j] = int64(j)
						if acks == AcksNone {
							want[j] = -1 // acks=0 completes before the append
						}
					}
					mu.Lock()
					require.Equal(t, want, offsets[part])
					mu.Unlock()
				}
			})
		}
	}
}
