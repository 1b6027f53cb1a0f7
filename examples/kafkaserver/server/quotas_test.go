package server

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
)

func quotaDir(t *testing.T) *log.Dir {
	t.Helper()
	cfg := log.DefaultConfig()
	cfg.FS = vfs.NewMem()
	d, err := log.Open(context.Background(), "/q", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func setQuota(t *testing.T, d *log.Dir, e log.QuotaEntity, key string, v float64) {
	t.Helper()
	res, err := d.AlterClientQuotas(context.Background(), []log.QuotaAlteration{{Entity: e, Ops: []log.QuotaOp{{Key: key, Value: v}}}}, false)
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
}

// TestQuotaThrottleTime: the throttle time is Kafka's: (rate − quota) /
// quota × the rate's window, the window at least quota.window.num − 1
// windows; within the quota, none; the windows expire after 11 s.
func TestQuotaThrottleTime(t *testing.T) {
	d := quotaDir(t)
	setQuota(t, d, log.QuotaEntity{User: log.QuotaName("alice")}, log.QuotaProducerByteRate, 1000)
	q := newQuotaManager()
	t0 := time.Unix(1000, 0)
	// 10,000 bytes over a 10 s window: 1,000 B/s, within.
	require.Zero(t, q.record(d, log.QuotaProducerByteRate, "alice", "a", 10000, t0))
	// 5,000 more half a second later: the window is 0.5 s padded with 10
	// empty ones, 10.5 s; (15000/10.5 − 1000)/1000 × 10.5 s = 4.5 s.
	require.Equal(t, 4500*time.Millisecond, q.record(d, log.QuotaProducerByteRate, "alice", "b", 5000, t0.Add(500*time.Millisecond)),
		"the user's quota is shared by its client ids")
	// Another user has no quota.
	require.Zero(t, q.record(d, log.QuotaProducerByteRate, "bob", "a", 1e9, t0))
	// 12 s later the samples are obsolete.
	require.Zero(t, q.record(d, log.QuotaProducerByteRate, "alice", "a", 100, t0.Add(12*time.Second)))

	var r quotaRate
	for i := range 15 {
		r.record(1000, t0.Add(time.Duration(i)*time.Second))
	}
	rate, window := r.measure(t0.Add(14 * time.Second))
	require.Len(t, r.samples, quotaSamples+1, "Kafka keeps quota.window.num + 1 samples")
	require.Equal(t, int64(10_000), window, "the sample of 3 s ago is obsolete, the oldest kept started 10 s ago")
	require.InDelta(t, 1100, rate, 1e-9, "11,000 bytes in 10 s")
}

// TestQuotaRateAsKafka: the rate is Kafka's Rate over its SampledStat:
// quota.window.num + 1 samples, a sample obsolete once its last record is
// quota.window.num windows old (not its start), the window from the
// oldest sample's start, at least quota.window.num − 1 windows.
func TestQuotaRateAsKafka(t *testing.T) {
	t0 := time.UnixMilli(1_000_000)
	at := func(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

	// A sample that began 11.5 s ago but was last recorded in 10.501 s
	// ago is kept.
	var r quotaRate
	r.record(1000, at(0))
	r.record(1000, at(999))
	r.record(1000, at(11_500))
	rate, window := r.measure(at(11_500))
	require.Equal(t, int64(11_500), window)
	require.InDelta(t, 3000/11.5, rate, 1e-9)

	// Records at k s and k s + 900 ms for 12 s, one at 12 s: the 12
	// samples of 1 s to 12 s are kept, 23,000 bytes over 11 s.
	r = quotaRate{}
	for k := range int64(12) {
		r.record(1000, at(k*1000))
		r.record(1000, at(k*1000+900))
	}
	r.record(1000, at(12_000))
	rate, window = r.measure(at(12_000))
	require.Equal(t, int64(11_000), window)
	require.InDelta(t, 23000/11.0, rate, 1e-9)

	// A new rate's window is padded to 10 s, and is never 0.
	r = quotaRate{}
	r.record(500, at(0))
	rate, window = r.measure(at(0))
	require.Equal(t, int64(10_000), window)
	require.InDelta(t, 50, rate, 1e-9)
}

// TestRequestQuotaThrottle: request_percentage counts percent-seconds of
// one thread and its throttle is bounded by one window, as Kafka's
// ClientRequestQuotaManager bounds it; a byte rate's is not bounded.
func TestRequestQuotaThrottle(t *testing.T) {
	d := quotaDir(t)
	setQuota(t, d, log.QuotaEntity{ClientID: log.QuotaName("busy")}, log.QuotaRequestPercentage, 1)
	setQuota(t, d, log.QuotaEntity{ClientID: log.QuotaName("busy")}, log.QuotaProducerByteRate, 1000)
	q := newQuotaManager()
	t0 := time.Unix(1000, 0)
	// 50 ms of thread time in a 10 s window: 0.5 %, within.
	require.Zero(t, q.record(d, log.QuotaRequestPercentage, "ANONYMOUS", "busy", 0.05*100, t0))
	// 100 ms more: 1.5 % over 1 %: (1.5 − 1)/1 × 10 s = 5 s, bounded to 1 s.
	require.Equal(t, time.Second, q.record(d, log.QuotaRequestPercentage, "ANONYMOUS", "busy", 0.1*100, t0))
	// The byte rate's throttle is not bounded: 20,000 bytes over 10 s at
	// 1,000 B/s is 10 s.
	require.Equal(t, 10*time.Second, q.record(d, log.QuotaProducerByteRate, "ANONYMOUS", "busy", 20000, t0))
}

// TestRequestQuotaExempt: the requests Kafka does not count against
// request_percentage: SASL's, ApiVersions before authentication, an
// acks=0 Produce. Everything else counts, ApiVersions after
// authentication too.
func TestRequestQuotaExempt(t *testing.T) {
	plain := &connState{}
	pending := &connState{sasl: &saslState{}}
	authed := &connState{sasl: &saslState{authenticated: true}}
	acks0, acks1 := kmsg.NewPtrProduceRequest(), kmsg.NewPtrProduceRequest()
	acks0.Acks, acks1.Acks = 0, -1
	for _, c := range []struct {
		st     *connState
		key    int16
		req    kmsg.Request
		exempt bool
	}{
		{pending, kmsg.SASLHandshake.Int16(), kmsg.NewPtrSASLHandshakeRequest(), true},
		{authed, kmsg.SASLAuthenticate.Int16(), kmsg.NewPtrSASLAuthenticateRequest(), true},
		{pending, kmsg.ApiVersions.Int16(), kmsg.NewPtrApiVersionsRequest(), true},
		{authed, kmsg.ApiVersions.Int16(), kmsg.NewPtrApiVersionsRequest(), false},
		{plain, kmsg.ApiVersions.Int16(), kmsg.NewPtrApiVersionsRequest(), false},
		{plain, kmsg.Produce.Int16(), acks0, true},
		{plain, kmsg.Produce.Int16(), acks1, false},
		{plain, kmsg.Metadata.Int16(), kmsg.NewPtrMetadataRequest(), false},
		{plain, kmsg.Fetch.Int16(), kmsg.NewPtrFetchRequest(), false},
	} {
		require.Equal(t, c.exempt, requestExempt(c.st, c.key, c.req), "%s", kmsg.NameForKey(c.key))
	}
}

// TestQuotaSensorsBounded: a client that changes its client id at every
// request under a default client-id quota makes no more than
// maxQuotaSensors rates; the one idle longest goes.
func TestQuotaSensorsBounded(t *testing.T) {
	d := quotaDir(t)
	setQuota(t, d, log.QuotaEntity{ClientID: log.QuotaDefault()}, log.QuotaProducerByteRate, 1000)
	q := newQuotaManager()
	q.max = 100
	t0 := time.Unix(1000, 0)
	for i := range 1000 {
		q.record(d, log.QuotaProducerByteRate, "ANONYMOUS", strconv.Itoa(i), 1, t0.Add(time.Duration(i)*time.Millisecond))
	}
	require.Len(t, q.sensors, 100)
	_, kept := q.sensors[sensorKey{log.QuotaProducerByteRate, "", "999"}]
	require.True(t, kept)
	_, kept = q.sensors[sensorKey{log.QuotaProducerByteRate, "", "0"}]
	require.False(t, kept)
}
