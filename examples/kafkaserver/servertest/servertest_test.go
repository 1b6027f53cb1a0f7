package servertest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// TestStart: a server started for a test serves a client at once, and
// its directory is readable with kafkalite's API.
func TestStart(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(0))
	require.NoError(t, err)
	defer cl.Close()
	require.NoError(t, cl.ProduceSync(context.Background(), &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr())
	l, err := srv.Dir.Partition("t", 0)
	require.NoError(t, err)
	require.Equal(t, int64(1), l.LogEndOffset())
	require.NoError(t, srv.Close())
	require.NoError(t, srv.Close(), "a second Close does nothing")
}

// BenchmarkStartProduceClose: what a minimal test pays: a server started
// (a directory opened, a loopback listener), one record produced through
// franz-go and acknowledged, everything closed.
func BenchmarkStartProduceClose(b *testing.B) {
	for b.Loop() {
		srv := servertest.Start(b, nil)
		cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(0))
		if err != nil {
			b.Fatal(err)
		}
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
			b.Fatal(err)
		}
		cl.Close()
		if err := srv.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStart: a server started and closed.
func BenchmarkStart(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		srv := servertest.Start(b, nil)
		if err := srv.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRestart: a restarted server serves the same directory on the same
// address, and a client connected before carries on.
func TestRestart(t *testing.T) {
	srv := servertest.Start(t, nil)
	addr := srv.Addr
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(0), kgo.RecordRetries(100))
	require.NoError(t, err)
	defer cl.Close()
	ctx := context.Background()
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("before")}).FirstErr())
	srv.Restart(t)
	require.Equal(t, addr, srv.Addr)
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("after")}).FirstErr())
	l, err := srv.Dir.Partition("t", 0)
	require.NoError(t, err)
	require.Equal(t, int64(2), l.LogEndOffset())
}
