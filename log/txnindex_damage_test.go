package log

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
	"github.com/stretchr/testify/require"
)

// txnWorkload writes fixtureSegments segments mixing plain batches with
// the transactions of two producers, 7 and 8, interleaved so that an abort
// of one happens while the other's transaction is open (its .txnindex
// entry's last stable offset is then the other's first offset). It marks
// the records of aborted transactions in aborted, and returns every offset
// with a record, markers as records without key.
func txnWorkload(aborted map[int64]bool) func(t *testing.T, f *fixture, l *Log) []record.Record {
	return txnWorkloadOf(aborted, 7, 8)
}

// txnWorkloadOf is txnWorkload with the producer ids p7 and p8.
func txnWorkloadOf(aborted map[int64]bool, p7, p8 int64) func(t *testing.T, f *fixture, l *Log) []record.Record {
	return func(t *testing.T, f *fixture, l *Log) []record.Record {
		t.Helper()
		in := access.Internal{}
		seq := map[int64]int32{}
		var recs []record.Record
		txnBatch := func(pid int64, n int) []record.Record {
			first := l.LogEndOffset()
			var b record.Builder
			b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, Attributes: record.Attributes(0).WithCompression(f.codec).WithTransactional(true),
				ProducerID: pid, ProducerEpoch: 0, BaseSequence: seq[pid]}, record.DefaultLevel)
			var out []record.Record
			for i := range n {
				off := first + int64(i)
				rec := record.Record{Offset: off, Timestamp: fixtureTimestamp(off), Key: fmt.Appendf(nil, "k%d", off),
					Value: fmt.Appendf(bytes.Repeat([]byte{'t'}, 40), "-%d-%d", pid, off)}
				require.NoError(t, b.Append(rec.Timestamp, rec.Key, rec.Value, nil))
				out = append(out, rec)
			}
			batch, err := b.Build()
			require.NoError(t, err)
			_, err = l.Append(bytes.Clone(batch))
			require.NoError(t, err)
			seq[pid] += int32(n)
			return out
		}
		marker := func(pid int64, typ record.ControlType, data []record.Record) {
			off := l.LogEndOffset()
			_, err := l.AppendTxnMarker(in, pid, 0, record.EndTxnMarker{Type: typ})
			require.NoError(t, err)
			if typ == record.ControlAbort {
				for _, r := range data {
					aborted[r.Offset] = true
				}
			}
			recs = append(recs, record.Record{Offset: off})
		}
		for s := range fixtureSegments {
			for k := range 4 {
				recs = append(recs, f.appendBatch(t, l, 3)...)
				require.NoError(t, l.VerifyTransaction(in, p7, 0))
				t7 := txnBatch(p7, 3)
				recs = append(recs, t7...)
				require.NoError(t, l.VerifyTransaction(in, p8, 0))
				t8 := txnBatch(p8, 2)
				recs = append(recs, t8...)
				more := txnBatch(p7, 2)
				recs = append(recs, more...)
				t7 = append(t7, more...)
				typ7, typ8 := record.ControlCommit, record.ControlCommit
				if (s+k)%2 == 0 {
					typ7 = record.ControlAbort
				}
				if k%2 == 1 {
					typ8 = record.ControlAbort
				}
				marker(p7, typ7, t7)
				recs = append(recs, f.appendBatch(t, l, 2)...)
				marker(p8, typ8, t8)
			}
			if s < fixtureSegments-1 {
				require.NoError(t, l.Roll(context.Background()))
			}
		}
		return recs
	}
}

// committed returns what read_committed must deliver from the fixture:
// every data record but those of aborted transactions.
func committed(f *fixture, aborted map[int64]bool) []record.Record {
	var out []record.Record
	for _, r := range f.recs {
		if r.Key != nil && !aborted[r.Offset] {
			out = append(out, r)
		}
	}
	return out
}

// readCommitted reads the partition with ReadCommittedRecords.
func readCommitted(t *testing.T, l *Log) []record.Record {
	t.Helper()
	var out []record.Record
	for off := l.LogStartOffset(); off < l.LastStableOffset(); {
		next, err := l.ReadCommittedRecords(off, 4096, func(rec *record.Record, _ *record.BatchHeader) error {
			out = append(out, rec.Clone())
			return nil
		})
		require.NoError(t, err, "ReadCommittedRecords(%d)", off)
		require.Greater(t, next, off)
		off = next
	}
	return out
}

// consumeCommitted reads the partition as the consumer does at
// read_committed: raw batches from Log.Read, filtered by an AbortFilter
// reset from Log.AbortedTransactions at each fetch.
func consumeCommitted(t *testing.T, l *Log) []record.Record {
	t.Helper()
	var out []record.Record
	var f AbortFilter
	var buf []byte
	r := record.NewReader(record.ReaderOptions{})
	for off := l.LogStartOffset(); off < l.LastStableOffset(); {
		lso := l.LastStableOffset()
		require.NoError(t, f.Reset(l, off, lso))
		res, err := l.Read(off, 4096, true)
		require.NoError(t, err)
		require.NotNil(t, res.Slice)
		next := off
		buf, err = res.Slice.Batches(buf, func(h *record.BatchHeader, batch []byte) error {
			if h.BaseOffset >= lso {
				return nil
			}
			next = h.NextOffset()
			if f.Aborted(h) || h.Attributes.IsControl() {
				return nil
			}
			if err := r.Reset(batch); err != nil {
				return err
			}
			for r.Next() {
				if rec := r.Record(); rec.Offset >= off {
					out = append(out, rec.Clone())
				}
			}
			return r.Err()
		})
		res.Release()
		require.NoError(t, err)
		require.Greater(t, next, off)
		off = next
	}
	return out
}

func requireSameRecords(t *testing.T, want, got []record.Record) {
	t.Helper()
	require.Equal(t, len(want), len(got))
	for i := range want {
		requireSameRecord(t, want[i], got[i])
	}
}

// txnEntries parses a .txnindex file's bytes.
func txnEntries(b []byte) []index.AbortedTxn {
	var out []index.AbortedTxn
	for ; len(b) >= index.AbortedTxnBytes; b = b[index.AbortedTxnBytes:] {
		out = append(out, index.AbortedTxn{ProducerID: int64(binary.BigEndian.Uint64(b[2:])), FirstOffset: int64(binary.BigEndian.Uint64(b[10:])),
			LastOffset: int64(binary.BigEndian.Uint64(b[18:])), LastStableOffset: int64(binary.BigEndian.Uint64(b[26:]))})
	}
	return out
}

// TestDamagedTxnIndexIsRebuilt: a .txnindex that is damaged (a byte too
// many, a partial last entry, garbage, an entry whose offsets cannot be
// true, an entry missing, or the whole file missing while the segment holds
// ABORT markers) is rebuilt from the segment's ABORT markers, so that
// read_committed never returns a record of an aborted transaction, through
// ReadCommittedRecords or the consumer's path (AbortFilter over
// Log.AbortedTransactions). The rebuilt file is the one that was written.
func TestDamagedTxnIndexIsRebuilt(t *testing.T) {
	type damageFunc func(t *testing.T, fsys vfs.FS, name string, f *fixture, seg int)
	rewriteEntry := func(n int, change func(e *index.AbortedTxn, f *fixture, seg int)) damageFunc {
		return func(t *testing.T, fsys vfs.FS, name string, f *fixture, seg int) {
			b := readAt(t, fsys, name, 0, int(fileLen(t, fsys, name)))
			entries := txnEntries(b)
			if n < 0 {
				n += len(entries)
			}
			change(&entries[n], f, seg)
			writeAt(t, fsys, name, int64(n*index.AbortedTxnBytes), index.AppendAbortedTxn(nil, entries[n]))
		}
	}
	damages := []struct {
		name   string
		damage damageFunc
	}{
		{"a byte appended", func(t *testing.T, fsys vfs.FS, name string, _ *fixture, _ int) { appendByte(t, fsys, name) }},
		{"a partial last entry", func(t *testing.T, fsys vfs.FS, name string, _ *fixture, _ int) {
			truncateFile(t, fsys, name, fileLen(t, fsys, name)-20)
		}},
		{"the last entry missing", func(t *testing.T, fsys vfs.FS, name string, _ *fixture, _ int) {
			truncateFile(t, fsys, name, fileLen(t, fsys, name)-index.AbortedTxnBytes)
		}},
		{"garbage", func(t *testing.T, fsys vfs.FS, name string, _ *fixture, _ int) { garbage(t, fsys, name) }},
		{"first offset after last offset", rewriteEntry(0, func(e *index.AbortedTxn, _ *fixture, _ int) { e.FirstOffset = e.LastOffset + 5 })},
		{"last offset past the segment", rewriteEntry(-1, func(e *index.AbortedTxn, f *fixture, seg int) {
			e.LastOffset = f.bases[seg] + 100_000
		})},
		{"file missing", func(t *testing.T, fsys vfs.FS, name string, _ *fixture, _ int) { require.NoError(t, fsys.Remove(name)) }},
	}
	segments := []struct {
		name string
		seg  int
	}{{"sealed segment", 2}, {"active segment", fixtureSegments - 1}}
	for _, dm := range damages {
		for _, sg := range segments {
			for _, sd := range shutdowns {
				t.Run(dm.name+"/"+sg.name+"/"+sd.name, func(t *testing.T) {
					matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, c matrix.Case) {
						aborted := map[int64]bool{}
						f := newFixture(t, c, txnWorkload(aborted))
						name := f.file(sg.seg, segment.TxnIndexSuffix)
						original := readAt(t, f.fsys, name, 0, int(fileLen(t, f.fsys, name)))
						require.NotEmpty(t, txnEntries(original))
						dm.damage(t, f.fsys, name, f, sg.seg)

						_, l := f.reopen(t, sd.clean)
						want := committed(f, aborted)
						requireSameRecords(t, want, readCommitted(t, l))
						requireSameRecords(t, want, consumeCommitted(t, l))
						require.Equal(t, int64(1), l.Stats().TxnIndexRebuilds)
						require.Equal(t, original, readAt(t, f.fsys, name, 0, int(fileLen(t, f.fsys, name))), "the rebuilt .txnindex is the one written")
						require.Equal(t, 1, f.logs.count("rebuilt the .txnindex of a segment"))
					})
				})
			}
		}
	}
}

// TestUndamagedTxnIndexIsNotRebuilt is the control: nothing is rebuilt,
// and read_committed is right, when nothing was damaged.
func TestUndamagedTxnIndexIsNotRebuilt(t *testing.T) {
	for _, sd := range shutdowns {
		t.Run(sd.name, func(t *testing.T) {
			matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, c matrix.Case) {
				aborted := map[int64]bool{}
				f := newFixture(t, c, txnWorkload(aborted))
				_, l := f.reopen(t, sd.clean)
				want := committed(f, aborted)
				requireSameRecords(t, want, readCommitted(t, l))
				requireSameRecords(t, want, consumeCommitted(t, l))
				require.Zero(t, l.Stats().TxnIndexRebuilds)
			})
		})
	}
}

// TestTxnIndexCheckedWhileAppending: the first read_committed reads of a
// partition whose active segment lost its .txnindex check and rebuild it
// while transactions go on being appended and aborted: no read returns an
// aborted record, then or afterwards.
func TestTxnIndexCheckedWhileAppending(t *testing.T) {
	matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, c matrix.Case) {
		aborted := map[int64]bool{}
		f := newFixture(t, c, txnWorkload(aborted))
		require.NoError(t, f.fsys.Remove(f.file(fixtureSegments-1, segment.TxnIndexSuffix)))
		_, l := f.reopen(t, true)
		end := int64(len(f.recs))

		var wg sync.WaitGroup
		stop := make(chan struct{})
		var served []int64 // aborted offsets a read returned
		var readErr error
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for off := int64(0); off < min(end, l.LastStableOffset()); {
					next, err := l.ReadCommittedRecords(off, 4096, func(rec *record.Record, _ *record.BatchHeader) error {
						if rec.Offset < end && aborted[rec.Offset] && len(served) < 10 {
							served = append(served, rec.Offset)
						}
						return nil
					})
					if err != nil {
						readErr = err
						return
					}
					off = next
				}
			}
		})
		more := map[int64]bool{}
		recs := txnWorkloadOf(more, 17, 18)(t, f, l)
		close(stop)
		wg.Wait()
		require.NoError(t, readErr)
		require.Empty(t, served, "no aborted record is served")

		f.recs = append(f.recs, recs...)
		for off := range more {
			aborted[off] = true
		}
		requireSameRecords(t, committed(f, aborted), readCommitted(t, l))
		require.Equal(t, int64(1), l.Stats().TxnIndexRebuilds)
	})
}
