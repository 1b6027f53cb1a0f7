package server_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// control runs "kafkaserver control ADDR args..." and returns its output
// and whether it succeeded.
func (c *command) control(t *testing.T, addr string, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(c.bin, append([]string{"control", addr}, args...)...).CombinedOutput()
	return string(out), err
}

var (
	commandBrokerRe  = regexp.MustCompile(`broker (\d+) PLAINTEXT://(\S+?),?(?:\s|;|$)`)
	commandControlRe = regexp.MustCompile(`; control (\S+)`)
)

// TestCommandBrokerControl: the command's control API (-control, and
// "kafkaserver control" as its client) stops a virtual broker while an
// idempotent franz-go producer writes (its partitions move to other
// replicas, it leaves Metadata, its port closes), starts it again on the
// same port, and moves a leader; every record acknowledged is read back
// once, in order. Requests it cannot do are refused with a message and a
// failing exit.
func TestCommandBrokerControl(t *testing.T) {
	dir := t.TempDir()
	c := startCommand(t, "-dir", dir, "-listen", "127.0.0.1:0", "-brokers", "3",
		"-default.replication.factor", "3", "-num.partitions", "3", "-control", "127.0.0.1:0")
	m := commandControlRe.FindStringSubmatch(c.line)
	require.NotNil(t, m, c.line)
	ctl := m[1]
	addrs := map[string]string{}
	var seeds []string
	for _, b := range commandBrokerRe.FindAllStringSubmatch(c.line, -1) {
		addrs[b[1]] = b[2]
		seeds = append(seeds, b[2])
	}
	require.Len(t, addrs, 3, c.line)

	out, err := c.control(t, ctl, "brokers")
	require.NoError(t, err, out)
	require.Equal(t, fmt.Sprintf("0 %s running\n1 %s running\n2 %s running\n", addrs["0"], addrs["1"], addrs["2"]), out)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.MetadataMinAge(50*time.Millisecond))
	require.NoError(t, err)
	defer adm.Close()
	admin := kadm.NewClient(adm)
	_, err = admin.CreateTopic(ctx, 1, 3, nil, "ctl")
	require.NoError(t, err)
	// leaderOf waits for Metadata (which franz-go caches for a while)
	// to show ok and returns the partition's leader, its in-sync replicas
	// and the brokers listed.
	leaderOf := func(ok func(leader int32, isr, brokers []int32) bool) (int32, []int32, []int32) {
		t.Helper()
		for {
			md, err := admin.Metadata(ctx, "ctl")
			require.NoError(t, err)
			p := md.Topics["ctl"].Partitions[0]
			if p.Err == nil && p.Leader >= 0 && ok(p.Leader, p.ISR, md.Brokers.NodeIDs()) {
				return p.Leader, p.ISR, md.Brokers.NodeIDs()
			}
			require.NoError(t, ctx.Err(), "metadata %+v, brokers %v", p, md.Brokers.NodeIDs())
			time.Sleep(50 * time.Millisecond)
		}
	}
	anyState := func(int32, []int32, []int32) bool { return true }

	// A producer writes throughout; each record is numbered.
	pr, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("ctl"),
		kgo.RecordRetries(1000), kgo.RetryTimeout(time.Minute))
	require.NoError(t, err)
	defer pr.Close()
	var (
		mu    sync.Mutex
		acked []string
		fails []error
	)
	stop := make(chan struct{})
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprint(i)
			r := pr.ProduceSync(ctx, &kgo.Record{Value: []byte(v)})
			mu.Lock()
			if err := r.FirstErr(); err != nil {
				fails = append(fails, err)
			} else {
				acked = append(acked, v)
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
		}
	}()
	waitAcked := func(n int) {
		t.Helper()
		for {
			mu.Lock()
			got := len(acked)
			mu.Unlock()
			if got >= n {
				return
			}
			require.NoError(t, ctx.Err(), "%d acknowledged, waiting for %d", got, n)
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitAcked(50)

	leader, _, _ := leaderOf(anyState)
	id := fmt.Sprint(leader)
	out, err = c.control(t, ctl, "stop", id)
	require.NoError(t, err, out)
	require.Equal(t, "broker "+id+" stopped\n", out)
	// The leader moves to another replica; the broker leaves the
	// brokers and the in-sync replicas.
	leaderOf(func(l int32, isr, brokers []int32) bool {
		return l != leader && !slices.Contains(isr, leader) && !slices.Contains(brokers, leader)
	})
	_, err = net.DialTimeout("tcp", addrs[id], time.Second)
	require.Error(t, err, "its port is closed")
	out, err = c.control(t, ctl, "brokers")
	require.NoError(t, err, out)
	require.Contains(t, out, id+" "+addrs[id]+" stopped\n")
	out, err = c.control(t, ctl, "stop", id)
	require.NoError(t, err, "stopping a stopped broker is done already: %s", out)
	mu.Lock()
	n := len(acked)
	mu.Unlock()
	waitAcked(n + 50) // the producer carries on with the new leader

	out, err = c.control(t, ctl, "start", id)
	require.NoError(t, err, out)
	require.Equal(t, "broker "+id+" started\n", out)
	leaderOf(func(_ int32, _, brokers []int32) bool { return slices.Contains(brokers, leader) }) // listed again
	out, err = c.control(t, ctl, "leader", "ctl", "0", id)
	require.NoError(t, err, out)
	require.Regexp(t, `^ctl-0 led by broker `+id+` in leader epoch \d+\n$`, out)
	leaderOf(func(l int32, _, _ []int32) bool { return l == leader })
	mu.Lock()
	n = len(acked)
	mu.Unlock()
	waitAcked(n + 50) // and with the leader moved back
	close(stop)
	<-produced

	mu.Lock()
	require.Empty(t, fails)
	want := strings.Join(acked, ",")
	mu.Unlock()
	cons, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics("ctl"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cons.Close()
	var got []string
	for len(got) < len(acked) {
		fs := cons.PollFetches(ctx)
		require.NoError(t, ctx.Err())
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	require.Equal(t, want, strings.Join(got, ","), "every acknowledged record once, in order")

	// Refused: a broker not there, a leader not a replica, a bad verb.
	for _, args := range [][]string{{"stop", "7"}, {"start", "x"}, {"leader", "ctl", "0", "9"}, {"leader", "nope", "0", "1"}, {"reboot", "1"}} {
		out, err := c.control(t, ctl, args...)
		require.Error(t, err, "%v: %s", args, out)
		require.NotEmpty(t, out, "%v says why", args)
	}
}
