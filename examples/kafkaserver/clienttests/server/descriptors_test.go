//go:build linux

package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	kllog "github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// descriptorChildEnv names the directory a re-executed test binary serves
// with few file descriptors (see serveWithFewDescriptors).
const descriptorChildEnv = "KAFKALITE_TEST_FEW_DESCRIPTORS_DIR"

// descriptorHeadroom is how many descriptors the child may open beyond
// those it holds when it starts serving.
const descriptorHeadroom = 40

// TestServesAfterDescriptorsComeBack runs the server in a child process
// whose RLIMIT_NOFILE leaves it 40 descriptors beyond those open when it
// starts, and exhausts them with idle connections from this process: its
// accepts fail with EMFILE, and a produce that must roll a segment (whose
// three files cannot be opened) fails with KAFKA_STORAGE_ERROR. Once the
// idle connections close, the same connection's produce retried is
// appended (the partition healed, nothing lost or written twice), and new
// clients are served. The server's Serve returned the accept error and
// the process exited; the partition refused appends until a restart.
func TestServesAfterDescriptorsComeBack(t *testing.T) {
	if dir := os.Getenv(descriptorChildEnv); dir != "" {
		serveWithFewDescriptors(t, dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServesAfterDescriptorsComeBack$", "-test.v")
	cmd.Env = append(os.Environ(), descriptorChildEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	childLog := newLogWatch()
	var wg sync.WaitGroup
	wg.Go(func() { childLog.collect(stderr) })
	addrs := make(chan string, 1)
	wg.Go(func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
				addrs <- a
			}
			childLog.add(sc.Text())
		}
	})
	go func() {
		wg.Wait()
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	var addr string
	select {
	case addr = <-addrs:
	case <-exited:
		t.Fatalf("the child exited: %s", childLog.String())
	case <-time.After(time.Minute):
		t.Fatalf("the child did not start: %s", childLog.String())
	}

	// A topic whose segments roll every second batch, and a producer's
	// connection opened while descriptors are free.
	ctx := context.Background()
	setup := client(t, addr)
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "roll", 1, 1
	rt.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "segment.bytes", Value: kmsg.StringPtr("1500")}}
	req.Topics = []kmsg.CreateTopicsRequestTopic{rt}
	resp, err := req.RequestWith(ctx, setup)
	require.NoError(t, err)
	require.Zero(t, resp.Topics[0].ErrorCode)
	setup.Close()
	pc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer pc.Close()
	produce := func(c net.Conn, value byte) int16 {
		frame := memProduceFrame(t, "roll", 0, oneRecordBatch(t, value, 1000))
		body, err := memExchange(c, frame, true)
		require.NoError(t, err, "the server's answer: %s", childLog.String())
		pr := kmsg.NewPtrProduceResponse()
		pr.SetVersion(8)
		require.NoError(t, pr.ReadFrom(body))
		return pr.Topics[0].Partitions[0].ErrorCode
	}
	require.Zero(t, produce(pc, 'a'))

	// Exhaust the child's descriptors: connect until its accepts fail.
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for childLog.count("too many open files") == 0 {
		require.Less(t, len(idle), 2000, "the child's accepts never failed: %s", childLog.String())
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		idle = append(idle, c)
		childLog.next(10 * time.Millisecond)
	}
	const storageError = 56
	require.Equal(t, int16(storageError), produce(pc, 'b'), "a roll without descriptors")
	// The child logs the failure before it answers, but its stderr reaches
	// this process through a pipe read by another goroutine: wait for it.
	childLog.await(t, "creating a segment failed", 1)

	// Descriptors come back: the retried produce rolls and is appended.
	for _, c := range idle {
		require.NoError(t, c.Close())
	}
	idle = nil
	deadline := time.Now().Add(time.Minute)
	for code := produce(pc, 'b'); code != 0; code = produce(pc, 'b') {
		require.Equal(t, int16(storageError), code)
		require.True(t, time.Now().Before(deadline), "the partition did not heal: %s", childLog.String())
		time.Sleep(20 * time.Millisecond)
	}
	require.Zero(t, produce(pc, 'c'))

	cl := client(t, addr, kgo.ConsumeTopics("roll"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < 3 {
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		fs := cl.PollFetches(fctx)
		cancel()
		require.NoError(t, fs.Err())
		fs.EachRecord(func(r *kgo.Record) { got = append(got, fmt.Sprintf("%d:%c", r.Offset, r.Value[0])) })
	}
	require.Equal(t, []string{"0:a", "1:b", "2:c"}, got, "each acknowledged record once, in order")
	require.Zero(t, childLog.count("Serve returned"), childLog.String())
}

// TestDefaultLimitsFollowDescriptors: DefaultConfig's MaxConnections and
// MaxPartitions leave the process's descriptors to what uses them: a
// quarter at most for connections, half at most for partitions at three
// each.
func TestDefaultLimitsFollowDescriptors(t *testing.T) {
	var r syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r))
	cfg := server.DefaultConfig()
	n := min(r.Cur, 1<<30)
	require.Equal(t, int(max(1, min(1024, n/4))), cfg.MaxConnections)
	require.Equal(t, int(n/6), cfg.MaxPartitions)
	require.LessOrEqual(t, uint64(cfg.MaxConnections+3*cfg.MaxPartitions), n*3/4)
}

// serveWithFewDescriptors is the child: it opens dir, listens, lowers
// its RLIMIT_NOFILE to the descriptors it holds plus descriptorHeadroom,
// prints its address and serves until killed.
func serveWithFewDescriptors(t *testing.T, dir string) {
	ctx := context.Background()
	d, err := kllog.Open(ctx, filepath.Join(dir, "kl"), kllog.DefaultConfig())
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg := server.DefaultConfig()
	cfg.MaxConnections = 10_000
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv, err := server.New(d, cfg)
	require.NoError(t, err)
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	limit := uint64(len(fds) + descriptorHeadroom)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: limit, Max: limit}))
	fmt.Printf("ADDR %s\n", ln.Addr())
	err = srv.Serve(ctx, ln)
	fmt.Fprintf(os.Stderr, "Serve returned: %v\n", err)
	os.Exit(3)
}

// oneRecordBatch is an uncompressed batch of one record whose value is
// size bytes of value.
func oneRecordBatch(t *testing.T, value byte, size int) []byte {
	t.Helper()
	b, err := record.AppendBatch(nil, record.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1}, 0,
		[]record.Record{{Timestamp: time.Now().UnixMilli(), Value: bytes.Repeat([]byte{value}, size)}})
	require.NoError(t, err)
	return b
}
