package server_test

import (
	"context"
	"crypto/rand"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// throttles collects the throttle times a franz-go client is told.
type throttles struct {
	mu  sync.Mutex
	all []time.Duration
}

func (h *throttles) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.all = append(h.all, d)
}

func (h *throttles) get() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.all...)
}

func setClientQuota(t *testing.T, adm *kadm.Client, entity kadm.ClientQuotaEntity, key string, v float64) {
	t.Helper()
	res, err := adm.AlterClientQuotas(context.Background(), []kadm.AlterClientQuotaEntry{{Entity: entity, Ops: []kadm.AlterClientQuotaOp{{Key: key, Value: v}}}})
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r.Err, r.ErrMessage)
	}
}

func str(s string) *string { return &s }

// produceFor produces 1 KiB records as fast as the client goes until the
// last of marks and returns the value bytes acknowledged at each mark and
// the throttle times the client was told.
func produceFor(t *testing.T, addr, clientID string, marks ...time.Duration) ([]int64, []time.Duration) {
	t.Helper()
	h := &throttles{}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID(clientID), kgo.DefaultProduceTopic("quota"),
		kgo.AllowAutoTopicCreation(), kgo.WithHooks(h), kgo.MaxBufferedRecords(4096),
		// Uncompressed: the quota counts the request's bytes, as Kafka's
		// does, and repeated values would take no room compressed.
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	require.NoError(t, err)
	defer cl.Close()
	var acked atomic.Int64
	value := make([]byte, 1024)
	_, _ = rand.Read(value)
	ctx, cancel := context.WithTimeout(context.Background(), marks[len(marks)-1])
	defer cancel()
	at := make([]atomic.Int64, len(marks))
	for i, m := range marks {
		time.AfterFunc(m, func() { at[i].Store(acked.Load()) })
	}
	for ctx.Err() == nil {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(r *kgo.Record, err error) {
			if err == nil {
				acked.Add(int64(len(r.Value)))
			}
		})
	}
	time.Sleep(10 * time.Millisecond) // the last mark's timer
	out := make([]int64, len(marks))
	for i := range at {
		out[i] = at[i].Load()
	}
	return out, h.get()
}

// TestClientQuotas: quotas set with franz-go's kadm (AlterClientQuotas)
// are described back, refused as Kafka refuses them (0, negative,
// fractional byte rates, unknown keys), and enforced: a producer over its
// client id's producer_byte_rate and a consumer over its consumer_byte_rate
// are told throttle times; a client without a quota is not.
func TestClientQuotas(t *testing.T) {
	srv := servertest.Start(t, nil)
	admCl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr))
	require.NoError(t, err)
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	ctx := context.Background()

	limited := kadm.ClientQuotaEntity{{Type: "client-id", Name: str("limited")}}
	setClientQuota(t, adm, limited, "producer_byte_rate", 100<<10)
	setClientQuota(t, adm, kadm.ClientQuotaEntity{{Type: "user", Name: nil}}, "consumer_byte_rate", 50<<10)
	described, err := adm.DescribeClientQuotas(ctx, false, nil)
	require.NoError(t, err)
	require.Len(t, described, 2)
	only, err := adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "client-id", MatchName: str("limited"), MatchType: 0}})
	require.NoError(t, err)
	require.Equal(t, kadm.ClientQuotaValues{{Key: "producer_byte_rate", Value: 100 << 10}}, only[0].Values)

	for _, bad := range []kadm.AlterClientQuotaOp{
		{Key: "producer_byte_rate", Value: 0}, {Key: "consumer_byte_rate", Value: -1},
		{Key: "producer_byte_rate", Value: 1.5}, {Key: "bogus", Value: 1},
	} {
		res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: limited, Ops: []kadm.AlterClientQuotaOp{bad}}})
		require.NoError(t, err)
		require.ErrorIs(t, res[0].Err, kerr.InvalidRequest, "%+v", bad)
	}
	_, err = adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "ip", MatchType: 2}})
	require.ErrorIs(t, err, kerr.InvalidRequest)

	bytes, seen := produceFor(t, srv.Addr, "limited", 2*time.Second)
	require.Positive(t, bytes[0])
	require.NotEmpty(t, seen, "the limited producer is throttled")
	_, seen = produceFor(t, srv.Addr, "free", time.Second)
	require.Empty(t, seen, "no quota, no throttle")

	// The consumer: every user's default consumer_byte_rate, 50 KiB/s
	// (ANONYMOUS here); the topic holds far more than that.
	h := &throttles{}
	cons, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.ClientID("reader"), kgo.ConsumeTopics("quota"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(h))
	require.NoError(t, err)
	defer cons.Close()
	var got int
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	for cctx.Err() == nil && len(h.get()) == 0 {
		fs := cons.PollFetches(cctx)
		got += fs.NumRecords()
	}
	// Its first full response (MaxBytes capped at 10 s of the quota, plus
	// the response's own bytes) is over the quota, answered empty with a
	// throttle time, as Kafka answers it; records come once the rate's
	// window has grown past its 10 s padding.
	require.NotEmpty(t, h.get(), "the consumer is throttled after %d records", got)
}

// TestRequestPercentageQuota: a client that sends cheap requests (Metadata)
// in a loop under request_percentage 1 on its client id is throttled, the
// throttle time in a response and at most one quota window (1 s, Kafka's
// bound); a client id without the quota is not; and a client that ignores
// the throttle and sends at once is not read until it has passed (the
// connection muted).
func TestRequestPercentageQuota(t *testing.T) {
	srv := servertest.Start(t, nil)
	admCl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr))
	require.NoError(t, err)
	defer admCl.Close()
	setClientQuota(t, kadm.NewClient(admCl), kadm.ClientQuotaEntity{{Type: "client-id", Name: str("busy")}}, "request_percentage", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	metadata := func(cl *kgo.Client) int32 {
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		require.NoError(t, err)
		return resp.ThrottleMillis
	}
	busy, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.ClientID("busy"))
	require.NoError(t, err)
	defer busy.Close()
	var n int
	var throttle int32
	for throttle == 0 && ctx.Err() == nil {
		throttle = metadata(busy)
		n++
	}
	t.Logf("throttled after %d Metadata requests: %d ms", n, throttle)
	require.Positive(t, throttle)
	require.LessOrEqual(t, throttle, int32(1000), "Kafka bounds a request quota's throttle by quota.window.size.seconds")

	free, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.ClientID("free"))
	require.NoError(t, err)
	defer free.Close()
	for range n {
		require.Zero(t, metadata(free), "no quota, no throttle")
	}

	// A raw connection under the same client id ignores the throttle: it
	// sends its next request as soon as the throttled answer arrives; the
	// server reads it only once the throttle has passed.
	c, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer c.Close()
	var last time.Time
	for range 2 * n {
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(12)
		ms := throttledRequest(t, c, "busy", req)
		now := time.Now()
		if ms > 0 && !last.IsZero() {
			break
		}
		if ms > 0 {
			last, throttle = now, ms
		}
	}
	require.False(t, last.IsZero(), "the raw client is throttled")
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	throttledRequest(t, c, "busy", req)
	// The mute began before the throttled answer was written: allow the
	// time that took.
	require.GreaterOrEqual(t, time.Since(last), time.Duration(throttle)*time.Millisecond/2,
		"the next request is read once the throttle of %d ms has passed", throttle)
}

// throttledRequest sends req on c under clientID and returns its
// throttle time.
func throttledRequest(t *testing.T, c net.Conn, clientID string, req kmsg.Request) int32 {
	t.Helper()
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID))
	body, err := rawRequest(t, c, f.AppendRequest(nil, req, 1))
	require.NoError(t, err)
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() {
		body = body[1:] // the header's empty tag section
	}
	require.NoError(t, resp.ReadFrom(body))
	ms, _ := resp.(kmsg.ThrottleResponse).Throttle()
	return ms
}
