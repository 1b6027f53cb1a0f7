package producer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// TestSplitsWhatTheLogCannotHold: a topic whose segment.bytes (or
// max.message.bytes) is below the producer's batches gets every record,
// in order, in batches split until they fit, as Kafka's producer splits a
// batch the broker refuses with MESSAGE_TOO_LARGE. Before, every record
// failed (500 of 500, the log empty) while Flush returned nil. Every codec,
// acks 0, 1 and all, idempotent or not, and a transaction read
// read_committed.
func TestSplitsWhatTheLogCannotHold(t *testing.T) {
	const n = 500
	limits := map[string]map[string]string{
		"segment.bytes":     {"segment.bytes": "1500"},
		"max.message.bytes": {"max.message.bytes": "1500"},
	}
	modes := []struct {
		name string
		mod  func(*Config)
	}{
		{"acks=0", func(c *Config) { c.Acks, c.EnableIdempotence = AcksNone, false }},
		{"acks=1", func(c *Config) { c.Acks, c.EnableIdempotence = AcksLeader, false }},
		{"acks=all idempotent", func(c *Config) { c.Acks, c.EnableIdempotence = AcksAll, true }},
		{"transactional", func(c *Config) { c.TransactionalID = "split" }},
	}
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		for limit, props := range limits {
			for _, mode := range modes {
				t.Run(limit+"/"+mode.name, func(t *testing.T) {
					d := openTxnDir(t, nil)
					_, err := d.CreateTopic(context.Background(), "small", 2, props)
					require.NoError(t, err)
					p := newProducer(t, d, func(c *Config) {
						mode.mod(c)
						c.CompressionType = codec
						c.Linger = 50 * time.Millisecond // full 16 KiB batches
					})
					txn := mode.name == "transactional"
					if txn {
						require.NoError(t, p.InitTransactions(context.Background()))
						require.NoError(t, p.BeginTransaction())
					}
					var mu sync.Mutex
					offsets := map[int32][]int64{}
					var failures []error
					rng := rand.New(rand.NewPCG(1, 2))
					for i := range n {
						value := make([]byte, 60) // random: the codecs cannot shrink the batches below the limit
						for j := range value {
							value[j] = byte(rng.Uint32())
						}
						_, err := p.Send(context.Background(), &Record{Topic: "small", Partition: ptr(int32(i % 2)),
							Key: fmt.Appendf(nil, "k%03d", i), Value: value},
							func(md RecordMetadata, err error) {
								mu.Lock()
								defer mu.Unlock()
								if err != nil {
									failures = append(failures, err)
									return
								}
								offsets[md.Partition] = append(offsets[md.Partition], md.Offset)
							})
						require.NoError(t, err)
					}
					require.NoError(t, p.Flush(context.Background()))
					if txn {
						require.NoError(t, p.CommitTransaction(context.Background()))
					}
					require.Empty(t, failures)
					require.Positive(t, p.Stats().Splits, "the batches were split")
					for part := range int32(2) {
						recs := readAll(t, d, "small", part)
						require.Len(t, recs, n/2, "partition %d", part)
						for j, r := range recs {
							require.Equal(t, fmt.Sprintf("k%03d", 2*j+int(part)), string(r.Key), "in order")
						}
						if mode.name != "acks=0" {
							require.Len(t, offsets[part], n/2)
							for j := 1; j < len(offsets[part]); j++ {
								require.Greater(t, offsets[part][j], offsets[part][j-1], "each record its own offset, in order")
							}
							for j, o := range offsets[part] {
								require.Equal(t, fmt.Sprintf("k%03d", 2*j+int(part)), string(recs[indexOf(recs, o)].Key), "the offset reported is the record's")
							}
						}
						if txn {
							require.Len(t, committedValues(t, d, "small", part), n/2, "read_committed")
						}
					}
					// The producer carries on: its sequences follow the parts.
					if txn {
						require.NoError(t, p.BeginTransaction())
					}
					md, err := p.Send(context.Background(), &Record{Topic: "small", Partition: ptr(0), Value: []byte("after")}, nil)
					require.NoError(t, err)
					if txn {
						require.NoError(t, p.CommitTransaction(context.Background()))
					} else {
						require.NoError(t, p.Flush(context.Background()))
					}
					if mode.name != "acks=0" {
						got, err := md.Wait(context.Background())
						require.NoError(t, err)
						want := int64(n / 2)
						if txn {
							want = committedEnd(t, d) // after the first transaction's marker
						}
						require.Equal(t, want, got.Offset)
					}
				})
			}
		}
	})
}

// committedEnd is the offset the record after the first transaction took
// in small-0: its records, then its COMMIT marker.
func committedEnd(t *testing.T, d *log.Dir) int64 {
	t.Helper()
	l, err := d.Partition("small", 0)
	require.NoError(t, err)
	return l.LogEndOffset() - 2 // the record, then the second transaction's marker
}

// indexOf finds the record at offset o.
func indexOf(recs []record.Record, o int64) int {
	for i, r := range recs {
		if r.Offset == o {
			return i
		}
	}
	return -1
}

// TestSplitLeavesOneTooLargeRecordFailed: a record that alone exceeds the
// segment fails with ErrRecordTooLarge (the producer's and the log's),
// and only it: the records batched with it are appended around it.
func TestSplitLeavesOneTooLargeRecordFailed(t *testing.T) {
	d := openDir(t, nil)
	_, err := d.CreateTopic(context.Background(), "small", 1, map[string]string{"segment.bytes": "1000"})
	require.NoError(t, err)
	p := newProducer(t, d, func(c *Config) { c.Linger = 50 * time.Millisecond })
	var futures []Future
	for i := range 30 {
		v := []byte(fmt.Sprint(i))
		if i == 17 {
			v = make([]byte, 2000)
		}
		f, err := p.Send(context.Background(), &Record{Topic: "small", Value: v}, nil)
		require.NoError(t, err)
		futures = append(futures, f)
	}
	require.NoError(t, p.Flush(context.Background()))
	var values []string
	for i, f := range futures {
		md, err := f.Wait(context.Background())
		if i == 17 {
			require.ErrorIs(t, err, ErrRecordTooLarge)
			require.ErrorIs(t, err, log.ErrRecordTooLarge)
			require.Equal(t, int64(-1), md.Offset)
			continue
		}
		require.NoError(t, err, "record %d", i)
		values = append(values, fmt.Sprint(i))
	}
	var got []string
	for _, r := range readAll(t, d, "small", 0) {
		got = append(got, string(r.Value))
	}
	require.Equal(t, values, got)
	require.Equal(t, int64(1), p.Stats().Errors)
}
