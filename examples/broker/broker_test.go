package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// TestRun runs the program and checks everything it prints.
func TestRun(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-dir", t.TempDir()}, &stdout, &stderr), stderr.String())
	require.Equal(t, `produced offsets 0-1
produced offsets 2-3
produced offsets 4-5
refused a batch with base offset 42: invalid record true
fetched 228 bytes from offset 2, high watermark 6
  offset 2 sensor-1=reading 1.0
  offset 3 sensor-2=reading 1.5
  offset 4 sensor-1=reading 2.0
  offset 5 sensor-2=reading 2.5
list offsets earliest: offset 0 timestamp -1 found true
list offsets latest: offset 6 timestamp -1 found true
list offsets max timestamp: offset 5 timestamp 1700000002500 found true
list offsets time 1700000001200: offset 3 timestamp 1700000001500 found true
`, stdout.String())
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

// producerBatch encodes n records as a producer would.
func producerBatch(t *testing.T, codec record.Compression, first, n int) []byte {
	t.Helper()
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
	b, err := record.AppendBatch(nil, record.BatchHeader{
		PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		Attributes: record.Attributes(0).WithCompression(codec),
	}, record.DefaultLevel, recs)
	require.NoError(t, err)
	return b
}

// TestFetchReturnsAppendedBytes produces batches over the connection and
// checks that a fetch returns each one byte for byte, with the base offset
// the log assigned and the leader epoch it stamped (neither covered by the
// CRC) and, on a LogAppendTime topic, the append time (with a new CRC).
func TestFetchReturnsAppendedBytes(t *testing.T) {
	_, c := serve(t, map[string]map[string]string{
		"create-time": nil,
		"append-time": {"message.timestamp.type": "LogAppendTime"},
	})
	for _, topic := range []string{"create-time", "append-time"} {
		t.Run(topic, func(t *testing.T) {
			var all []byte
			next := int64(0)
			for i, codec := range []record.Compression{record.None, record.LZ4, record.Zstd, record.None} {
				batch := producerBatch(t, codec, i*10, 5+i)
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

			got, _, err = c.Fetch(topic, 0, next, 1<<20)
			require.NoError(t, err)
			require.Empty(t, got, "nothing at the log end offset yet")
		})
	}
}

// TestFetchToFile sends a fetch result to an *os.File, the other writer
// Slice.WriteTo moves without a user-space copy on Linux.
func TestFetchToFile(t *testing.T) {
	d, c := serve(t, map[string]map[string]string{"t": nil})
	batch := producerBatch(t, record.None, 0, 3)
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
}

// TestProduceRefused checks that bad batches are refused with the log's
// typed errors, directly and through the connection.
func TestProduceRefused(t *testing.T) {
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
			b := producerBatch(t, record.None, 0, 2)
			b[len(b)-1] ^= 0xff
			return b
		}, record.ErrCorrupt},
		{"base offset not 0", "t", func() []byte {
			b := producerBatch(t, record.None, 0, 2)
			require.NoError(t, record.SetBaseOffset(b, 42))
			return b
		}, log.ErrInvalidRecord},
		{"control batch", "t", func() []byte {
			b, err := record.AppendEndTxnMarkerBatch(nil, 0, -1, 1, 0, 1700000000000, record.EndTxnMarker{Type: record.ControlCommit})
			require.NoError(t, err)
			return b
		}, log.ErrInvalidRecord},
		{"too large", "small", func() []byte { return producerBatch(t, record.None, 0, 5) }, log.ErrRecordTooLarge},
		{"unknown topic", "nope", func() []byte { return producerBatch(t, record.None, 0, 1) }, log.ErrUnknownTopicOrPartition},
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

	l, err := d.Partition("t", 0)
	require.NoError(t, err)
	require.Equal(t, int64(0), l.LogEndOffset(), "nothing was appended")
	_, _, err = c.Fetch("t", 0, 5, 1<<20)
	require.ErrorIs(t, err, log.ErrOffsetOutOfRange)
}

// TestListOffsets checks Kafka's ListOffsets answers: the special
// timestamps and lookups by time.
func TestListOffsets(t *testing.T) {
	_, c := serve(t, map[string]map[string]string{"t": nil})
	for i := range 3 {
		_, _, _, err := c.Produce("t", 0, producerBatch(t, record.None, i*10, 4)) // timestamps i*10 .. i*10+3
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
}
