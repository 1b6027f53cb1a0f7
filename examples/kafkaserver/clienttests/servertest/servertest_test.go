package servertest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// starts are the two ways to start a server for a test.
var starts = []struct {
	name  string
	start func(testing.TB, func(*server.Config)) *servertest.Server
}{
	{"disk", servertest.Start},
	{"memory", servertest.StartInMemory},
}

// TestStart: a server started for a test, its directory on disk or in
// memory, serves a client at once (a record produced and fetched back),
// and its directory is readable with kafkalite's API.
func TestStart(t *testing.T) {
	for _, st := range starts {
		t.Run(st.name, func(t *testing.T) {
			srv := st.start(t, nil)
			cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(0),
				kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			require.NoError(t, err)
			defer cl.Close()
			ctx := context.Background()
			require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr())
			fs := cl.PollRecords(ctx, 1)
			require.NoError(t, fs.Err())
			require.Equal(t, "v", string(fs.Records()[0].Value))
			l, err := srv.Dir.Partition("t", 0)
			require.NoError(t, err)
			require.Equal(t, int64(1), l.LogEndOffset())
			require.NoError(t, srv.Close())
			require.NoError(t, srv.Close(), "a second Close does nothing")
		})
	}
}

// TestRestart: a restarted server serves the same directory (on disk or
// in memory) on the same address, and a client connected before carries
// on.
func TestRestart(t *testing.T) {
	for _, st := range starts {
		t.Run(st.name, func(t *testing.T) {
			srv := st.start(t, nil)
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
		})
	}
}

// BenchmarkStartProduceClose: what a minimal test pays: a server started
// (a directory opened, on disk or in memory, and a loopback listener),
// one record produced through franz-go (linger 0, and kgo's defaults)
// and acknowledged, everything closed; and the same test with franz-go's
// kfake (one fake broker, in memory) in place of the server.
func BenchmarkStartProduceClose(b *testing.B) {
	targets := []struct {
		name  string
		start func(b *testing.B) (addr string, stop func())
	}{
		{"kfake", func(b *testing.B) (string, func()) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
			if err != nil {
				b.Fatal(err)
			}
			return c.ListenAddrs()[0], c.Close
		}},
	}
	for _, st := range starts {
		targets = append(targets, struct {
			name  string
			start func(b *testing.B) (string, func())
		}{st.name, func(b *testing.B) (string, func()) {
			srv := st.start(b, nil)
			return srv.Addr, func() {
				if err := srv.Close(); err != nil {
					b.Fatal(err)
				}
			}
		}})
	}
	// kgo's default linger (10 ms) is waited out by the one produce; a
	// test that produces one record at a time sets it to 0.
	clients := []struct {
		name string
		opts []kgo.Opt
	}{{"linger=0", []kgo.Opt{kgo.ProducerLinger(0)}}, {"kgo-defaults", nil}}
	for _, tg := range targets {
		for _, c := range clients {
			b.Run(tg.name+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					addr, stop := tg.start(b)
					cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation()}, c.opts...)...)
					if err != nil {
						b.Fatal(err)
					}
					if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
						b.Fatal(err)
					}
					cl.Close()
					stop()
				}
			})
		}
	}
}

// BenchmarkStart: a server started and closed, its directory on disk or
// in memory.
func BenchmarkStart(b *testing.B) {
	for _, st := range starts {
		b.Run(st.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				srv := st.start(b, nil)
				if err := srv.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
