package server

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
	require.Len(t, r.samples, quotaSamples)
	require.Equal(t, 10*time.Second, window, "11 samples, the oldest started 10 s ago")
	require.InDelta(t, 1100, rate, 1e-9, "11,000 bytes in 10 s")
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
