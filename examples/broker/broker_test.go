package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// TestRun runs the program with each -compression and checks everything
// it prints: the same records and offsets whatever the codec, and a fetch
// of the second and third batches as they were encoded (228 bytes
// uncompressed).
func TestRun(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		fetched := 0
		for i := 1; i <= 2; i++ {
			b, err := demoBatch(i, codec)
			require.NoError(t, err)
			fetched += len(b)
		}
		if codec == record.None {
			require.Equal(t, 228, fetched)
		}
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, run([]string{"-dir", t.TempDir(), "-compression", codec.String()}, &stdout, &stderr), stderr.String())
		require.Equal(t, fmt.Sprintf(`produced offsets 0-1
produced offsets 2-3
produced offsets 4-5
refused a batch with base offset 42: invalid record true
fetched %d bytes from offset 2, high watermark 6
  offset 2 sensor-1=reading 1.0
  offset 3 sensor-2=reading 1.5
  offset 4 sensor-1=reading 2.0
  offset 5 sensor-2=reading 2.5
list offsets earliest: offset 0 timestamp -1 found true
list offsets latest: offset 6 timestamp -1 found true
list offsets max timestamp: offset 5 timestamp 1700000002500 found true
list offsets time 1700000001200: offset 3 timestamp 1700000001500 found true
`, fetched), stdout.String())
	})
}

// TestRunBadCompression checks that an unknown -compression is a usage
// error.
func TestRunBadCompression(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 2, run([]string{"-dir", t.TempDir(), "-compression", "brotli"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), `unknown`)
	require.Contains(t, stderr.String(), `"brotli"`)
	require.Empty(t, stdout.String())
}

// serve opens a log directory with the topics given, serves it on a
// loopback TCP port and returns the Dir and a connected client. Everything
// is closed when the test ends.
func serve(t *testing.T, topics map[string]map[string]string) (*log.Dir, *Client) {
	t.Helper()
	ctx := context.Background()
	d, err := log.Open(ctx, t.TempDir(), log.DefaultConfig())
	require.NoError(t, err)
	for name, props := range topics {
		_, err := d.CreateTopic(ctx, name, 1, props)
		require.NoError(t, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := NewServer(DirHandler{Dir: d})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, conn.Close())
		srv.Close()
		require.NoError(t, <-served)
		require.NoError(t, d.Close())
	})
	return d, NewClient(conn)
}

// producerRecords are the n records of producerBatch: keys 'a'.., values
// of 100 bytes first+i, a header "i".
func producerRecords(first, n int) []record.Record {
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{
			OffsetDelta: int32(i),
			Timestamp:   1700000000000 + int64(first+i),
			Key:         []byte{byte('a' + i%26)},
			Value:       bytes.Repeat([]byte{byte(first + i)}, 100),
			Headers:     []record.Header{{Key: []byte("i"), Value: []byte{byte(i)}}},
		}
	}
	return recs
}

// producerBatch encodes producerRecords(first, n) as a producer would,
// compressed with codec.
func producerBatch(t *testing.T, codec record.Compression, first, n int) []byte {
	t.Helper()
	return encodeBatch(t, codec, producerRecords(first, n))
}

// encodeBatch encodes recs as a producer without idempotence would.
func encodeBatch(t *testing.T, codec record.Compression, recs []record.Record) []byte {
	t.Helper()
	b, err := record.AppendBatch(nil, record.BatchHeader{
		PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		Attributes: record.Attributes(0).WithCompression(codec),
	}, record.DefaultLevel, recs)
	require.NoError(t, err)
	return b
}

// describe prints a record for comparisons: offset, key, value, headers.
func describe(offset int64, r *record.Record) string {
	s := fmt.Sprintf("%d %x=%x", offset, r.Key, r.Value)
	for _, h := range r.Headers {
		s += fmt.Sprintf(" %s:%x", h.Key, h.Value)
	}
	return s
}

// decodeBatches decodes fetched batches, CRCs checked, and describes each
// record.
func decodeBatches(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	r := record.NewReader(record.ReaderOptions{})
	for len(b) > 0 {
		n, err := record.BatchSize(b)
		require.NoError(t, err)
		require.NoError(t, r.Reset(b[:n]))
		for r.Next() {
			out = append(out, describe(r.Record().Offset, r.Record()))
		}
		require.NoError(t, r.Err())
		b = b[n:]
	}
	return out
}

// TestFetchReturnsAppendedBytes produces batches over the connection, for
// each codec (with an uncompressed batch among them, as producers with
// different settings leave), and checks that a fetch returns each one
// byte for byte, with the base offset the log assigned and the leader
// epoch it stamped (neither covered by the CRC) and, on a LogAppendTime
// topic, the append time (with a new CRC); and that the fetched batches
// decode to the records produced.
func TestFetchReturnsAppendedBytes(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		_, c := serve(t, map[string]map[string]string{
			"create-time": nil,
			"append-time": {"message.timestamp.type": "LogAppendTime"},
		})
		for _, topic := range []string{"create-time", "append-time"} {
			t.Run(topic, func(t *testing.T) {
				var all []byte
				var records []string // what the batches hold, as describe prints it
				next := int64(0)
				for i, codec := range []record.Compression{codec, record.None, codec, codec} {
					batch := producerBatch(t, codec, i*10, 5+i)
					for j, r := range producerRecords(i*10, 5+i) {
						records = append(records, describe(next+int64(j), &r))
					}
					want := bytes.Clone(batch)
					base, last, appendTime, err := c.Produce(topic, 0, batch)
					require.NoError(t, err)
					require.Equal(t, next, base)
					require.Equal(t, base+int64(4+i), last)
					next = last + 1

					require.NoError(t, record.SetBaseOffset(want, base))
					require.NoError(t, record.SetPartitionLeaderEpoch(want, 0))
					if topic == "append-time" {
						require.Positive(t, appendTime)
						require.NoError(t, record.SetLogAppendTime(want, appendTime))
					} else {
						require.Equal(t, int64(-1), appendTime)
					}
					got, hw, err := c.Fetch(topic, 0, base+2, len(want)) // an offset inside the batch
					require.NoError(t, err)
					require.Equal(t, next, hw)
					require.Equal(t, want, got, "the fetched batch is the appended one, byte for byte")
					all = append(all, want...)
				}
				got, _, err := c.Fetch(topic, 0, 0, 1<<20)
				require.NoError(t, err)
				require.Equal(t, all, got)
				require.Equal(t, records, decodeBatches(t, got), "the fetched batches hold the records produced")

				got, _, err = c.Fetch(topic, 0, next, 1<<20)
				require.NoError(t, err)
				require.Empty(t, got, "nothing at the log end offset yet")
			})
		}
	})
}

// TestFetchToFile sends a fetch result to an *os.File, the other writer
// Slice.WriteTo moves without a user-space copy on Linux, for each codec.
func TestFetchToFile(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		d, c := serve(t, map[string]map[string]string{"t": nil})
		batch := producerBatch(t, codec, 0, 3)
		_, _, _, err := c.Produce("t", 0, bytes.Clone(batch))
		require.NoError(t, err)

		res, err := DirHandler{Dir: d}.Fetch("t", 0, 0, 1<<20)
		require.NoError(t, err)
		defer res.Release()
		f, err := os.Create(filepath.Join(t.TempDir(), "fetched"))
		require.NoError(t, err)
		n, err := res.Slice.WriteTo(f)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.Equal(t, int64(len(batch)), n)
		got, err := os.ReadFile(f.Name())
		require.NoError(t, err)
		require.NoError(t, record.SetPartitionLeaderEpoch(batch, 0))
		require.Equal(t, batch, got)
	})
}

// incompressibleBatch encodes n records of 100 pseudo-random bytes each:
// no codec brings it under n × 100 bytes.
func incompressibleBatch(t *testing.T, codec record.Compression, n int) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	recs := producerRecords(0, n)
	for i := range recs {
		for j := range recs[i].Value {
			recs[i].Value[j] = byte(rng.Uint32())
		}
	}
	return encodeBatch(t, codec, recs)
}

// TestProduceRefused checks that bad batches, compressed with each codec,
// are refused with the log's typed errors, directly and through the
// connection.
func TestProduceRefused(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		d, c := serve(t, map[string]map[string]string{
			"t":     nil,
			"small": {"max.message.bytes": "200"},
		})
		cases := []struct {
			name  string
			topic string
			batch func() []byte
			want  error
		}{
			{"corrupt CRC", "t", func() []byte {
				b := producerBatch(t, codec, 0, 2)
				b[len(b)-1] ^= 0xff
				return b
			}, record.ErrCorrupt},
			{"base offset not 0", "t", func() []byte {
				b := producerBatch(t, codec, 0, 2)
				require.NoError(t, record.SetBaseOffset(b, 42))
				return b
			}, log.ErrInvalidRecord},
			{"control batch", "t", func() []byte {
				b, err := record.AppendEndTxnMarkerBatch(nil, 0, -1, 1, 0, 1700000000000, record.EndTxnMarker{Type: record.ControlCommit})
				require.NoError(t, err)
				return b
			}, log.ErrInvalidRecord},
			{"too large", "small", func() []byte { return incompressibleBatch(t, codec, 5) }, log.ErrRecordTooLarge},
			{"unknown topic", "nope", func() []byte { return producerBatch(t, codec, 0, 1) }, log.ErrUnknownTopicOrPartition},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := DirHandler{Dir: d}.Produce(tc.topic, 0, tc.batch())
				require.ErrorIs(t, err, tc.want)

				_, _, _, err = c.Produce(tc.topic, 0, tc.batch())
				require.ErrorIs(t, err, tc.want)
				var remote *RemoteError
				require.True(t, errors.As(err, &remote))
			})
		}
		var corrupt *record.CorruptError
		_, err := DirHandler{Dir: d}.Produce("t", 0, cases[0].batch())
		require.True(t, errors.As(err, &corrupt), "a corrupt batch says where: %v", err)

		for _, topic := range []string{"t", "small"} {
			l, err := d.Partition(topic, 0)
			require.NoError(t, err)
			require.Equal(t, int64(0), l.LogEndOffset(), "%s: nothing was appended", topic)
		}
		_, _, err = c.Fetch("t", 0, 5, 1<<20)
		require.ErrorIs(t, err, log.ErrOffsetOutOfRange)
	})
}

// TestListOffsets checks Kafka's ListOffsets answers, for batches of each
// codec: the special timestamps and lookups by time, which find a record
// inside a batch.
func TestListOffsets(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		_, c := serve(t, map[string]map[string]string{"t": nil})
		for i := range 3 {
			_, _, _, err := c.Produce("t", 0, producerBatch(t, codec, i*10, 4)) // timestamps i*10 .. i*10+3
			require.NoError(t, err)
		}
		cases := []struct {
			name string
			ts   int64
			want log.OffsetAndTimestamp
			ok   bool
		}{
			{"earliest", log.EarliestTimestamp, log.OffsetAndTimestamp{Offset: 0, Timestamp: -1}, true},
			{"latest", log.LatestTimestamp, log.OffsetAndTimestamp{Offset: 12, Timestamp: -1}, true},
			{"max timestamp", log.MaxTimestamp, log.OffsetAndTimestamp{Offset: 11, Timestamp: 1700000000023}, true},
			{"before everything", 1600000000000, log.OffsetAndTimestamp{Offset: 0, Timestamp: 1700000000000}, true},
			{"exact", 1700000000011, log.OffsetAndTimestamp{Offset: 5, Timestamp: 1700000000011}, true},
			{"between batches", 1700000000004, log.OffsetAndTimestamp{Offset: 4, Timestamp: 1700000000010}, true},
			{"after everything", 1800000000000, log.OffsetAndTimestamp{}, false},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ot, ok, err := c.ListOffsets("t", 0, tc.ts)
				require.NoError(t, err)
				require.Equal(t, tc.ok, ok)
				if ok {
					require.Equal(t, tc.want, ot)
				}
			})
		}
	})
}
