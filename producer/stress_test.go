package producer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestStress runs idempotent and transactional producers, two consumer
// groups of two members (read_uncommitted and read_committed), retention
// every 5 ms, topic creation and deletion, and the log cleaner on a
// compacted topic that two more producers update and a consumer tails, all
// at once, on the memory FS. It checks that each group consumes every
// acknowledged record exactly once (read_committed: none of an aborted
// transaction), that the tail of the compacted topic never sees a key go
// back to an older value, that after cleaning each key holds its latest
// acknowledged value once, and that Close leaves no goroutine behind.
// The eight producers compress with a mix of codecs, stressCodec: every
// codec, in one log, through the cleaner; every record must be in a batch
// of its producer's codec. KAFKALITE_STRESS_SCALE multiplies the records
// (default 1: 4 × 500 idempotent, 2 × 60 transactions, 2 × 600 updates of
// 20 keys each).
func TestStress(t *testing.T) {
	scale := 1
	if n, err := strconv.Atoi(os.Getenv("KAFKALITE_STRESS_SCALE")); err == nil && n > 0 {
		scale = n
	}
	goroutines := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := log.DefaultConfig()
	cfg.FS = vfs.NewMem()
	cfg.OffsetsTopicNumPartitions, cfg.TransactionStateNumPartitions = 1, 1
	cfg.RetentionCheckInterval = 5 * time.Millisecond
	cfg.CleanerBackoff = 10 * time.Millisecond
	cfg.CleanerDedupeBufferSize = 1 << 20
	d, err := log.Open(ctx, "/stress", cfg)
	require.NoError(t, err)
	const topic = "s"
	_, err = d.CreateTopic(ctx, topic, 4, map[string]string{"segment.bytes": "8192", "segment.index.bytes": "4096"})
	require.NoError(t, err)
	kv := startCompactedStress(ctx, t, d, scale)

	// Consumers first, so that both groups are stable before any record:
	// without rebalances, sync commits after each poll deliver each record
	// once.
	type group struct {
		mu   sync.Mutex
		seen map[string]int
	}
	groups := map[string]*group{"ru": {seen: map[string]int{}}, "rc": {seen: map[string]int{}}}
	var members []*consumer.Consumer
	for name := range groups {
		for range 2 {
			ccfg := consumer.DefaultConfig()
			ccfg.GroupID = name
			ccfg.EnableAutoCommit = false
			ccfg.AutoOffsetReset = consumer.OffsetResetEarliest
			if name == "rc" {
				ccfg.IsolationLevel = consumer.ReadCommitted
			}
			c, err := consumer.New(d, ccfg)
			require.NoError(t, err)
			require.NoError(t, c.Subscribe([]string{topic}, nil))
			members = append(members, c)
		}
	}
	var cwg sync.WaitGroup
	cctx, stopConsumers := context.WithCancel(ctx)
	assigned := make(chan struct{}, len(members))
	for i, c := range members {
		cwg.Go(func() {
			name := c.GroupMetadata().GroupID
			gr := groups[name]
			announced := false
			for cctx.Err() == nil {
				pctx, cancel := context.WithTimeout(cctx, 20*time.Millisecond)
				recs, err := c.Poll(pctx)
				cancel()
				if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
					t.Errorf("member %d: %v", i, err)
					return
				}
				if !announced && len(c.Assignment()) > 0 {
					announced = true
					assigned <- struct{}{}
				}
				if len(recs) == 0 {
					continue
				}
				gr.mu.Lock()
				for _, r := range recs {
					gr.seen[string(r.Value)]++
				}
				gr.mu.Unlock()
				if err := c.CommitSync(cctx, nil); err != nil && cctx.Err() == nil {
					t.Errorf("member %d: commit: %v", i, err)
					return
				}
			}
		})
	}
	for range members {
		select {
		case <-assigned:
		case <-ctx.Done():
			t.Fatal("the groups never settled")
		}
	}

	var mu sync.Mutex
	committed, aborted := map[string]bool{}, map[string]bool{}
	var pwg sync.WaitGroup
	for p := range 4 {
		pwg.Go(func() {
			pcfg := DefaultConfig()
			pcfg.CompressionType = stressCodec(fmt.Sprintf("p%d", p))
			pr, err := New(d, pcfg)
			if err != nil {
				t.Error(err)
				return
			}
			for j := range 500 * scale {
				v := fmt.Sprintf("p%d-%d", p, j)
				if _, err := pr.Send(ctx, &Record{Topic: topic, Key: []byte(v), Value: []byte(v)}, func(_ RecordMetadata, err error) {
					if err == nil {
						mu.Lock()
						committed[v] = true
						mu.Unlock()
					}
				}); err != nil {
					t.Error(err)
				}
			}
			if err := pr.Close(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	for p := range 2 {
		pwg.Go(func() {
			pcfg := DefaultConfig()
			pcfg.TransactionalID = fmt.Sprintf("stress-%d", p)
			pcfg.CompressionType = stressCodec(fmt.Sprintf("t%d", p))
			pr, err := New(d, pcfg)
			if err != nil {
				t.Error(err)
				return
			}
			defer func() {
				if err := pr.Close(ctx); err != nil {
					t.Error(err)
				}
			}()
			if err := pr.InitTransactions(ctx); err != nil {
				t.Error(err)
				return
			}
			for k := range 60 * scale {
				if err := pr.BeginTransaction(); err != nil {
					t.Error(err)
					return
				}
				var vs []string
				for i := range 1 + k%5 {
					v := fmt.Sprintf("t%d-%d-%d", p, k, i)
					vs = append(vs, v)
					if _, err := pr.Send(ctx, &Record{Topic: topic, Key: []byte(v), Value: []byte(v)}, nil); err != nil {
						t.Error(err)
						return
					}
				}
				abort := k%4 == 3
				if abort {
					err = pr.AbortTransaction(ctx)
				} else {
					err = pr.CommitTransaction(ctx)
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, v := range vs {
					if abort {
						aborted[v] = true
					} else {
						committed[v] = true
					}
				}
				mu.Unlock()
			}
		})
	}
	pwg.Go(func() { // topic churn, with retention deleting its segments
		for k := range 30 * scale {
			name := fmt.Sprintf("churn-%d", k)
			if _, err := d.CreateTopic(ctx, name, 2, map[string]string{"segment.bytes": "1024", "retention.bytes": "2048", "segment.index.bytes": "4096"}); err != nil {
				t.Error(err)
				return
			}
			if err := d.DeleteTopic(context.Background(), name); err != nil {
				t.Error(err)
				return
			}
		}
	})
	pwg.Wait()
	kv.wait()

	// Wait until each group has everything, then check exactly once.
	want := map[string]int{"ru": len(committed) + len(aborted), "rc": len(committed)}
	for name, gr := range groups {
		for {
			gr.mu.Lock()
			n := len(gr.seen)
			gr.mu.Unlock()
			if n >= want[name] || ctx.Err() != nil {
				break
			}
			select {
			case <-d.Changed():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	stopConsumers()
	cwg.Wait()
	for _, c := range members {
		require.NoError(t, c.Close(context.Background()))
	}
	for name, gr := range groups {
		for v := range committed {
			require.Equal(t, 1, gr.seen[v], "group %s: %s consumed once", name, v)
		}
		for v := range aborted {
			if name == "rc" {
				require.Zero(t, gr.seen[v], "group rc: aborted %s never delivered", v)
			} else {
				require.Equal(t, 1, gr.seen[v], "group ru: %s consumed once", v)
			}
		}
		require.Len(t, gr.seen, want[name], "group %s: nothing else", name)
	}
	codecs := map[record.Compression]int{}
	for p := range int32(4) {
		l, err := d.Partition(topic, p)
		require.NoError(t, err)
		for off := l.LogStartOffset(); off < l.LogEndOffset(); {
			off, err = l.ReadRecords(off, 1<<20, func(r *record.Record, h *record.BatchHeader) error {
				return checkStressCodec(string(r.Value), h, codecs)
			})
			require.NoError(t, err)
		}
	}
	require.Len(t, codecs, len(matrix.AllCodecs), "records of every codec in %s: %v", topic, codecs)
	t.Logf("%s: records by batch codec: %v", topic, codecs)
	kv.check(ctx, t)
	require.NoError(t, d.Close())

	// No goroutine outlives Close.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(time.Millisecond) // polling NumGoroutine: there is no signal for "goroutine exited"
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after Close, %d before:\n%s", n, goroutines, buf[:runtime.Stack(buf, true)])
	}
	t.Logf("%d committed and %d aborted records, each group exactly once", len(committed), len(aborted))
}

// stressProducers names TestStress's producers: four idempotent ones, two
// transactional ones, the compacted topic's two writers. Their records
// carry the name: values "p1-7", "t0-3-2", keys "k1-5".
var stressProducers = []string{"p0", "p1", "p2", "p3", "t0", "t1", "k0", "k1"}

// stressCodec is the compression.type of the producer named name: the i-th
// of stressProducers uses matrix.AllCodecs[i%5], so that every codec is in
// use.
func stressCodec(name string) record.Compression {
	i := slices.Index(stressProducers, name)
	if i < 0 {
		panic("stressCodec: no producer " + name) // a typo in the test
	}
	return matrix.AllCodecs[i%len(matrix.AllCodecs)]
}

// checkStressCodec checks that the record named by s (a value or a key of
// the compacted topic) is in a batch of its producer's codec, and counts
// it in codecs.
func checkStressCodec(s string, h *record.BatchHeader, codecs map[record.Compression]int) error {
	name, _, _ := strings.Cut(s, "-")
	if !slices.Contains(stressProducers, name) {
		return fmt.Errorf("batch %d: record %q of no producer", h.BaseOffset, s)
	}
	if got, want := h.Attributes.Compression(), stressCodec(name); got != want {
		return fmt.Errorf("batch %d: record %q in a %v batch, its producer's codec is %v", h.BaseOffset, s, got, want)
	}
	codecs[h.Attributes.Compression()]++
	return nil
}

// compactedStress is TestStress's compacted topic: producers updating keys
// (now and then with a tombstone), a consumer tailing the topic while the
// cleaner works on it, and the latest acknowledged version of each key.
type compactedStress struct {
	d       *log.Dir
	tail    *consumer.Consumer
	writers sync.WaitGroup
	written chan struct{} // closed when the writers are done
	tailing sync.WaitGroup

	mu    sync.Mutex
	acked map[string]int // key → latest acknowledged version
	tomb  map[string]bool
	seen  map[string]int // key → latest version the tail read
	sent  int
}

const compactedTopic = "kv"

// stressVersion is the version an update carries in its "v" header.
func stressVersion(hs []record.Header) (int, error) {
	for _, h := range hs {
		if string(h.Key) == "v" {
			return strconv.Atoi(string(h.Value))
		}
	}
	return 0, errors.New("no version header")
}

func startCompactedStress(ctx context.Context, t *testing.T, d *log.Dir, scale int) *compactedStress {
	t.Helper()
	_, err := d.CreateTopic(ctx, compactedTopic, 2, map[string]string{
		"cleanup.policy": "compact", "segment.bytes": "1024", "segment.index.bytes": "4096",
		"min.cleanable.dirty.ratio": "0.01",
	})
	require.NoError(t, err)
	kv := &compactedStress{d: d, acked: map[string]int{}, tomb: map[string]bool{}, seen: map[string]int{}, sent: 2 * 600 * scale}
	ccfg := consumer.DefaultConfig()
	ccfg.AutoOffsetReset = consumer.OffsetResetEarliest
	kv.tail, err = consumer.New(d, ccfg)
	require.NoError(t, err)
	require.NoError(t, kv.tail.Assign([]consumer.TopicPartition{{Topic: compactedTopic, Partition: 0}, {Topic: compactedTopic, Partition: 1}}))
	kv.written = make(chan struct{})
	tps := kv.tail.Assignment()
	kv.tailing.Go(func() {
		defer func() {
			if err := kv.tail.Close(context.Background()); err != nil {
				t.Error(err)
			}
		}()
		for ctx.Err() == nil {
			pctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			recs, err := kv.tail.Poll(pctx)
			cancel()
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("tail of %s: %v", compactedTopic, err)
				return
			}
			kv.mu.Lock()
			for _, r := range recs {
				v, err := stressVersion(r.Headers)
				if err != nil {
					t.Errorf("offset %d: %v", r.Offset, err)
					continue
				}
				if prev, ok := kv.seen[string(r.Key)]; ok && v <= prev {
					t.Errorf("key %s went from version %d back to %d at offset %d", r.Key, prev, v, r.Offset)
				}
				kv.seen[string(r.Key)] = v
			}
			kv.mu.Unlock()
			select {
			case <-kv.written: // stop once caught up with every write
				end, err := kv.tail.EndOffsets(tps)
				if err != nil {
					t.Error(err)
					return
				}
				caughtUp := true
				for _, tp := range tps {
					if pos, err := kv.tail.Position(tp); err != nil || pos < end[tp] {
						caughtUp = false
					}
				}
				if caughtUp {
					return
				}
			default:
			}
		}
	})
	for q := range 2 {
		kv.writers.Go(func() {
			pcfg := DefaultConfig()
			pcfg.BatchSize = 512 // below segment.bytes, and many batches to clean
			pcfg.CompressionType = stressCodec(fmt.Sprintf("k%d", q))
			pr, err := New(d, pcfg)
			if err != nil {
				t.Error(err)
				return
			}
			for j := range 600 * scale {
				key := fmt.Sprintf("k%d-%d", q, j%20)
				rec := &Record{Topic: compactedTopic, Key: []byte(key), Headers: []record.Header{{Key: []byte("v"), Value: []byte(strconv.Itoa(j))}}}
				tombstone := j%9 == 8
				if !tombstone {
					rec.Value = []byte(key + "=" + strconv.Itoa(j))
				}
				if _, err := pr.Send(ctx, rec, func(_ RecordMetadata, err error) {
					if err != nil {
						t.Errorf("update %d of %s: %v", j, key, err)
						return
					}
					kv.mu.Lock()
					if j >= kv.acked[key] {
						kv.acked[key], kv.tomb[key] = j, tombstone
					}
					kv.mu.Unlock()
				}); err != nil {
					t.Error(err)
				}
			}
			if err := pr.Close(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	return kv
}

// wait waits for the writers, then for the tail to read up to the end.
func (kv *compactedStress) wait() {
	kv.writers.Wait()
	close(kv.written)
	kv.tailing.Wait()
}

// check cleans the topic once more and reads it whole: below the cleaned
// offset each key appears once, and each key's last record is its latest
// acknowledged version (a tombstone where that was a delete; the delete
// retention of one day keeps them).
func (kv *compactedStress) check(ctx context.Context, t *testing.T) {
	background := 0
	for p := range int32(2) {
		l, err := kv.d.Partition(compactedTopic, p)
		require.NoError(t, err)
		if st, ok := l.CleanerStats(); ok {
			background += st.Rounds
		}
	}
	_, err := kv.d.CleanNow(ctx)
	require.NoError(t, err)
	type last struct {
		version   int
		tombstone bool
	}
	got := map[string]last{}
	codecs := map[record.Compression]int{}
	removed, remaining := int64(0), 0
	for p := range int32(2) {
		l, err := kv.d.Partition(compactedTopic, p)
		require.NoError(t, err)
		st, ok := l.CleanerStats()
		require.True(t, ok, "partition %d was cleaned", p)
		removed += st.RecordsRemoved()
		cleaned := l.FirstDirtyOffset()
		below := map[string]bool{}
		for off := l.LogStartOffset(); off < l.LogEndOffset(); {
			off, err = l.ReadRecords(off, 1<<20, func(r *record.Record, h *record.BatchHeader) error {
				if err := checkStressCodec(string(r.Key), h, codecs); err != nil {
					return err // the cleaner keeps a batch's codec
				}
				v, err := stressVersion(r.Headers)
				if err != nil {
					return err
				}
				key := string(r.Key)
				if r.Offset < cleaned {
					require.False(t, below[key], "partition %d: key %s twice below the cleaned offset %d", p, key, cleaned)
					below[key] = true
				}
				got[key] = last{v, r.Value == nil}
				remaining++
				return nil
			})
			require.NoError(t, err)
		}
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	require.Len(t, got, len(kv.acked))
	for key, v := range kv.acked {
		require.Equal(t, last{v, kv.tomb[key]}, got[key], "key %s", key)
		require.Equal(t, v, kv.seen[key], "the tail read key %s up to its latest version", key)
	}
	require.Less(t, remaining, kv.sent, "the cleaner removed old versions")
	require.ElementsMatch(t, []record.Compression{stressCodec("k0"), stressCodec("k1")}, slices.Collect(maps.Keys(codecs)), "the writers' codecs, kept by the cleaner")
	t.Logf("compacted topic: %d keys, %d of %d records left, %d cleaning rounds in the background, %d records removed by the partitions' last rounds",
		len(kv.acked), remaining, kv.sent, background, removed)
}
