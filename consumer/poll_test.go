package consumer

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPollRecordsValidUntilNextPoll: every record a Poll returns keeps its
// key, value and headers until the next Poll, for every codec, both
// isolation levels, polls over one batch and over many, on both
// filesystems. Records are checked only once the Poll has returned all of
// them: a decompression buffer reused for the next batch of the same Poll
// (the bug this guards against) overwrote the earlier batches' records,
// and 1,800 of 2,000 lz4 records came back with other records' bytes.
func TestPollRecordsValidUntilNextPoll(t *testing.T) {
	matrix.Run(t, matrix.All, func(t *testing.T, mc matrix.Case) {
		e := newEnvFor(t, mc)
		e.topic("t", 2)
		const n = 2000
		perBatch := mc.RecordsPerBatch()
		// Partition 0: plain batches. Partition 1: transactions, one in
		// four aborted, so that read_committed skips some of them.
		l0, err := e.dir.Partition("t", 0)
		require.NoError(t, err)
		appendMatrixRecords(t, l0, mc.Codec, n, perBatch)
		w := newTxnWriter(t, e.dir, "t", 1)
		w.codec = mc.Codec
		var want1 []string // partition 1's values at the case's isolation level
		for i, txn := 0, 0; i < n; txn++ {
			var values []string
			for j := 0; j < perBatch && i < n; j, i = j+1, i+1 {
				values = append(values, fmt.Sprintf("value-%06d", i))
			}
			w.batch("A", time.Now().UnixMilli(), values...)
			abort := txn%4 == 3
			w.end("A", !abort)
			if !abort || !mc.ReadCommitted {
				want1 = append(want1, values...)
			}
		}

		c := e.consumer(func(c *Config) {
			c.MaxPollRecords = mc.MaxPollRecords()
			if mc.ReadCommitted {
				c.IsolationLevel = ReadCommitted
			}
		})
		require.NoError(t, c.Assign([]TopicPartition{tp("t", 0), tp("t", 1)}))
		got := map[int32][]string{}
		next := map[int32]int64{}
		for len(got[0]) < n || len(got[1]) < len(want1) {
			recs, err := c.poll(context.Background(), false)
			require.NoError(t, err)
			require.NotEmpty(t, recs, "stopped after %d + %d records", len(got[0]), len(got[1]))
			for _, r := range recs {
				require.GreaterOrEqual(t, r.Offset, next[r.Partition], "offsets ascend per partition")
				next[r.Partition] = r.Offset + 1
				got[r.Partition] = append(got[r.Partition], string(r.Value))
				if r.Partition == 0 {
					k, v, h := matrixRecord(int(r.Offset))
					require.Equal(t, string(k), string(r.Key), "key at offset %d", r.Offset)
					require.Equal(t, string(v), string(r.Value), "value at offset %d", r.Offset)
					require.Len(t, r.Headers, 1)
					require.Equal(t, string(h), string(r.Headers[0].Value), "header at offset %d", r.Offset)
				}
			}
		}
		require.Len(t, got[0], n)
		require.Equal(t, want1, got[1])
	})
}

// matrixRecord is record i of TestPollRecordsValidUntilNextPoll's plain
// partition: a distinct key, value and header value, so that a record
// showing another's bytes is caught.
func matrixRecord(i int) (key, value, header []byte) {
	return []byte(fmt.Sprintf("key-%06d", i)), []byte(fmt.Sprintf("value-%06d", i)), []byte(fmt.Sprintf("h-%06d", i))
}

// appendMatrixRecords appends records 0..n-1 of matrixRecord in batches of
// perBatch compressed with codec.
func appendMatrixRecords(t *testing.T, l *log.Log, codec record.Compression, n, perBatch int) {
	t.Helper()
	var b record.Builder
	for i := 0; i < n; {
		b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
			Attributes: record.Attributes(0).WithCompression(codec)}, record.DefaultLevel)
		for j := 0; j < perBatch && i < n; j, i = j+1, i+1 {
			k, v, h := matrixRecord(i)
			require.NoError(t, b.Append(time.Now().UnixMilli(), k, v, []record.Header{{Key: []byte("h"), Value: h}}))
		}
		batch, err := b.Build()
		require.NoError(t, err)
		_, err = l.Append(batch)
		require.NoError(t, err)
	}
}

// TestPollEmptyAndNullBytesSurviveCompression: a compressed batch's null
// and empty keys, values and header values come back as null and empty
// (the copy out of the decompression buffer keeps the difference).
func TestPollEmptyAndNullBytesSurviveCompression(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		e := newEnv(t)
		e.topic("t", 1)
		l, err := e.dir.Partition("t", 0)
		require.NoError(t, err)
		var b record.Builder
		b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
			Attributes: record.Attributes(0).WithCompression(codec)}, record.DefaultLevel)
		require.NoError(t, b.Append(1, nil, []byte{}, []record.Header{{Key: []byte("h"), Value: nil}}))
		require.NoError(t, b.Append(1, []byte{}, nil, []record.Header{{Key: []byte("h"), Value: []byte{}}}))
		batch, err := b.Build()
		require.NoError(t, err)
		_, err = l.Append(batch)
		require.NoError(t, err)

		c := e.consumer(nil)
		require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
		recs := drain(t, c)
		require.Len(t, recs, 2)
		assert.Nil(t, recs[0].Key)
		assert.Equal(t, []byte{}, recs[0].Value)
		assert.Nil(t, recs[0].Headers[0].Value)
		assert.Equal(t, []byte{}, recs[1].Key)
		assert.Nil(t, recs[1].Value)
		assert.Equal(t, []byte{}, recs[1].Headers[0].Value)
	})
}

// TestPollWithDoneContext: a Poll whose context is already done returns the
// context's error at once and no records, even with records buffered, and
// moves no position; the next Poll goes on from there.
func TestPollWithDoneContext(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		e := newEnvFor(t, matrix.Case{Codec: codec})
		e.topic("t", 1)
		e.produce("t", 0, 1000)
		c := e.consumer(func(c *Config) { c.MaxPollRecords = 10 })
		require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
		recs, err := c.Poll(context.Background())
		require.NoError(t, err)
		require.Len(t, recs, 10) // the rest of the first batch stays buffered

		for _, ctx := range []context.Context{cancelled(), expired(t)} {
			recs, err = c.Poll(ctx)
			require.ErrorIs(t, err, ctx.Err())
			require.Empty(t, recs)
			pos, err := c.Position(tp("t", 0))
			require.NoError(t, err)
			require.Equal(t, int64(10), pos)
		}
		recs, err = c.Poll(context.Background())
		require.NoError(t, err)
		require.Equal(t, int64(10), recs[0].Offset)
		require.Equal(t, "v10", string(recs[0].Value))
	})
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func expired(t *testing.T) context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	t.Cleanup(cancel)
	return ctx
}

// TestIdleMemberWaitingInPollStaysInGroup: max.poll.interval.ms bounds the
// time between Polls, not a Poll's wait. Members whose Poll waits 30 s on a
// quiet topic, with max.poll.interval.ms 10 s and heartbeats every 3 s,
// keep their partitions and their generation for 100 s (before the fix the
// member was dropped at 12 s and again every heartbeat, and three members
// reached generation 55). A member that stops calling Poll is still
// dropped after the interval.
func TestIdleMemberWaitingInPollStaysInGroup(t *testing.T) {
	for _, members := range []int{1, 3} {
		t.Run(fmt.Sprintf("members=%d", members), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				e.topic("t", 3)
				var cs []*Consumer
				var listeners []*recordingListener
				for range members {
					l := &recordingListener{}
					c := e.consumer(func(c *Config) {
						c.GroupID = "g"
						c.MaxPollInterval = 10 * time.Second
						c.HeartbeatInterval = 3 * time.Second
						c.SessionTimeout = 45 * time.Second
						c.PartitionAssignmentStrategy = []assignor.Assignor{assignor.Range()}
					})
					require.NoError(t, c.Subscribe([]string{"t"}, l))
					cs, listeners = append(cs, c), append(listeners, l)
				}
				// Join: poll until the partitions are split.
				for settled := false; !settled; {
					pollAll(t, cs, time.Second)
					total, gens := 0, map[int32]bool{}
					for _, c := range cs {
						total += len(c.Assignment())
						_, gen := c.memberAndGeneration()
						gens[gen] = true
					}
					settled = total == 3 && len(gens) == 1
				}
				_, gen := cs[0].memberAndGeneration()
				rebalances := make([]int64, members)
				for i, c := range cs {
					rebalances[i] = c.stats.rebalances.Load()
				}

				start := time.Now()
				for time.Since(start) < 100*time.Second {
					pollAll(t, cs, 30*time.Second)
				}
				for i, c := range cs {
					_, g := c.memberAndGeneration()
					assert.Equal(t, gen, g, "member %d's generation", i)
					assert.Equal(t, rebalances[i], c.stats.rebalances.Load(), "member %d rejoined", i)
					assert.NotEmpty(t, c.Assignment(), "member %d keeps its partitions", i)
					listeners[i].mu.Lock()
					assert.Empty(t, listeners[i].lost, "member %d lost partitions", i)
					listeners[i].mu.Unlock()
				}

				// Outside Poll the interval still counts: a member that stops
				// calling Poll leaves at the next heartbeat past 10 s, and its
				// next Poll reports its partitions lost.
				time.Sleep(13 * time.Second)
				pollAll(t, cs[:1], time.Second)
				listeners[0].mu.Lock()
				assert.NotEmpty(t, listeners[0].lost, "the member that stopped polling lost its partitions")
				listeners[0].mu.Unlock()
			})
		})
	}
}

// pollAll runs one Poll of each consumer at once, each with a context of
// wait, and waits for them; a Poll that ends by its context is not an error.
func pollAll(t *testing.T, cs []*Consumer, wait time.Duration) {
	t.Helper()
	errs := make(chan error, len(cs))
	for _, c := range cs {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			_, err := c.Poll(ctx)
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				err = nil
			}
			errs <- err
		}()
	}
	for range cs {
		require.NoError(t, <-errs)
	}
}

// TestListenerHearsEveryRebalance: OnPartitionsAssigned runs after every
// rebalance, also for a member given nothing (Kafka's listener contract);
// with the eager protocol OnPartitionsRevoked runs at the start of every
// rebalance after the first join, also for a member holding nothing. Two
// members share a one-partition topic, so one of them always has none.
func TestListenerHearsEveryRebalance(t *testing.T) {
	for _, tc := range []struct {
		name  string
		strat assignor.Assignor
		eager bool
	}{
		{"eager range", assignor.Range(), true},
		{"cooperative-sticky", assignor.CooperativeSticky(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.topic("t", 1)
			la, lb := &recordingListener{}, &recordingListener{}
			a, b := groupConsumer(e, tc.strat), groupConsumer(e, tc.strat)
			require.NoError(t, a.Subscribe([]string{"t"}, la))
			pollUntil(t, []*Consumer{a}, func() bool { return len(a.Assignment()) == 1 })
			require.NoError(t, b.Subscribe([]string{"t"}, lb))
			both := []*Consumer{a, b}
			pollUntil(t, both, func() bool {
				_, ga := a.memberAndGeneration()
				_, gb := b.memberAndGeneration()
				lb.mu.Lock()
				defer lb.mu.Unlock()
				return ga == gb && len(lb.assigned) > 0
			})
			// b joined and got nothing: it still heard of the assignment.
			require.Empty(t, b.Assignment())
			lb.mu.Lock()
			require.Len(t, lb.assigned, 1, "b's OnPartitionsAssigned with no partitions")
			require.Empty(t, lb.assigned[0])
			require.Empty(t, lb.revoked, "no revocation before the first join")
			lb.mu.Unlock()

			// Another rebalance (a third member comes and goes): b hears
			// of it again, with nothing revoked and nothing assigned.
			_, before := b.memberAndGeneration()
			c := groupConsumer(e, tc.strat)
			require.NoError(t, c.Subscribe([]string{"t"}, nil))
			pollUntil(t, []*Consumer{a, b, c}, func() bool {
				_, g := b.memberAndGeneration()
				return g > before
			})
			require.NoError(t, c.Close(context.Background()))
			lb.mu.Lock()
			defer lb.mu.Unlock()
			require.GreaterOrEqual(t, len(lb.assigned), 2, "b's OnPartitionsAssigned after the second rebalance")
			for _, tps := range lb.assigned {
				require.Empty(t, tps)
			}
			if tc.eager {
				require.NotEmpty(t, lb.revoked, "eager: b's OnPartitionsRevoked at the rebalance")
				for _, tps := range lb.revoked {
					require.Empty(t, tps)
				}
			} else {
				require.Empty(t, lb.revoked, "cooperative: nothing of b's moved")
			}
		})
	}
}

// TestPollCorruptBatch: a batch whose bytes were damaged on disk below the
// recovery point (a value byte flipped, outside anything recovery checks)
// fails Poll with a CorruptRecordError matching record.ErrCorrupt, naming
// the partition and the position; the records before it are returned
// first; every Poll fails again until a Seek past the batch, after which
// the records after it come. Every codec, both isolation levels.
func TestPollCorruptBatch(t *testing.T) {
	matrix.Run(t, matrix.Codecs|matrix.Isolations, func(t *testing.T, mc matrix.Case) {
		e := newEnvFor(t, mc)
		e.topic("t", 1)
		e.produce("t", 0, 300) // batches 0-99, 100-199, 200-299
		l, err := e.dir.Partition("t", 0)
		require.NoError(t, err)
		res, err := l.Read(100, 1, true)
		require.NoError(t, err)
		pos, size := res.Slice.Position, res.Slice.Size
		res.Release()
		flipByte(t, e.mem, "/data/t-0/00000000000000000000.log", pos+size-3) // in the last record

		c := e.consumer(func(c *Config) {
			if mc.ReadCommitted {
				c.IsolationLevel = ReadCommitted
			}
		})
		require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
		recs, err := c.Poll(context.Background())
		require.NoError(t, err, "the records before the damage come first")
		require.Len(t, recs, 100)
		require.Equal(t, int64(99), recs[99].Offset)
		for range 3 {
			recs, err = c.Poll(context.Background())
			require.ErrorIs(t, err, record.ErrCorrupt)
			var ce *CorruptRecordError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tp("t", 0), ce.Partition)
			require.Equal(t, int64(100), ce.Offset)
			require.Equal(t, int64(200), ce.ResumeAt, "after the damaged batch")
			require.Empty(t, recs)
		}
		require.NoError(t, c.Seek(tp("t", 0), ce200(t, c)))
		recs, err = c.Poll(context.Background())
		require.NoError(t, err)
		require.Equal(t, int64(200), recs[0].Offset)
		require.Equal(t, "v200", string(recs[0].Value))
	})
}

// ce200 polls once more and returns the CorruptRecordError's ResumeAt.
func ce200(t *testing.T, c *Consumer) int64 {
	t.Helper()
	_, err := c.Poll(context.Background())
	var ce *CorruptRecordError
	require.ErrorAs(t, err, &ce)
	return ce.ResumeAt
}

// TestPollDamagedStorage: damage the log finds where the next batch should
// be — a bit flipped in a batch's base offset (outside its CRC), a sealed
// segment cut short — is a CorruptRecordError too, at the position, with
// where reading goes on; the flipped batch is never served at an offset
// that was never written, and is not redelivered forever from earliest.
// Every codec; the directory reopened after a clean shutdown, so nothing
// is rescanned.
func TestPollDamagedStorage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, e *env, first, second int64)
		resume int64 // where ResumeAt points
		after  int64 // the first offset read after the Seek
	}{
		{"base offset bit flipped", func(t *testing.T, e *env, first, _ int64) {
			flipBit(t, e.mem, "/data/t-0/00000000000000000000.log", first+2, 0x01) // 2^40 added to base offset 0
		}, 100, 100},
		{"sealed segment cut short", func(t *testing.T, e *env, _, second int64) {
			f, err := e.mem.OpenReadWrite("/data/t-0/00000000000000000000.log")
			require.NoError(t, err)
			require.NoError(t, f.Truncate(second+30)) // inside the second batch
			require.NoError(t, f.Close())
		}, 300, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
				e := newEnvFor(t, matrix.Case{Codec: codec})
				_, err := e.dir.CreateTopic(context.Background(), "t", 1, map[string]string{"segment.bytes": "1048576"})
				require.NoError(t, err)
				e.produce("t", 0, 300) // batches 0-99, 100-199, 200-299
				l, err := e.dir.Partition("t", 0)
				require.NoError(t, err)
				require.NoError(t, l.Roll(context.Background())) // the batches are in a sealed segment
				e.produce("t", 0, 100)                           // 300-399 in the next one
				positions := batchPositions(t, l, 0, 100)
				e.reopen() // clean: nothing is rescanned
				tc.damage(t, e, positions[0], positions[1])
				e.reopen()

				c := e.consumer(nil)
				require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
				var got []Record
				for len(got) < 400 {
					recs, err := c.poll(context.Background(), false)
					if err != nil {
						var ce *CorruptRecordError
						require.ErrorAs(t, err, &ce)
						require.ErrorIs(t, err, record.ErrCorrupt)
						require.Equal(t, tc.resume, ce.ResumeAt, "%v", err)
						_, again := c.poll(context.Background(), false)
						require.ErrorAs(t, again, &ce, "every Poll fails there until a Seek")
						require.NoError(t, c.Seek(tp("t", 0), ce.ResumeAt))
						continue
					}
					if len(recs) == 0 {
						break
					}
					for i := range recs {
						got = append(got, recs[i].Clone()) // kept past the next Poll
					}
				}
				for i, r := range got {
					require.Less(t, r.Offset, int64(400), "no offset that was never written")
					if i > 0 {
						require.Greater(t, r.Offset, got[i-1].Offset, "no record twice")
					}
					want := fmt.Sprintf("v%d", r.Offset)
					if r.Offset >= 300 {
						want = fmt.Sprintf("v%d", r.Offset-300) // the second produce numbers from 0
					}
					require.Equal(t, want, string(r.Value), "offset %d", r.Offset)
				}
				require.Equal(t, int64(399), got[len(got)-1].Offset)
				require.Contains(t, offsetsOf(got), tc.after)
			})
		})
	}
}

// batchPositions returns the file positions of the batches at the given
// offsets of l's first segment.
func batchPositions(t *testing.T, l *log.Log, offsets ...int64) []int64 {
	t.Helper()
	var out []int64
	for _, off := range offsets {
		res, err := l.Read(off, 1, true)
		require.NoError(t, err)
		out = append(out, res.Slice.Position)
		res.Release()
	}
	return out
}

func offsetsOf(recs []Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Offset
	}
	return out
}

// flipBit inverts the bits of mask in the byte at pos of a file of the
// memory filesystem.
func flipBit(t *testing.T, mem *vfs.MemFS, name string, pos int64, mask byte) {
	t.Helper()
	f, err := mem.OpenReadWrite(name)
	require.NoError(t, err)
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, pos)
	require.NoError(t, err)
	b[0] ^= mask
	_, err = f.WriteAt(b, pos)
	require.NoError(t, err)
}

// flipByte inverts the byte at pos of a file of the memory filesystem.
func flipByte(t *testing.T, mem *vfs.MemFS, name string, pos int64) { flipBit(t, mem, name, pos, 0xff) }

// TestPollAfterDirClosed: Poll on a consumer whose Dir was closed fails
// with an error matching log.ErrClosed, with or without a group.
func TestPollAfterDirClosed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(c *Consumer) error
	}{
		{"assigned", func(c *Consumer) error { return c.Assign([]TopicPartition{tp("t", 0)}) }},
		{"subscribed", func(c *Consumer) error { return c.Subscribe([]string{"t"}, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.topic("t", 1)
			e.produce("t", 0, 10)
			c := e.consumer(func(c *Config) {
				c.GroupID = "g"
				c.PartitionAssignmentStrategy = []assignor.Assignor{assignor.Range()}
			})
			require.NoError(t, tc.setup(c))
			require.NoError(t, e.dir.Close())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := c.Poll(ctx)
			require.ErrorIs(t, err, log.ErrClosed)
		})
	}
}

// TestSeekReadsLittle: a Poll after a Seek reads the batch holding the
// position and little more (seekReadBytes), not max.partition.fetch.bytes
// of batches (a point read through Seek and Poll read 1 MiB each time,
// 5,000 reads a second against the log's 290,000); reading on from
// there, each read doubles until it reads at the full size, and every
// record comes once, in order, for every codec, one and many batches,
// both isolation levels and both filesystems.
func TestSeekReadsLittle(t *testing.T) {
	matrix.Run(t, matrix.All, func(t *testing.T, mc matrix.Case) {
		e := newEnvFor(t, mc)
		e.topic("t", 1)
		l, err := e.dir.Partition("t", 0)
		require.NoError(t, err)
		const n = 6000
		appendMatrixRecords(t, l, mc.Codec, n, mc.RecordsPerBatch())
		c := e.consumer(func(c *Config) {
			c.MaxPollRecords = mc.MaxPollRecords()
			if mc.ReadCommitted {
				c.IsolationLevel = ReadCommitted
			}
		})
		require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
		per := mc.RecordsPerBatch()
		var starts []int64
		for o := int64(0); o < n; o += int64(per) {
			starts = append(starts, o)
		}
		largest := 0
		for _, o := range starts {
			res, err := l.Read(o, 1, true) // the one batch holding o
			require.NoError(t, err)
			largest = max(largest, int(res.Slice.Size))
			res.Release()
		}
		var recs []Record
		for _, at := range []int64{n / 2, 17, n - 1, 0} {
			require.NoError(t, c.Seek(tp("t", 0), at))
			before := c.Stats().Bytes
			recs, err = c.Poll(context.Background())
			require.NoError(t, err)
			require.NotEmpty(t, recs)
			require.Equal(t, at, recs[0].Offset)
			read := c.Stats().Bytes - before
			require.LessOrEqual(t, read, int64(seekReadBytes+largest), "a Poll after Seek(%d) read %d bytes", at, read)
		}
		// From offset 0 on, everything once, in order.
		for next := int64(0); next < n; {
			if next > 0 {
				recs, err = c.Poll(context.Background())
				require.NoError(t, err)
			}
			for _, r := range recs {
				require.Equal(t, next, r.Offset)
				k, v, _ := matrixRecord(int(next))
				require.Equal(t, []any{k, v}, []any{r.Key, r.Value})
				next++
			}
		}
	})
}
