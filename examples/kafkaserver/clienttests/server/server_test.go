package server_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
	kllog "github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// codecs are the producer codecs of franz-go, by name.
var codecs = []struct {
	name  string
	codec kgo.CompressionCodec
	want  record.Compression
}{
	{"none", kgo.NoCompression(), record.None},
	{"gzip", kgo.GzipCompression(), record.Gzip},
	{"snappy", kgo.SnappyCompression(), record.Snappy},
	{"lz4", kgo.Lz4Compression(), record.LZ4},
	{"zstd", kgo.ZstdCompression(), record.Zstd},
}

// acks are the three acks settings; idempotence needs acks=all.
var acks = []struct {
	name string
	opts []kgo.Opt
}{
	{"acks=0", []kgo.Opt{kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite()}},
	{"acks=1", []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}},
	{"acks=all idempotent", []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks())}},
}

func client(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

// serveDir serves d on a loopback address until the test ends, then
// closes the server and d.
func serveDir(t *testing.T, d *kllog.Dir) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv, err := server.New(d, server.DefaultConfig())
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), ln) }()
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		if err := <-served; err != nil && !errors.Is(err, server.ErrServerClosed) {
			t.Error(err)
		}
		require.NoError(t, d.Close())
	})
	return ln.Addr().String()
}

// coordinatorReady looks a key of type typ (0 group, 1 transaction)
// up until its coordinator is there: a fresh server answers the first
// lookup COORDINATOR_NOT_AVAILABLE while it makes the coordinator's
// internal topic, as Kafka does, and kgo's requests to a coordinator do
// not retry that answer.
func coordinatorReady(t *testing.T, cl *kgo.Client, key string, typ int8) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorType = key, typ
		req.CoordinatorKeys = []string{key}
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		code := resp.ErrorCode
		if len(resp.Coordinators) > 0 {
			code = resp.Coordinators[0].ErrorCode
		}
		if code == 0 {
			return
		}
		require.Equal(t, int16(15), code, "COORDINATOR_NOT_AVAILABLE, else the coordinator")
		time.Sleep(10 * time.Millisecond)
	}
}

func createTopic(t *testing.T, cl *kgo.Client, name string, partitions int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, 1
	req.Topics = []kmsg.CreateTopicsRequestTopic{rt}
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	require.Len(t, resp.Topics, 1)
	require.Zero(t, resp.Topics[0].ErrorCode, "creating %s: %v", name, resp.Topics[0].ErrorMessage)
}

// consume reads n records from topic with a fresh direct (groupless)
// consumer from the start.
func consume(t *testing.T, addr, topic string, n int, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	cl := client(t, addr, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "got %d of %d records", len(got), n)
		fs.EachError(func(topic string, p int32, err error) { require.NoError(t, err, "%s-%d", topic, p) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, r) })
	}
	return got
}

// TestProduceConsume produces keyed records with headers through the
// server with every codec and every acks setting, to three partitions,
// consumes them with a direct consumer and checks each record, and
// checks with kafkalite's own API that the batches on disk carry the
// codec the producer used.
func TestProduceConsume(t *testing.T) {
	srv := servertest.Start(t, nil)
	for _, c := range codecs {
		for _, a := range acks {
			t.Run(c.name+"/"+a.name, func(t *testing.T) {
				topic := "t-" + c.name + "-" + strings.NewReplacer("=", "", " ", "-").Replace(a.name)
				prod := client(t, srv.Addr, append([]kgo.Opt{kgo.ProducerBatchCompression(c.codec), kgo.ProducerLinger(0)}, a.opts...)...)
				createTopic(t, prod, topic, 3)
				const n = 300
				// Values that compress, so that the producer keeps its codec
				// (franz-go sends a batch uncompressed when that is smaller).
				pad := strings.Repeat("kafkalite ", 20)
				ctx := context.Background()
				var recs []*kgo.Record
				for i := range n {
					recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i%17), Value: fmt.Appendf(nil, "v%04d%s", i, pad),
						Headers: []kgo.RecordHeader{{Key: "i", Value: []byte(strconv.Itoa(i))}}})
				}
				require.NoError(t, prod.ProduceSync(ctx, recs...).FirstErr())

				got := consume(t, srv.Addr, topic, n)
				require.Len(t, got, n)
				seen := map[string]bool{}
				for _, r := range got {
					require.Len(t, r.Headers, 1)
					i, err := strconv.Atoi(string(r.Headers[0].Value))
					require.NoError(t, err)
					require.Equal(t, fmt.Sprintf("k%d", i%17), string(r.Key))
					require.Equal(t, fmt.Sprintf("v%04d%s", i, pad), string(r.Value))
					seen[string(r.Value)] = true
				}
				require.Len(t, seen, n, "every record once")

				// What the server wrote is kafkalite's: its API reads it.
				total := int64(0)
				for p := range int32(3) {
					l, err := srv.Dir.Partition(topic, p)
					require.NoError(t, err)
					for off := l.LogStartOffset(); off < l.LogEndOffset(); {
						off, err = l.ReadRecords(off, 1<<20, func(_ *record.Record, h *record.BatchHeader) error {
							if h.Attributes.Compression() != c.want {
								return fmt.Errorf("batch at %d compressed with %v, want %v", h.BaseOffset, h.Attributes.Compression(), c.want)
							}
							total++
							return nil
						})
						require.NoError(t, err)
					}
				}
				require.Equal(t, int64(n), total)
			})
		}
	}
}

// TestListOffsets asks for the earliest, the latest and the max-timestamp
// offsets and for offsets by time, over records with chosen timestamps.
func TestListOffsets(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr, kgo.ProducerLinger(0))
	createTopic(t, cl, "times", 1)
	base := time.UnixMilli(1_700_000_000_000)
	ctx := context.Background()
	for i := range 10 {
		ts := base.Add(time.Duration(i) * time.Minute)
		if i == 7 {
			ts = base.Add(time.Hour) // the max timestamp
		}
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "times", Value: []byte{byte(i)}, Timestamp: ts}).FirstErr())
	}
	ask := func(ts int64) kmsg.ListOffsetsResponseTopicPartition {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "times"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = 0, ts
		rt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{rp}
		req.Topics = []kmsg.ListOffsetsRequestTopic{rt}
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		return resp.Topics[0].Partitions[0]
	}
	for _, tc := range []struct {
		name string
		ts   int64
		want int64
	}{
		{"earliest", -2, 0},
		{"latest", -1, 10},
		{"max timestamp", -3, 7},
		{"by time, exact", base.Add(3 * time.Minute).UnixMilli(), 3},
		{"by time, between", base.Add(3*time.Minute + time.Second).UnixMilli(), 4},
		{"by time, before all", base.Add(-time.Hour).UnixMilli(), 0},
	} {
		got := ask(tc.ts)
		require.Zero(t, got.ErrorCode, tc.name)
		require.Equal(t, tc.want, got.Offset, tc.name)
	}
	after := ask(base.Add(2 * time.Hour).UnixMilli())
	require.Zero(t, after.ErrorCode)
	require.Equal(t, int64(-1), after.Offset, "no record that recent")
}

// TestAdmin: CreateTopics (and its refusals), CreatePartitions,
// DescribeConfigs, DeleteRecords and DeleteTopics, as a client sends them.
func TestAdmin(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr)
	ctx := context.Background()

	create := func(name string, parts int32, rf int16, configs map[string]string, validate bool) kmsg.CreateTopicsResponseTopic {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.ValidateOnly = validate
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, parts, rf
		for k, v := range configs {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = k, &v
			rt.Configs = append(rt.Configs, c)
		}
		req.Topics = []kmsg.CreateTopicsRequestTopic{rt}
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		return resp.Topics[0]
	}
	got := create("orders", 2, -1, map[string]string{"retention.ms": "3600000"}, false)
	require.Zero(t, got.ErrorCode)
	require.Equal(t, int32(2), got.NumPartitions)
	require.NotEqual(t, [16]byte{}, got.TopicID)
	for _, tc := range []struct {
		name  string
		topic string
		parts int32
		rf    int16
		cfg   map[string]string
		code  int16
	}{
		{"exists", "orders", 1, 1, nil, 36},
		{"replication factor 3", "rf3", 1, 3, nil, 38},
		{"zero partitions", "zero", 0, 1, nil, 37},
		{"bad name", "bad/name", 1, 1, nil, 17},
		{"bad config", "badcfg", 1, 1, map[string]string{"retention.ms": "soon"}, 40},
	} {
		require.Equal(t, tc.code, create(tc.topic, tc.parts, tc.rf, tc.cfg, false).ErrorCode, tc.name)
	}
	require.Zero(t, create("later", 1, 1, nil, true).ErrorCode, "validate only")
	_, err := srv.Dir.DescribeTopic("later")
	require.Error(t, err, "validate only creates nothing")

	// CreatePartitions grows the topic.
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = "orders", 4
	cp.Topics = []kmsg.CreatePartitionsRequestTopic{cpt}
	cpr, err := cp.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, cpr.Topics[0].ErrorCode)
	td, err := srv.Dir.DescribeTopic("orders")
	require.NoError(t, err)
	require.Equal(t, int32(4), td.Partitions)

	// DescribeConfigs shows the override.
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName, dr.ConfigNames = 2, "orders", []string{"retention.ms", "cleanup.policy"}
	dc.Resources = []kmsg.DescribeConfigsRequestResource{dr}
	dcr, err := dc.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, dcr.Resources[0].ErrorCode)
	values := map[string]string{}
	for _, c := range dcr.Resources[0].Configs {
		values[c.Name] = *c.Value
	}
	require.Equal(t, map[string]string{"retention.ms": "3600000", "cleanup.policy": "delete"}, values)

	// DeleteRecords moves the log start offset.
	require.NoError(t, client(t, srv.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner())).ProduceSync(ctx,
		&kgo.Record{Topic: "orders", Value: []byte("a")}, &kgo.Record{Topic: "orders", Value: []byte("b")},
		&kgo.Record{Topic: "orders", Value: []byte("c")}).FirstErr())
	del := kmsg.NewPtrDeleteRecordsRequest()
	delt := kmsg.NewDeleteRecordsRequestTopic()
	delt.Topic = "orders"
	delp := kmsg.NewDeleteRecordsRequestTopicPartition()
	delp.Partition, delp.Offset = 0, 2
	delt.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{delp}
	del.Topics = []kmsg.DeleteRecordsRequestTopic{delt}
	delr, err := del.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, delr.Topics[0].Partitions[0].ErrorCode)
	require.Equal(t, int64(2), delr.Topics[0].Partitions[0].LowWatermark)

	// DeleteTopics removes it.
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dtt := kmsg.NewDeleteTopicsRequestTopic()
	name := "orders"
	dtt.Topic = &name
	dt.Topics = []kmsg.DeleteTopicsRequestTopic{dtt}
	dt.TopicNames = []string{name}
	dtr, err := dt.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.NotEmpty(t, dtr.Topics)
	require.Zero(t, dtr.Topics[0].ErrorCode)
	_, err = srv.Dir.DescribeTopic("orders")
	require.Error(t, err)
}

// TestAutoCreate: a producer to a topic that does not exist creates it
// through Metadata, as auto.create.topics.enable does, with
// num.partitions partitions; with auto-creation off it gets an error.
func TestAutoCreate(t *testing.T) {
	srv := servertest.Start(t, func(c *server.Config) { c.NumPartitions = 2 })
	cl := client(t, srv.Addr, kgo.AllowAutoTopicCreation())
	require.NoError(t, cl.ProduceSync(context.Background(), &kgo.Record{Topic: "auto", Value: []byte("x")}).FirstErr())
	td, err := srv.Dir.DescribeTopic("auto")
	require.NoError(t, err)
	require.Equal(t, int32(2), td.Partitions)

	off := servertest.Start(t, func(c *server.Config) { c.AutoCreateTopics = false })
	cl = client(t, off.Addr, kgo.AllowAutoTopicCreation(), kgo.RecordDeliveryTimeout(time.Second))
	require.Error(t, cl.ProduceSync(context.Background(), &kgo.Record{Topic: "auto", Value: []byte("x")}).FirstErr())
}

// rawRequest writes one request frame and returns the response frame's
// body (after the correlation id), or the error of the read (io.EOF when
// the server closed the connection).
func rawRequest(t *testing.T, c net.Conn, frame []byte) ([]byte, error) {
	t.Helper()
	_, err := c.Write(frame)
	require.NoError(t, err)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		return nil, err
	}
	return body[4:], nil
}

// requestFrame builds a request frame with a v1 header.
func requestFrame(key, version int16, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, 7)
	b = binary.BigEndian.AppendUint16(b, 1)
	b = append(b, 'x')
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// TestApiVersionsOfUnknownVersion: an ApiVersions above the served range
// is answered at version 0 with UNSUPPORTED_VERSION and the ranges.
func TestApiVersionsOfUnknownVersion(t *testing.T) {
	srv := servertest.Start(t, nil)
	c, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer c.Close()
	body, err := rawRequest(t, c, requestFrame(kmsg.ApiVersions.Int16(), 99, nil))
	require.NoError(t, err)
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	require.NoError(t, resp.ReadFrom(body))
	require.Equal(t, int16(35), resp.ErrorCode)
	require.Equal(t, server.SupportedAPIs(), resp.ApiKeys)
}

// TestHostileFrames: frames that are too large, negative, too short, of
// an unknown API, of a version outside the range or with a body that does
// not parse close their connection without an answer; the server goes on
// serving other connections.
func TestHostileFrames(t *testing.T) {
	srv := servertest.Start(t, func(c *server.Config) { c.MaxRequestBytes = 1 << 20 })
	size := func(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }
	metadata := kmsg.NewPtrMetadataRequest()
	metadata.SetVersion(9)
	truncated := requestFrame(kmsg.Metadata.Int16(), 9, metadata.AppendTo(nil))
	truncated = truncated[:len(truncated)-1]
	binary.BigEndian.PutUint32(truncated, uint32(len(truncated)-4))
	for _, tc := range []struct {
		name  string
		frame []byte
	}{
		{"larger than socket.request.max.bytes", size(1<<20 + 1)},
		{"negative size", size(0xffffffff)},
		{"too short for a header", append(size(3), 1, 2, 3)},
		{"unknown API key", requestFrame(9999, 0, nil)},
		{"a key not served", requestFrame(kmsg.LeaderAndISR.Int16(), 0, nil)},
		{"version above the range", requestFrame(kmsg.Metadata.Int16(), 99, nil)},
		{"Fetch below v4", requestFrame(kmsg.Fetch.Int16(), 3, nil)},
		{"body that does not parse", truncated},
		{"client id longer than the frame", append(size(12), 0, 3, 0, 0, 0, 0, 0, 1, 0x7f, 0, 0, 0)},
	} {
		c, err := net.Dial("tcp", srv.Addr)
		require.NoError(t, err)
		_, err = rawRequest(t, c, tc.frame)
		require.ErrorIs(t, err, io.EOF, tc.name)
		c.Close()
	}
	// Still serving.
	cl := client(t, srv.Addr)
	createTopic(t, cl, "after", 1)
}

// TestFetchLongPoll: a fetch at the log end waits (max.wait.ms, here a
// minute) until a record arrives, and returns with it at once: the
// consumer, polling an empty topic, gets the record produced after it
// started, long before the minute.
func TestFetchLongPoll(t *testing.T) {
	srv := servertest.Start(t, nil)
	prod := client(t, srv.Addr, kgo.ProducerLinger(0))
	createTopic(t, prod, "poll", 1)
	cons := client(t, srv.Addr, kgo.ConsumeTopics("poll"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan []*kgo.Record, 1)
	go func() { got <- cons.PollFetches(ctx).Records() }()
	require.NoError(t, prod.ProduceSync(context.Background(), &kgo.Record{Topic: "poll", Value: []byte("now")}).FirstErr())
	recs := <-got
	require.NoError(t, ctx.Err(), "the fetch waited for max.wait.ms instead of the append")
	require.Len(t, recs, 1)
	require.Equal(t, "now", string(recs[0].Value))
}

// TestRestart: the server stops and a new one serves the same directory
// on the same address; an idempotent producer and a consumer carry on
// across it, and every record is in the topic once, in order.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	start := func(ln net.Listener) (stop func()) {
		d, err := kllog.Open(context.Background(), dir, kllog.DefaultConfig())
		require.NoError(t, err)
		srv, err := server.New(d, server.DefaultConfig())
		require.NoError(t, err)
		served := make(chan error, 1)
		go func() { served <- srv.Serve(context.Background(), ln) }()
		return func() {
			require.NoError(t, srv.Close())
			require.ErrorIs(t, <-served, server.ErrServerClosed)
			require.NoError(t, d.Close())
		}
	}
	stop := start(ln)
	prod := client(t, addr, kgo.ProducerLinger(0), kgo.RecordRetries(100))
	createTopic(t, prod, "carry", 1)
	ctx := context.Background()
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			require.NoError(t, prod.ProduceSync(ctx, &kgo.Record{Topic: "carry", Value: []byte(strconv.Itoa(i))}).FirstErr())
		}
	}
	produce(0, 50)
	stop()
	ln, err = net.Listen("tcp", addr)
	require.NoError(t, err)
	stop = start(ln)
	defer stop()
	produce(50, 100) // the same client, reconnecting
	got := consume(t, addr, "carry", 100)
	for i, r := range got {
		require.Equal(t, strconv.Itoa(i), string(r.Value))
		require.Equal(t, int64(i), r.Offset)
	}
}

// TestIncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT on a
// topic's configuration, as kafka-configs sends them, and validate-only.
func TestIncrementalAlterConfigs(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr)
	createTopic(t, cl, "cfg", 1)
	alter := func(validate bool, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsResponseResource {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.ValidateOnly = validate
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName, r.Configs = kmsg.ConfigResourceTypeTopic, "cfg", ops
		req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{r}
		resp, err := req.RequestWith(context.Background(), cl)
		require.NoError(t, err)
		return resp.Resources[0]
	}
	op := func(name string, o kmsg.IncrementalAlterConfigOp, value string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = name, o, &value
		return c
	}
	overrides := func() map[string]string {
		td, err := srv.Dir.DescribeTopic("cfg")
		require.NoError(t, err)
		return td.Overrides
	}
	require.Zero(t, alter(false, op("retention.ms", 0, "60000"), op("segment.bytes", 0, "1048576")).ErrorCode)
	require.Equal(t, map[string]string{"retention.ms": "60000", "segment.bytes": "1048576"}, overrides())
	require.Zero(t, alter(false, op("segment.bytes", 1, "")).ErrorCode, "DELETE")
	require.Equal(t, map[string]string{"retention.ms": "60000"}, overrides())
	require.Zero(t, alter(false, op("cleanup.policy", 2, "compact")).ErrorCode, "APPEND")
	require.Equal(t, "delete,compact", overrides()["cleanup.policy"])
	require.Zero(t, alter(false, op("cleanup.policy", 3, "delete")).ErrorCode, "SUBTRACT")
	require.Equal(t, "compact", overrides()["cleanup.policy"])
	require.Equal(t, int16(40), alter(true, op("retention.ms", 0, "soon")).ErrorCode, "validate-only refuses a bad value")
	require.Zero(t, alter(true, op("retention.ms", 0, "1")).ErrorCode)
	require.Equal(t, "60000", overrides()["retention.ms"], "validate-only changes nothing")
}

// TestDescribeProducers: an idempotent producer's id and last sequence,
// as the partition's producer state holds them.
func TestDescribeProducers(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr, kgo.ProducerLinger(0))
	createTopic(t, cl, "prod", 1)
	for range 3 {
		require.NoError(t, cl.ProduceSync(context.Background(), &kgo.Record{Topic: "prod", Value: []byte("x")}).FirstErr())
	}
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = "prod", []int32{0}
	req.Topics = []kmsg.DescribeProducersRequestTopic{rt}
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	p := resp.Topics[0].Partitions[0]
	require.Zero(t, p.ErrorCode)
	require.Len(t, p.ActiveProducers, 1)
	require.Equal(t, int32(2), p.ActiveProducers[0].LastSequence)
	require.Equal(t, int64(-1), p.ActiveProducers[0].CurrentTxnStartOffset)
}

// TestFetchUnknownTopicID: a Fetch (v13+, by topic id) naming an id no
// topic has answers UNKNOWN_TOPIC_ID for its partitions, at once.
func TestFetchUnknownTopicID(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr)
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 60_000, 1, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.TopicID = [16]byte{1, 2, 3}
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.PartitionMaxBytes = 0, 1<<20
	rt.Partitions = []kmsg.FetchRequestTopicPartition{rp}
	req.Topics = []kmsg.FetchRequestTopic{rt}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.GreaterOrEqual(t, resp.Version, int16(13))
	require.Equal(t, int16(100), resp.Topics[0].Partitions[0].ErrorCode)
}

// TestFetchErrorsAnswerAtOnce: a long-polling fetch whose partition is out
// of range or does not exist is answered with the error at once, not
// after max.wait.ms.
func TestFetchErrorsAnswerAtOnce(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr)
	createTopic(t, cl, "fe", 1)
	md := kmsg.NewPtrMetadataRequest()
	name := "fe"
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: &name}}
	mresp, err := md.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	id := mresp.Topics[0].TopicID
	for _, tc := range []struct {
		name      string
		partition int32
		offset    int64
		code      int16
	}{
		{"offset out of range", 0, 99, 1},
		{"unknown partition", 7, 0, 3},
	} {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 60_000, 1, 1<<20
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = "fe", id // the client picks the version: by name or by id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = tc.partition, tc.offset, 1<<20
		rt.Partitions = []kmsg.FetchRequestTopicPartition{rp}
		req.Topics = []kmsg.FetchRequestTopic{rt}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := req.RequestWith(ctx, cl)
		cancel()
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.code, resp.Topics[0].Partitions[0].ErrorCode, tc.name)
	}
}
