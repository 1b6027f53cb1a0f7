package consumer

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// txnWriter writes one partition as transactional producers and their
// transaction coordinator would: transactional batches after the
// coordinator's verification, end-transaction markers, and plain
// (non-transactional) batches in between. Producers are named by letters.
type txnWriter struct {
	t     testing.TB
	dir   *log.Dir
	l     *log.Log
	codec record.Compression // of every data batch
	pids  map[string]int64
	seqs  map[int64]int32
	b     record.Builder
}

func newTxnWriter(t testing.TB, d *log.Dir, topic string, partition int32) *txnWriter {
	t.Helper()
	l, err := d.Partition(topic, partition)
	require.NoError(t, err)
	return &txnWriter{t: t, dir: d, l: l, pids: map[string]int64{}, seqs: map[int64]int32{}}
}

func (w *txnWriter) pid(name string) int64 {
	if pid, ok := w.pids[name]; ok {
		return pid
	}
	pid, err := w.dir.AllocateProducerID(context.Background())
	require.NoError(w.t, err)
	w.pids[name] = pid
	return pid
}

// batch appends one batch of values with timestamp ts: transactional for
// producer name, or plain for name "".
func (w *txnWriter) batch(name string, ts int64, values ...string) {
	w.t.Helper()
	h := record.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1}
	if name != "" {
		pid := w.pid(name)
		require.NoError(w.t, w.l.VerifyTransaction(access.Internal{}, pid, 0))
		h = record.BatchHeader{ProducerID: pid, ProducerEpoch: 0, BaseSequence: w.seqs[pid], PartitionLeaderEpoch: -1,
			Attributes: record.Attributes(0).WithTransactional(true)}
		w.seqs[pid] += int32(len(values))
	}
	h.Attributes = h.Attributes.WithCompression(w.codec)
	w.b.Reset(h, record.DefaultLevel)
	for _, v := range values {
		require.NoError(w.t, w.b.Append(ts, []byte("k"), []byte(v), nil))
	}
	batch, err := w.b.Build()
	require.NoError(w.t, err)
	_, err = w.l.Append(bytes.Clone(batch))
	require.NoError(w.t, err)
}

// end appends producer name's COMMIT or ABORT marker.
func (w *txnWriter) end(name string, commit bool) {
	w.t.Helper()
	typ := record.ControlAbort
	if commit {
		typ = record.ControlCommit
	}
	_, err := w.l.AppendTxnMarker(access.Internal{}, w.pid(name), 0, record.EndTxnMarker{Type: typ})
	require.NoError(w.t, err)
}

// run applies steps: "p: v0 v1" appends a plain batch, "A: v0 v1" a batch
// of producer A's transaction, "A commit" and "A abort" its marker.
func (w *txnWriter) run(steps ...string) {
	w.t.Helper()
	for _, step := range steps {
		f := strings.Fields(step)
		switch {
		case f[0] == "p:":
			w.batch("", time.Now().UnixMilli(), f[1:]...)
		case strings.HasSuffix(f[0], ":"):
			w.batch(strings.TrimSuffix(f[0], ":"), time.Now().UnixMilli(), f[1:]...)
		case len(f) == 2 && (f[1] == "commit" || f[1] == "abort"):
			w.end(f[0], f[1] == "commit")
		default:
			w.t.Fatalf("bad step %q", step)
		}
	}
}

// drain polls without waiting until nothing is left to return now.
func drain(t testing.TB, c *Consumer) []Record {
	t.Helper()
	var out []Record
	for {
		recs, err := c.poll(context.Background(), false)
		require.NoError(t, err)
		if len(recs) == 0 {
			return out
		}
		for i := range recs {
			out = append(out, recs[i].Clone())
		}
	}
}

func valuesOf(recs []Record) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, string(r.Value))
	}
	return out
}

func readCommitted(c *Config) { c.IsolationLevel = ReadCommitted }

// TestIsolationLevels reads transactional data at both isolation levels:
// read_committed returns committed and plain records only, up to the last
// stable offset, and moves its position past aborted data and markers;
// read_uncommitted returns every data record; neither returns control
// records. Each case also runs with one batch per fetch and one record per
// poll, so that the aborted-transaction filter spans fetches.
func TestIsolationLevels(t *testing.T) {
	tests := []struct {
		name  string
		steps []string
		// committed and uncommitted are the values each level returns;
		// position is read_committed's position after it (also the last
		// stable offset).
		committed, uncommitted []string
		position               int64
	}{
		{
			name:      "committed transaction",
			steps:     []string{"A: a0 a1", "A: a2", "A commit"},
			committed: []string{"a0", "a1", "a2"}, uncommitted: []string{"a0", "a1", "a2"}, position: 4,
		},
		{
			name:      "aborted transaction",
			steps:     []string{"A: a0 a1", "A: a2", "A abort"},
			committed: []string{}, uncommitted: []string{"a0", "a1", "a2"}, position: 4,
		},
		{
			name: "interleaved, one commits, one aborts",
			// p0=0 a0=1 b0=2 b1=3 a1=4 b2=5 p1=6 commit=7 abort=8 p2=9
			steps:       []string{"p: p0", "A: a0", "B: b0 b1", "A: a1", "B: b2", "p: p1", "A commit", "B abort", "p: p2"},
			committed:   []string{"p0", "a0", "a1", "p1", "p2"},
			uncommitted: []string{"p0", "a0", "b0", "b1", "a1", "b2", "p1", "p2"},
			position:    10,
		},
		{
			name: "abort interleaved with a commit, aborted data on both sides",
			// a0=0 b0=1 c0=2 abortA=3 commitC=4 b1=5 abortB=6
			steps:     []string{"A: a0", "B: b0", "C: c0", "A abort", "C commit", "B: b1", "B abort"},
			committed: []string{"c0"}, uncommitted: []string{"a0", "b0", "c0", "b1"}, position: 7,
		},
		{
			name:      "one producer aborts, then commits",
			steps:     []string{"A: x0", "A abort", "A: y0 y1", "A commit"},
			committed: []string{"y0", "y1"}, uncommitted: []string{"x0", "y0", "y1"}, position: 5,
		},
		{
			name:      "aborted data before plain data",
			steps:     []string{"A: a0 a1", "A: a2", "A abort", "p: p0"},
			committed: []string{"p0"}, uncommitted: []string{"a0", "a1", "a2", "p0"}, position: 5,
		},
		{
			name:      "aborted data at the end: the position passes it",
			steps:     []string{"p: p0", "A: a0", "A abort"},
			committed: []string{"p0"}, uncommitted: []string{"p0", "a0"}, position: 3,
		},
		{
			name:      "open transaction: read_committed stops at its first offset",
			steps:     []string{"p: p0", "A: a0", "p: p1", "A: a1"},
			committed: []string{"p0"}, uncommitted: []string{"p0", "a0", "p1", "a1"}, position: 1,
		},
		{
			name:      "committed, then the same producer's open transaction",
			steps:     []string{"B: b0", "B commit", "p: p0", "B: b1", "p: p1"},
			committed: []string{"b0", "p0"}, uncommitted: []string{"b0", "p0", "b1", "p1"}, position: 3,
		},
	}
	fetches := []struct {
		name string
		mod  func(*Config)
	}{
		{"default fetch", func(*Config) {}},
		{"one batch per fetch", func(c *Config) { c.MaxPartitionFetchBytes = 1 }},
		{"one record per poll", func(c *Config) { c.MaxPollRecords = 1 }},
	}
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		for _, tc := range tests {
			for _, f := range fetches {
				t.Run(tc.name+"/"+f.name, func(t *testing.T) {
					e := newEnv(t)
					e.topic("t", 1)
					w := newTxnWriter(t, e.dir, "t", 0)
					w.codec = codec
					w.run(tc.steps...)
					require.Equal(t, tc.position, w.l.LastStableOffset())

					rc := e.consumer(func(c *Config) { readCommitted(c); f.mod(c) })
					require.NoError(t, rc.Assign([]TopicPartition{tp("t", 0)}))
					got := drain(t, rc)
					require.Equal(t, tc.committed, valuesOf(got), "read_committed")
					for i := 1; i < len(got); i++ {
						require.Greater(t, got[i].Offset, got[i-1].Offset)
					}
					pos, err := rc.Position(tp("t", 0))
					require.NoError(t, err)
					require.Equal(t, tc.position, pos, "read_committed's position")

					ru := e.consumer(f.mod)
					require.NoError(t, ru.Assign([]TopicPartition{tp("t", 0)}))
					require.Equal(t, tc.uncommitted, valuesOf(drain(t, ru)), "read_uncommitted")
					pos, err = ru.Position(tp("t", 0))
					require.NoError(t, err)
					require.Equal(t, w.l.LogEndOffset(), pos, "read_uncommitted's position")
				})
			}
		}
	})
}

// TestReadCommittedSkipsLargeAbortedRanges: aborted data larger than a
// fetch is skipped within one Poll, which does not wait for an append when
// only aborted data was read.
func TestReadCommittedSkipsLargeAbortedRanges(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	w := newTxnWriter(t, e.dir, "t", 0)
	for range 50 {
		w.run("A: a0 a1 a2 a3")
	}
	w.run("A abort", "p: p0")
	c := e.consumer(func(c *Config) { readCommitted(c); c.MaxPartitionFetchBytes = 1 })
	require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
	recs, err := c.poll(context.Background(), false) // no waiting: the record is there
	require.NoError(t, err)
	require.Equal(t, []string{"p0"}, valuesOf(recs))
	require.Equal(t, int64(201), recs[0].Offset)
}

// TestReadCommittedWaitsForMarker: a read_committed consumer at an open
// transaction blocks in Poll; appends to the open transaction (and after
// it) wake it once each but return nothing, so it does not spin; the
// COMMIT or ABORT marker releases it.
func TestReadCommittedWaitsForMarker(t *testing.T) {
	for _, tc := range []struct {
		name   string
		commit bool
		want   []string
	}{
		{"commit", true, []string{"a0", "a1", "p1"}},
		{"abort", false, []string{"p1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				e.topic("t", 1)
				w := newTxnWriter(t, e.dir, "t", 0)
				w.run("p: p0", "A: a0")
				c := e.consumer(readCommitted)
				require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
				require.Equal(t, []string{"p0"}, valuesOf(drain(t, c)))

				done := make(chan []Record, 1)
				go func() {
					recs, err := c.Poll(context.Background())
					if err != nil {
						t.Error(err)
					}
					var out []Record
					for i := range recs {
						out = append(out, recs[i].Clone())
					}
					done <- out
				}()
				synctest.Wait()
				waits := c.stats.waits.Load()
				for _, step := range []string{"A: a1", "p: p1"} {
					w.run(step)
					synctest.Wait()
					select {
					case recs := <-done:
						t.Fatalf("Poll returned %v while the transaction is open", valuesOf(recs))
					default:
					}
					waits++
					require.Equal(t, waits, c.stats.waits.Load(), "one wake-up per append, no spinning")
				}
				w.end("A", tc.commit)
				require.Equal(t, tc.want, valuesOf(<-done))
			})
		})
	}
}

// TestReadUncommittedSeesOpenTransactions: a read_uncommitted consumer
// waiting in Poll gets an open transaction's records at once.
func TestReadUncommittedSeesOpenTransactions(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	w := newTxnWriter(t, e.dir, "t", 0)
	c := e.consumer(nil)
	require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
	_, err := c.Position(tp("t", 0))
	require.NoError(t, err)
	done := make(chan []string, 1)
	go func() {
		recs, err := c.Poll(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- valuesOf(recs)
	}()
	w.run("A: a0 a1")
	require.Equal(t, []string{"a0", "a1"}, <-done)
	require.Equal(t, int64(0), w.l.LastStableOffset(), "the transaction is still open")
}

// TestReadCommittedEnds: at read_committed a partition ends at its last
// stable offset: EndOffsets, Lag, Stats, SeekToEnd, auto.offset.reset
// latest and OffsetsForTimes use it; at read_uncommitted, the high
// watermark.
func TestReadCommittedEnds(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	w := newTxnWriter(t, e.dir, "t", 0)
	w.batch("", 1000, "p0", "p1") // 0, 1
	w.batch("A", 2000, "a0")      // 2: the open transaction
	w.batch("", 3000, "p2")       // 3
	require.Equal(t, int64(4), w.l.HighWatermark())
	require.Equal(t, int64(2), w.l.LastStableOffset())
	tps := []TopicPartition{tp("t", 0)}

	for _, tc := range []struct {
		name  string
		level IsolationLevel
		end   int64
		// ts3000 is OffsetsForTimes's answer for timestamp 3000 (p2, past
		// the last stable offset): -1 for absent.
		ts3000 int64
	}{
		{"read_uncommitted", ReadUncommitted, 4, 3},
		{"read_committed", ReadCommitted, 2, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e.consumer(func(c *Config) { c.IsolationLevel = tc.level; c.AutoOffsetReset = OffsetResetLatest })
			require.NoError(t, c.Assign(tps))
			ends, err := c.EndOffsets(tps)
			require.NoError(t, err)
			require.Equal(t, tc.end, ends[tp("t", 0)])
			pos, err := c.Position(tp("t", 0))
			require.NoError(t, err)
			require.Equal(t, tc.end, pos, "auto.offset.reset=latest")

			require.NoError(t, c.SeekToBeginning())
			lag, err := c.Lag(tp("t", 0))
			require.NoError(t, err)
			require.Equal(t, tc.end, lag)
			require.Equal(t, tc.end, c.Stats().Lag[tp("t", 0)])
			require.NoError(t, c.SeekToEnd())
			pos, err = c.Position(tp("t", 0))
			require.NoError(t, err)
			require.Equal(t, tc.end, pos, "SeekToEnd")

			got, err := c.OffsetsForTimes(map[TopicPartition]int64{tp("t", 0): 3000})
			require.NoError(t, err)
			if tc.ts3000 < 0 {
				require.Empty(t, got)
			} else {
				require.Equal(t, tc.ts3000, got[tp("t", 0)].Offset)
			}
			got, err = c.OffsetsForTimes(map[TopicPartition]int64{tp("t", 0): 1000})
			require.NoError(t, err)
			require.Equal(t, int64(0), got[tp("t", 0)].Offset)
		})
	}

	// The commit moves the last stable offset to the high watermark; the
	// lag counts the marker, as Kafka's does.
	w.end("A", true) // 4
	c := e.consumer(readCommitted)
	require.NoError(t, c.Assign(tps))
	require.NoError(t, c.Seek(tp("t", 0), 2))
	lag, err := c.Lag(tp("t", 0))
	require.NoError(t, err)
	require.Equal(t, int64(3), lag)
	require.Equal(t, []string{"a0", "p2"}, valuesOf(drain(t, c)))
	lag, err = c.Lag(tp("t", 0))
	require.NoError(t, err)
	require.Zero(t, lag)
	ends, err := c.EndOffsets(tps)
	require.NoError(t, err)
	require.Equal(t, int64(5), ends[tp("t", 0)])
}

// TestReadCommittedGroupCommitsPastAbortedData: a read_committed group
// member's positions, and so its commits, move past aborted transactions
// and markers, and the next member resumes there.
func TestReadCommittedGroupCommitsPastAbortedData(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	w := newTxnWriter(t, e.dir, "t", 0)
	// a0..a2=0..2 abortA=3 p0=4 b0=5 commitB=6 c0=7 abortC=8
	w.run("A: a0 a1 a2", "A abort", "p: p0", "B: b0", "B commit", "C: c0", "C abort")
	member := func() *Consumer {
		return e.consumer(func(c *Config) {
			readCommitted(c)
			c.GroupID = "g"
			c.HeartbeatInterval = 10 * time.Millisecond
			c.EnableAutoCommit = false
			c.PartitionAssignmentStrategy = []assignor.Assignor{assignor.Range()}
		})
	}
	c := member()
	require.NoError(t, c.Subscribe([]string{"t"}, nil))
	require.Equal(t, []string{"p0", "b0"}, valuesOf(pollN(t, c, 2)))
	require.NoError(t, c.CommitSync(context.Background(), nil))
	committed, err := c.Committed([]TopicPartition{tp("t", 0)})
	require.NoError(t, err)
	require.Equal(t, int64(9), committed[tp("t", 0)].Offset, "past the aborted transaction at the end")
	require.NoError(t, c.Close(context.Background()))

	w.run("p: p1")
	c2 := member()
	require.NoError(t, c2.Subscribe([]string{"t"}, nil))
	recs := pollN(t, c2, 1)
	require.Equal(t, []string{"p1"}, valuesOf(recs))
	require.Equal(t, int64(9), recs[0].Offset)
}
