package kafkacheck

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/log"
	kproducer "github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/segment"
	"github.com/stretchr/testify/require"
)

// killTopics are the topics TestKafkaliteRecoversKilledBroker produces to:
// one per codec, some with small segments (so that recovery starts in a
// later segment, at the recovery point the broker checkpointed, and
// producer snapshots exist at the rolls), and one for a transaction that
// is still open at the kill.
var killTopics = []string{
	"k-none\t2", "k-gzip\t2", "k-snappy\t2",
	"k-lz4\t2\tinternal.segment.bytes=32768", "k-zstd\t2\tinternal.segment.bytes=32768",
	"k-txn\t2\tinternal.segment.bytes=32768",
}

// killAfterAcks is how many acknowledged records the broker has written
// when it is killed.
const killAfterAcks = 3000

// TestKafkaliteRecoversKilledBroker: a broker is killed with SIGKILL while
// Kafka's producers write to it (idempotent, acks=all, every codec, and a
// transaction that is open at the kill); three partitions then get the
// torn tails a crash can leave (a batch cut in half, a zero-filled tail, a
// batch header without its body). A byte copy of the directory is
// recovered by kafkalite's log.Open, the original by the broker's own
// restart; both must end at the same log end and last stable offsets with
// the same records, every acknowledged record of the untouched
// partitions among them.
func TestKafkaliteRecoversKilledBroker(t *testing.T) {
	k := Get(t)
	dumplog := buildDumplog(t)
	b := k.NewBroker(t, map[string]string{
		// Checkpoint recovery points often, from the start, so that the
		// recovery of both sides starts past offset 0.
		"log.flush.offset.checkpoint.interval.ms": "200",
		"log.initial.task.delay.ms":               "0",
	})
	b.Start()
	k.Client(t, stdinLines(killTopics), "create-topics", b.Bootstrap())
	topics := topicNames(killTopics)

	// The producers: one per codec and one transactional, driven line by
	// line until the kill.
	p := startProducer(t, k, b.Bootstrap())
	rng := rand.New(rand.NewPCG(5, 11))
	var acked []sendLine // the sends the ack lines answer, in order
	write := func(ls ...string) bool {
		for _, l := range ls {
			if !p.write(l) {
				return false
			}
		}
		return true
	}
	tx := "use\ttx\ttransactional.id=ktx\tcompression.type=gzip\ttransaction.timeout.ms=600000"
	first := genRecords(rng, "k-txn", 2, 40)
	aborted := genRecords(rng, "k-txn", 2, 40)
	require.True(t, write(tx, "init", "begin"))
	require.True(t, write(sendLinesOf(first)...))
	require.True(t, write("offsets\tg-kill\tk-none\t0\t5", "commit", "begin"))
	require.True(t, write(sendLinesOf(aborted)...))
	// A transaction open until the kill, with offsets pending in it.
	require.True(t, write("abort", "begin", "offsets\tg-kill\tk-none\t1\t9"))
	acked = append(acked, first...)
	producing := make(chan struct{})
	go func() {
		defer close(producing)
		for {
			for _, c := range adoptCodecs {
				recs := genRecords(rng, "k-"+c, 2, 20)
				p.expect(recs)
				if !write("use\tc-"+c+"\tcompression.type="+c+"\tacks=all\tlinger.ms=1") || !write(sendLinesOf(recs)...) || !write("flush") {
					return
				}
			}
			recs := genRecords(rng, "k-txn", 2, 10)
			p.expect(recs)
			if !write(tx) || !write(sendLinesOf(recs)...) || !write("flush") {
				return
			}
		}
	}()
	waitUntil(t, 2*time.Minute, fmt.Sprintf("%d acknowledged records", killAfterAcks), func() bool { return p.acks() >= killAfterAcks })
	b.Kill() // in the middle of produce: the producers have batches in flight
	p.stop()
	<-producing
	acked = append(acked, p.expected()...)
	ackLines := p.ackLines()
	require.GreaterOrEqual(t, len(ackLines), killAfterAcks)
	require.LessOrEqual(t, len(ackLines), len(acked))
	acked = acked[:len(ackLines)]

	// The torn tails a crash leaves in the active segment.
	torn := map[string]bool{}
	tornTail(t, filepath.Join(b.Dir, "k-none-0"), func(f *os.File, last, end, _ int64) {
		require.NoError(t, f.Truncate(last+(end-last)/2)) // the last batch cut in half
	})
	torn["k-none-0"] = true
	tornTail(t, filepath.Join(b.Dir, "k-gzip-1"), func(f *os.File, _, _, size int64) {
		_, err := f.WriteAt(make([]byte, 4096), size) // a zero-filled tail
		require.NoError(t, err)
	})
	torn["k-gzip-1"] = true
	tornTail(t, filepath.Join(b.Dir, "k-snappy-0"), func(f *os.File, last, _, size int64) {
		hdr := make([]byte, 61)
		_, err := f.ReadAt(hdr, last)
		require.NoError(t, err)
		_, err = f.WriteAt(hdr, size) // the last batch's header again, its body never written
		require.NoError(t, err)
	})
	torn["k-snappy-0"] = true

	// A byte copy for kafkalite; the broker recovers the original.
	copied := filepath.Join(t.TempDir(), "kafka-logs")
	copyTree(t, b.Dir, copied)
	// The broker had checkpointed recovery points inside the logs with
	// small segments: both recoveries start there, not at offset 0.
	inside := 0
	for _, topic := range topics {
		for p := range int32(2) {
			if off, ok := checkpointEntry(filepath.Join(copied, "recovery-point-offset-checkpoint"), topic, p); ok && off > 0 {
				inside++
			}
		}
	}
	require.Positive(t, inside, "partitions whose checkpointed recovery point is past 0")
	t.Run("DumplogFindsTornTails", func(t *testing.T) {
		code, _, stderr := runDumplog(t, dumplog, "-verify", copied)
		require.Equal(t, 1, code, "dumplog -verify over the killed directory:\n%s", stderr)
		for tp := range torn {
			require.Contains(t, stderr, tp, "dumplog -verify names the torn partition")
		}
	})
	b.Start()
	kafka := kafkaRead(t, k.Client(t, "", "read", b.Bootstrap(), topics...))
	committed := Lines(k.Client(t, "", "committed", b.Bootstrap(), "g-kill"), "committed")
	b.Stop()

	var warnings lockedBuffer
	d := openBrokerDir(t, copied, &warnings)
	closed := false
	defer func() {
		if !closed {
			require.NoError(t, d.Close())
		}
	}()
	rec := d.Recovery()
	require.False(t, rec.Clean, "the broker was killed")
	require.Positive(t, rec.SegmentsRecovered)
	require.Positive(t, rec.BytesTruncated, "the torn tails were cut")
	for tp := range torn {
		require.Contains(t, warnings.String(), `msg="truncated the invalid tail of a segment" partition=`+tp)
	}
	t.Logf("kafkalite's recovery: %+v", rec)

	var got map[string]*readResult
	for _, iso := range bothIsolations {
		t.Run("Records/"+iso, func(t *testing.T) {
			r := kafkaliteRead(t, d, topics, iso)
			require.Equal(t, kafka[iso].ends, r.ends, "end offsets (%s)", iso)
			requireSameRecords(t, kafka[iso].records, r.records, iso)
			if got == nil {
				got = map[string]*readResult{}
			}
			got[iso] = r
			t.Logf("%s: %d records, by topic %v", iso, len(r.records), countByTopic(r.records))
		})
	}
	require.Len(t, got, 2)
	// The open transaction holds the last stable offset back in k-txn.
	require.Less(t, got["read_committed"].ends["k-txn-0"]+got["read_committed"].ends["k-txn-1"],
		got["read_uncommitted"].ends["k-txn-0"]+got["read_uncommitted"].ends["k-txn-1"])

	t.Run("AcknowledgedRecordsKept", func(t *testing.T) {
		byOffset := map[string]string{} // "topic-partition offset" → value
		for _, l := range got["read_uncommitted"].records {
			f := strings.Split(l, "\t")
			byOffset[f[0]+"-"+f[1]+" "+f[2]] = f[7]
		}
		checked := 0
		for i, s := range acked {
			tp := fmt.Sprintf("%s-%d", s.topic, s.partition)
			require.Equal(t, strconv.Itoa(int(s.partition)), ackLines[i][0], "ack %d answers the send %d", i, i)
			if torn[tp] {
				continue
			}
			v, ok := byOffset[tp+" "+ackLines[i][1]]
			require.True(t, ok, "acknowledged record %s offset %s is there", tp, ackLines[i][1])
			require.Equal(t, encBytes(s.value), v, "acknowledged record %s offset %s", tp, ackLines[i][1])
			checked++
		}
		require.Greater(t, checked, killAfterAcks/2)
	})

	t.Run("CommittedOffsets", func(t *testing.T) {
		// The offsets of the committed transaction count; those of the
		// transaction open at the kill do not, on either side.
		require.Equal(t, [][]string{{"g-kill", "k-none", "0", "5", "-1", ""}}, committed)
		requireCommitted(t, d, "g-kill", topics, committed)
	})

	t.Run("TakesOverOpenTransaction", func(t *testing.T) {
		// The transaction open at the kill is the broker's (transactions
		// v2: its epoch bumped at each end). A kafkalite producer with the
		// same transactional.id takes over as Kafka's coordinator would:
		// InitTransactions aborts the open transaction (an ABORT marker
		// per partition, its pending offsets dropped), and the next
		// transaction commits.
		ctx := context.Background()
		var parts []*log.Log
		var ends []int64
		for p := range int32(2) {
			l, err := d.Partition("k-txn", p)
			require.NoError(t, err)
			require.Less(t, l.LastStableOffset(), l.LogEndOffset(), "k-txn-%d has the open transaction", p)
			parts, ends = append(parts, l), append(ends, l.LogEndOffset())
		}
		cfg := kproducer.DefaultConfig()
		cfg.TransactionalID = "ktx"
		pr, err := kproducer.New(d, cfg)
		require.NoError(t, err)
		defer func() { require.NoError(t, pr.Close(ctx)) }()
		require.NoError(t, pr.InitTransactions(ctx))
		for i, l := range parts {
			require.Equal(t, ends[i]+1, l.LogEndOffset(), "an ABORT marker in k-txn-%d", i)
			require.Equal(t, l.LogEndOffset(), l.LastStableOffset(), "no transaction open in k-txn-%d", i)
		}
		var committedTxn []string
		for _, r := range got["read_committed"].records {
			if strings.HasPrefix(r, "k-txn\t") {
				committedTxn = append(committedTxn, r)
			}
		}
		requireSameRecords(t, committedTxn, kafkaliteRead(t, d, []string{"k-txn"}, "read_committed").records, "k-txn after the abort")
		requireCommitted(t, d, "g-kill", topics, committed)

		require.NoError(t, pr.BeginTransaction())
		fut, err := pr.Send(ctx, &kproducer.Record{Topic: "k-txn", Partition: new(int32), Value: []byte("after the takeover")}, nil)
		require.NoError(t, err)
		require.NoError(t, pr.CommitTransaction(ctx))
		md, err := fut.Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, ends[0]+1, md.Offset)
		rec, ok, err := parts[0].ReadRecord(md.Offset)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "after the takeover", string(rec.Value))
		require.Equal(t, parts[0].LogEndOffset(), parts[0].LastStableOffset())
	})

	require.NoError(t, d.Close())
	closed = true
	t.Run("DumplogVerifiesRecovered", func(t *testing.T) {
		requireDumplogVerifies(t, dumplog, copied)
	})
}

// tornTail applies tear to the active segment's .log of a partition
// directory: it gets the file, the position of its last whole batch, the
// end of that batch, and the file's size (larger if the kill itself left a
// partial batch).
func tornTail(t *testing.T, dir string, tear func(f *os.File, last, end, size int64)) {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*"+segment.LogSuffix))
	require.NoError(t, err)
	require.NotEmpty(t, logs)
	slices.Sort(logs)
	f, err := os.OpenFile(logs[len(logs)-1], os.O_RDWR, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	st, err := f.Stat()
	require.NoError(t, err)
	var last, end int64 = -1, 0
	hdr := make([]byte, 12) // base offset, batch length
	for end+12 <= st.Size() {
		_, err := f.ReadAt(hdr, end)
		require.NoError(t, err)
		next := end + 12 + int64(binary.BigEndian.Uint32(hdr[8:]))
		if next > st.Size() {
			break
		}
		last, end = end, next
	}
	require.GreaterOrEqual(t, last, int64(0), "the active segment of %s has a whole batch", dir)
	tear(f, last, end, st.Size())
}

// produceClient is KafkaCheck's produce command running in the background,
// fed line by line, its ack lines collected as they come.
type produceClient struct {
	t      *testing.T
	cancel context.CancelFunc
	stdin  io.WriteCloser
	done   chan struct{}
	stderr bytes.Buffer

	mu      sync.Mutex
	acked   [][]string
	pending []sendLine // sends written whose acks may still come, in order
}

func startProducer(t *testing.T, k *Kafka, bootstrap string) *produceClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := k.javaCommand(ctx, "KafkaCheck", "produce", bootstrap)
	p := &produceClient{t: t, cancel: cancel, done: make(chan struct{})}
	cmd.Stderr = &p.stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p.stdin = stdin
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if f := strings.Split(sc.Text(), "\t"); f[0] == "ack" {
				p.mu.Lock()
				p.acked = append(p.acked, f[1:])
				p.mu.Unlock()
			}
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(p.stop)
	return p
}

// write writes one line; false once the producer is gone.
func (p *produceClient) write(line string) bool {
	_, err := io.WriteString(p.stdin, line+"\n")
	return err == nil
}

// expect notes sends about to be written whose acks count.
func (p *produceClient) expect(recs []sendLine) {
	p.mu.Lock()
	p.pending = append(p.pending, recs...)
	p.mu.Unlock()
}

func (p *produceClient) expected() []sendLine {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.pending)
}

func (p *produceClient) acks() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

func (p *produceClient) ackLines() [][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.acked)
}

// stop kills the producer's JVM and waits for it: the broker is gone, so
// its batches in flight would only be retried.
func (p *produceClient) stop() {
	p.cancel()
	_ = p.stdin.Close()
	<-p.done
}
