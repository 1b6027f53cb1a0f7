package kafkacheck

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ClusterSize is the number of nodes of a [Cluster].
const ClusterSize = 3

// Cluster is a three-node KRaft cluster on loopback, for tests that need
// more than one broker: every node is a combined controller and broker,
// the three are a static quorum of voters (controller.quorum.voters), and
// the internal topics and new topics are replicated to all three (two in
// sync required). It is not safe for concurrent use.
type Cluster struct {
	k *Kafka
	t testing.TB
	// Nodes are the cluster's nodes, node.id 1 to 3 in order. A node can be
	// stopped, killed and started again on its own with its [Broker]
	// methods while the other two keep the quorum ([Broker.Start] gives it
	// the single broker's heap and waits until it serves clients).
	Nodes []*Broker
}

// clusterHeap is the heap of each of a cluster's JVMs: half the single
// broker's, as three run at once.
const clusterHeap = "-Xmx512m"

// NewCluster formats the log directories of a three-node cluster, one per
// node and all with one cluster id, with the given server properties on
// top of the harness's (they apply to every node), and returns it, not
// started. Its nodes are killed, if still running, when the test ends.
func (k *Kafka) NewCluster(t testing.TB, props map[string]string) *Cluster {
	t.Helper()
	root := t.TempDir()
	c := &Cluster{k: k, t: t}
	for i := range ClusterSize {
		dir := filepath.Join(root, "node-"+strconv.Itoa(i+1))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		c.Nodes = append(c.Nodes, &Broker{k: k, t: t, Dir: filepath.Join(dir, "kafka-logs"),
			logFile: filepath.Join(dir, "broker.log"), port: freePort(t), ctrlPort: freePort(t)})
	}
	t.Cleanup(func() {
		for _, n := range c.Nodes {
			if n.cmd != nil {
				_ = n.cmd.Process.Kill()
				<-n.done
				n.cmd = nil
			}
		}
	})
	voters := make([]string, ClusterSize)
	for i, n := range c.Nodes {
		voters[i] = fmt.Sprintf("%d@127.0.0.1:%d", i+1, n.ctrlPort)
	}
	clusterID := strings.TrimSpace(lastLine(k.Run(t, "", "kafka.tools.StorageTool", "random-uuid")))
	for i, n := range c.Nodes {
		n.clusterID = clusterID
		// Broker.Properties has the node's listeners and log directory;
		// these replace its single-node quorum and replication.
		n.extra = map[string]string{
			"node.id":                                  strconv.Itoa(i + 1),
			"controller.quorum.voters":                 strings.Join(voters, ","),
			"offsets.topic.replication.factor":         "3",
			"transaction.state.log.replication.factor": "3",
			"transaction.state.log.min.isr":            "2",
			"default.replication.factor":               "3",
			"min.insync.replicas":                      "2",
		}
		maps.Copy(n.extra, props)
		n.writeConfig(t)
		// Kafka 4.4's format still takes a static quorum from
		// controller.quorum.voters, as for the single broker: no
		// --standalone or --initial-controllers (those are for a dynamic
		// quorum, set with controller.quorum.bootstrap.servers instead).
		k.Run(t, "", "kafka.tools.StorageTool", "format", "-t", clusterID, "-c", n.configFile())
	}
	return c
}

// Bootstrap is the cluster's bootstrap.servers: every node's listener.
func (c *Cluster) Bootstrap() string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Bootstrap()
	}
	return strings.Join(addrs, ",")
}

// Log returns the last lines of what each node logged so far, for failure
// messages; each node's whole log is its [Broker.Log].
func (c *Cluster) Log() string {
	var b strings.Builder
	for i, n := range c.Nodes {
		fmt.Fprintf(&b, "---- node %d log:\n%s\n", i+1, tail(n.Log()))
	}
	return b.String()
}

// Start starts the nodes that are not running and waits until the
// cluster serves clients: every node answers a metadata request with all
// three brokers registered and unfenced, so that topics replicated three
// times can be created.
func (c *Cluster) Start() {
	c.t.Helper()
	for _, n := range c.Nodes {
		if n.cmd == nil {
			n.launch(clusterHeap)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := c.waitServing(ctx); err != nil {
		for _, n := range c.Nodes {
			n.Kill()
		}
		c.t.Fatalf("kafkacheck: the cluster did not come up: %v\n%s", err, c.Log())
	}
}

// launch starts the node's JVM with the given heap, not waiting for it.
func (b *Broker) launch(heap string) {
	b.t.Helper()
	logf, err := os.OpenFile(b.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		b.t.Fatal(err)
	}
	fmt.Fprintf(logf, "==== kafkacheck: starting the broker at %s\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(b.k.java, heap, "-XX:+UseG1GC",
		"-Dlog4j2.configurationFile="+filepath.Join(moduleDir(), "testdata", "log4j2-broker.properties"),
		"-cp", b.k.classpath(), "kafka.Kafka", b.configFile())
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		b.t.Fatal(err)
	}
	b.cmd, b.done = cmd, make(chan error, 1)
	go func() {
		err := cmd.Wait()
		logf.Close()
		b.done <- err
	}()
}

// waitServing polls every node with a metadata request until each
// answers with all the cluster's brokers, or a node exits, or ctx ends.
func (c *Cluster) waitServing(ctx context.Context) error {
	clients := make([]*kgo.Client, len(c.Nodes))
	for i, n := range c.Nodes {
		cl, err := kgo.NewClient(kgo.SeedBrokers(n.Bootstrap()))
		if err != nil {
			return err
		}
		defer cl.Close()
		clients[i] = cl
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		var last error
		for i, n := range c.Nodes {
			select {
			case err := <-n.done:
				n.cmd = nil
				return fmt.Errorf("node %d exited: %v", i+1, err)
			default:
			}
			if err := brokersSeen(ctx, clients[i], len(c.Nodes)); err != nil {
				last = fmt.Errorf("node %d: %w", i+1, err)
			}
		}
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %v", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// brokersSeen asks the client's seed broker for the cluster's metadata
// and returns an error unless it lists want brokers (a KRaft broker lists
// only unfenced ones).
func brokersSeen(ctx context.Context, cl *kgo.Client, want int) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // no topics: the brokers only
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return err
	}
	if got := len(resp.(*kmsg.MetadataResponse).Brokers); got != want {
		return fmt.Errorf("%d of %d brokers registered", got, want)
	}
	return nil
}

// Stop shuts every running node down cleanly (SIGTERM to all at once, so
// that each broker's controlled shutdown finds the quorum still there)
// and waits for them. It returns the nodes (indexes into Nodes) it had to
// kill: a node still in its controlled shutdown a minute after the others
// stopped waits for a controller quorum that is gone (KRaft cannot finish
// a broker's controlled shutdown without one, which all nodes stopping at
// once can leave it), so it is killed with SIGKILL, written without its
// clean-shutdown marker.
func (c *Cluster) Stop() (killed []int) {
	c.t.Helper()
	for _, n := range c.Nodes {
		if n.cmd != nil {
			_ = n.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for i, n := range c.Nodes {
		if n.cmd == nil {
			continue
		}
		var err error
		select {
		case err = <-n.done:
		case <-time.After(time.Until(deadline)):
			c.t.Logf("kafkacheck: node %d still in its shutdown after 2m, the quorum gone: killed", i+1)
			_ = n.cmd.Process.Kill()
			<-n.done
			n.cmd = nil
			killed = append(killed, i)
			deadline = time.Now().Add(time.Minute)
			continue
		}
		n.cmd = nil
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 143) {
			c.t.Fatalf("kafkacheck: node %d exited with %v\n%s", i+1, err, c.Log())
		}
		deadline = time.Now().Add(time.Minute)
	}
	return killed
}

// Usage is what the running nodes used since they started, summed: the
// sum of their peak resident memories (an upper bound of the cluster's
// peak) and of their CPU times.
func (c *Cluster) Usage() Usage {
	var u Usage
	for _, n := range c.Nodes {
		nu := n.Usage()
		u.PeakRSS += nu.PeakRSS
		u.CPU += nu.CPU
	}
	return u
}
