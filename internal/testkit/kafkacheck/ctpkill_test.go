package kafkacheck

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// kill ends the server with SIGKILL, as a crash does, and waits for it.
func (s *kafkaServer) kill(t *testing.T) {
	t.Helper()
	require.NotNil(t, s.cmd, "the server is not running")
	cmd := s.cmd
	s.cmd = nil
	require.NoError(t, cmd.Process.Kill())
	<-s.done
}

// TestJavaConsumeTransformProduceThroughKills runs a consume-transform-
// produce loop of Kafka 4.4's Java clients (KafkaCheck ctp: a
// transactional producer on transactions v2 sending the group's offsets
// to each transaction, a read_committed consumer in the group) from an
// input topic of 3000 records over two partitions to an output topic, and
// kills the server with SIGKILL three times while it runs (at a quarter,
// half and three quarters of the input committed; down 1 s, 8 s and 1 s),
// restarting it over the same directory (each kill while the loop runs,
// before it committed the whole input); the loop aborts or abandons what
// was open and rewinds
// to the committed offsets, as an application does. At the end the
// output read read_committed holds each input record's transform exactly
// once, in the input's order per partition, and the group's committed
// offsets are at the end of the input.
func TestJavaConsumeTransformProduceThroughKills(t *testing.T) {
	k := Get(t)
	s := startKafkaServer(t, k)
	const n, partitions, kills = 3000, 2, 3
	k.Client(t, "ctp-in\t2\nctp-out\t2\n", "create-topics", s.addr)
	var in []byte
	for i := range n {
		in = fmt.Appendf(in, "send\tctp-in\t%d\t%s\t%s\n", i%partitions, b64(fmt.Sprintf("k%d", i)), b64(fmt.Sprintf("r%d", i)))
	}
	require.Len(t, Lines(k.Client(t, string(in), "produce", s.addr, "acks=all"), "ack"), n)

	// Each transaction stays open 50 ms after its sends: the kills land
	// in open transactions.
	p := startJava(t, k, "ctp", s.addr, "ctp-in", "ctp-out", "ctp-group", "ctp-txn", strconv.Itoa(n), "50")
	var killedAt []int
	for kill := 1; kill <= kills; kill++ {
		sum := 0
		for sum < n*kill/(kills+1) {
			var err error
			sum, err = strconv.Atoi(p.await("committed")[0])
			require.NoError(t, err)
			// The freshest progress: what the loop printed since.
			for more := true; more; {
				select {
				case l, ok := <-p.lines:
					require.True(t, ok, "the loop ended before kill %d", kill)
					p.seen = append(p.seen, l)
					f := strings.Split(l, "\t")
					require.NotEqual(t, "done", f[0], "the loop finished before kill %d", kill)
					if f[0] == "committed" {
						sum, err = strconv.Atoi(f[1])
						require.NoError(t, err)
					}
				default:
					more = false
				}
			}
		}
		// Each kill a little later in the transaction the loop runs.
		time.Sleep(time.Duration(kill*20) * time.Millisecond)
		killedAt = append(killedAt, sum)
		s.kill(t)
		// Down long enough for the requests in flight to fail; the second
		// time longer than the producer's max.block.ms (5 s), so its
		// transaction times out and the loop abandons it.
		down := time.Second
		if kill == 2 {
			down = 8 * time.Second
		}
		time.Sleep(down)
		s.start(t)
	}
	done := p.await("done")
	lines := p.finish()
	// What the loop went through, after which committed sum.
	var events []string
	last := "0"
	for _, l := range lines {
		f := strings.Split(l, "\t")
		switch f[0] {
		case "committed":
			last = f[1]
		case "done", "ok":
		default:
			events = append(events, last+": "+l)
		}
	}
	t.Logf("%d records, killed at %v committed: %s transactions committed, %s abandoned, %s producers; the loop's events:\n%s",
		n, killedAt, done[0], done[1], done[2], strings.Join(events, "\n"))

	byIso := map[string]map[string][]string{}
	for _, f := range Lines(k.Client(t, "", "read", s.addr, "ctp-out"), "record") {
		// ISOLATION TOPIC PARTITION OFFSET LEADER_EPOCH TIMESTAMP TYPE KEY VALUE
		if byIso[f[0]] == nil {
			byIso[f[0]] = map[string][]string{}
		}
		v, err := base64.StdEncoding.DecodeString(f[8])
		require.NoError(t, err)
		byIso[f[0]][f[2]] = append(byIso[f[0]][f[2]], string(v))
	}
	for p := range partitions {
		var want []string
		for i := p; i < n; i += partitions {
			want = append(want, fmt.Sprintf("t:r%d", i))
		}
		require.Equal(t, want, byIso["read_committed"][strconv.Itoa(p)], "ctp-out-%d read_committed: each input's transform once, in order", p)
	}
	uncommitted := len(byIso["read_uncommitted"]["0"]) + len(byIso["read_uncommitted"]["1"])
	t.Logf("ctp-out holds %d records read_uncommitted: %d of aborted transactions", uncommitted, uncommitted-n)

	committed := Lines(k.Client(t, "", "committed", s.addr, "ctp-group"), "committed")
	require.Len(t, committed, partitions)
	for _, c := range committed {
		require.Equal(t, "ctp-in", c[1])
		require.Equal(t, strconv.Itoa(n/partitions), c[3], "ctp-group's committed offset of ctp-in-%s", c[2])
	}
}
