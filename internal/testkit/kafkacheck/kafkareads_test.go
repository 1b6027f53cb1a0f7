package kafkacheck

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tests of this file are check 2 of the interoperability issue:
// Kafka's DumpLogSegments reads the directory WriteFeatureDir writes, and
// every batch, record, index entry, aborted transaction, producer snapshot
// and coordinator record it prints is what the builder wrote. Each test
// builds its own directory (a fraction of a second) and runs the tool as
// few times as it can, over many files at once.

// featureDir resolves Kafka and writes a feature directory.
func featureDir(t *testing.T) (*Kafka, string, *Expected) {
	t.Helper()
	k := Get(t)
	dir := filepath.Join(t.TempDir(), "kafkalite")
	return k, dir, WriteFeatureDir(t, dir)
}

// dumpPartitions dumps the .log files of the partitions, and the extra
// files, in one run with --deep-iteration --print-data-log and flags,
// requires that Kafka reports no problem, and checks each partition in a
// subtest.
func dumpPartitions(t *testing.T, k *Kafka, dir string, exp *Expected, tps []TopicPartition, extra []string, flags ...string) *DumpOutput {
	t.Helper()
	logs := map[TopicPartition][]SegmentFile{}
	var files []string
	for _, tp := range tps {
		logs[tp] = PartitionFiles(t, dir, tp, ".log")
		files = append(files, Paths(logs[tp])...)
	}
	out := k.Dump(t, append(files, extra...), append([]string{"--deep-iteration", "--print-data-log"}, flags...)...)
	require.Empty(t, out.Problems, "DumpLogSegments reports no problem")
	for _, tp := range tps {
		t.Run(tp.String(), func(t *testing.T) {
			RequirePartitionDump(t, out, exp.Partitions[tp], tp, logs[tp])
		})
	}
	return out
}

// TestKafkaReadsKafkaliteSegments: every batch and record of the data
// topics decodes in Kafka as written: every codec, headers, null and empty
// keys and values, LogAppendTime, log recompression, many segments. Each
// partition directory holds only the files Kafka's layout has.
func TestKafkaReadsKafkaliteSegments(t *testing.T) {
	k, dir, exp := featureDir(t)
	tps := exp.SortedPartitions(TopicCodecs, TopicLogAppend, TopicRecompress, TopicSegments)
	dumpPartitions(t, k, dir, exp, tps, nil)

	t.Run("record bytes and header values", func(t *testing.T) {
		// DumpLogSegments prints header keys only, and keys and values as
		// text: Kafka's record classes give the rest, for every data topic.
		all := exp.SortedPartitions(TopicCodecs, TopicLogAppend, TopicRecompress, TopicSegments, TopicCompacted, TopicTxn)
		var files []string
		for _, tp := range all {
			files = append(files, Paths(PartitionFiles(t, dir, tp, ".log"))...)
		}
		got := map[TopicPartition][]KafkaRecord{}
		for _, r := range k.RecordBytes(t, files) {
			tp, err := parsePartitionDir(filepath.Base(filepath.Dir(r.File)))
			require.NoError(t, err)
			got[tp] = append(got[tp], r)
		}
		for _, tp := range all {
			want := exp.ConsumerView(tp, false)
			require.Len(t, got[tp], len(want), "%s: data records", tp)
			for i, w := range want {
				g := got[tp][i]
				require.Equal(t, [2]int64{w.Offset, w.Timestamp}, [2]int64{g.Offset, g.Timestamp}, "%s record %d: offset, timestamp", tp, i)
				require.Equal(t, w.Key, g.Key, "%s offset %d: key", tp, w.Offset)
				require.Equal(t, w.Value, g.Value, "%s offset %d: value", tp, w.Offset)
				require.Equal(t, w.Headers, g.Headers, "%s offset %d: headers", tp, w.Offset)
			}
		}
	})

	require.Greater(t, len(PartitionFiles(t, dir, TopicPartition{TopicSegments, 0}, ".log")), 10, "segments rolled many times")
	require.Greater(t, len(PartitionFiles(t, dir, TopicPartition{TopicCodecs, 0}, ".log")), 1, "codecs-0 rolled")
	for _, tp := range exp.SortedPartitions() {
		ents, err := os.ReadDir(filepath.Join(dir, tp.String()))
		require.NoError(t, err)
		for _, e := range ents {
			name := e.Name()
			ok := name == "leader-epoch-checkpoint" || name == "partition.metadata"
			for _, ext := range []string{".log", ".index", ".timeindex", ".txnindex", ".snapshot"} {
				base, found := strings.CutSuffix(name, ext)
				ok = ok || (found && len(base) == 20)
			}
			require.True(t, ok, "%s: %s is a file of Kafka's partition layout", tp, name)
		}
	}
}

// TestKafkaReadsKafkaliteCompacted: the compacted topic after two cleaner
// rounds decodes as Kafka's cleaner would have left it: removed records
// and batches, delete horizons on tombstones and markers, an emptied batch,
// batches copied unchanged.
func TestKafkaReadsKafkaliteCompacted(t *testing.T) {
	k, dir, exp := featureDir(t)
	tps := exp.SortedPartitions(TopicCompacted)
	dumpPartitions(t, k, dir, exp, tps, nil)
	for _, tp := range tps {
		require.Empty(t, PartitionFiles(t, dir, tp, ".txnindex"), "%s: the cleaner dropped the aborted transaction's entry with its data", tp)
	}
}

// TestKafkaReadsKafkaliteTransactions: transactional batches, COMMIT and
// ABORT markers (producer id, epoch, coordinator epoch) decode as written,
// and every .txnindex lists exactly the aborted transactions of its
// segment, with Kafka's last stable offsets.
func TestKafkaReadsKafkaliteTransactions(t *testing.T) {
	k, dir, exp := featureDir(t)
	var txnindexes []string
	for _, tp := range exp.SortedPartitions() {
		txnindexes = append(txnindexes, Paths(PartitionFiles(t, dir, tp, ".txnindex"))...)
	}
	txn := dumpPartitions(t, k, dir, exp, exp.SortedPartitions(TopicTxn), txnindexes)
	for _, tp := range exp.SortedPartitions() {
		t.Run(tp.String()+"/txnindex", func(t *testing.T) {
			segs := PartitionFiles(t, dir, tp, ".log")
			byFile := map[string][]AbortedTxn{}
			for _, a := range exp.Partitions[tp].Aborted {
				i := len(segs) - 1
				for segs[i].Offset > a.LastOffset {
					i--
				}
				path := strings.TrimSuffix(segs[i].Path, ".log") + ".txnindex"
				byFile[path] = append(byFile[path], a)
			}
			files := PartitionFiles(t, dir, tp, ".txnindex")
			require.Len(t, files, len(byFile), "%s: a .txnindex exactly where a segment holds an ABORT marker of a transaction with data", tp)
			for _, f := range files {
				d := txn.File(f.Path)
				require.NotNil(t, d, f.Path)
				require.Equal(t, byFile[f.Path], d.Aborted, "%s: aborted transactions", f.Path)
			}
		})
	}
	aborts := exp.Partitions[TopicPartition{TopicTxn, 0}].Aborted
	require.Len(t, aborts, 2, "txn-0 holds two aborts")
	require.Less(t, aborts[1].LastStableOffset, aborts[1].FirstOffset, "txn-b aborted while txn-a's transaction, begun before it, was open")
}

// TestKafkaReadsKafkaliteSnapshots: every producer-state .snapshot holds,
// for each producer, what Kafka's ProducerStateManager would have after the
// batches below the snapshot's offset; snapshots exist at each segment's
// base offset and at the log end, and nowhere else (Kafka removes those of
// segments the cleaner merged away).
func TestKafkaReadsKafkaliteSnapshots(t *testing.T) {
	k, dir, exp := featureDir(t)
	snaps := map[TopicPartition][]SegmentFile{}
	var files []string
	for _, tp := range exp.SortedPartitions() {
		snaps[tp] = PartitionFiles(t, dir, tp, ".snapshot")
		files = append(files, Paths(snaps[tp])...)
	}
	out := k.Dump(t, files)
	require.Empty(t, out.Problems)
	for _, tp := range exp.SortedPartitions() {
		t.Run(tp.String(), func(t *testing.T) {
			p := exp.Partitions[tp]
			var want []int64
			for _, s := range PartitionFiles(t, dir, tp, ".log") {
				if s.Offset > 0 {
					want = append(want, s.Offset)
				}
			}
			if !slices.Contains(want, p.LogEndOffset) {
				want = append(want, p.LogEndOffset)
			}
			var got []int64
			for _, s := range snaps[tp] {
				got = append(got, s.Offset)
			}
			require.Equal(t, want, got, "%s: snapshot offsets: every segment's base but the first, and the log end", tp)
			for _, s := range snaps[tp] {
				d := out.File(s.Path)
				require.NotNil(t, d, s.Path)
				gotEntries := slices.Clone(d.Producers)
				slices.SortFunc(gotEntries, func(a, b SnapshotEntry) int { return int(a.ProducerID - b.ProducerID) })
				require.Equal(t, p.ProducerStateAt(s.Offset), gotEntries, "%s: producer state", s.Path)
			}
		})
	}
}

// TestKafkaReadsKafkaliteGroupsAndTransactionLog: __consumer_offsets and
// __transaction_state decode with Kafka's own decoders into the group
// metadata, committed offsets (plain and transactional, with their
// markers) and transaction states written.
func TestKafkaReadsKafkaliteGroupsAndTransactionLog(t *testing.T) {
	k, dir, exp := featureDir(t)
	dumpPartitions(t, k, dir, exp, []TopicPartition{{OffsetsTopic, 0}}, nil, "--offsets-decoder")
	dumpPartitions(t, k, dir, exp, []TopicPartition{{TxnStateTopic, 0}}, nil, "--transaction-log-decoder")
}

// TestKafkaReadsKafkaliteIndexes: every .index and .timeindex, of sealed,
// active (after the clean close) and cleaned segments, holds exactly the
// entries Kafka's LogSegment would have written for the segment's batches
// (KafkaIndexEntries), is trimmed to them, passes DumpLogSegments'
// verification (each entry names the last offset of the batch at its
// position, and that batch's largest record timestamp) with and without
// --verify-index-only, and passes the sanity check a broker runs at startup
// (--index-sanity-check).
func TestKafkaReadsKafkaliteIndexes(t *testing.T) {
	k, dir, exp := featureDir(t)
	type segment struct {
		tp                TopicPartition
		log, index, times SegmentFile
	}
	var segs []segment
	var logs, indexes []string
	for _, tp := range exp.SortedPartitions() {
		ls := PartitionFiles(t, dir, tp, ".log")
		is := PartitionFiles(t, dir, tp, ".index")
		ts := PartitionFiles(t, dir, tp, ".timeindex")
		require.Len(t, is, len(ls), "%s: an .index per segment", tp)
		require.Len(t, ts, len(ls), "%s: a .timeindex per segment", tp)
		for i := range ls {
			require.Equal(t, ls[i].Offset, is[i].Offset)
			require.Equal(t, ls[i].Offset, ts[i].Offset)
			segs = append(segs, segment{tp, ls[i], is[i], ts[i]})
			logs = append(logs, ls[i].Path)
			indexes = append(indexes, is[i].Path, ts[i].Path)
		}
	}
	out := k.Dump(t, append(slices.Clone(logs), indexes...))
	require.Empty(t, out.Problems, "DumpLogSegments finds every index entry where it points")
	for _, s := range segs {
		t.Run(strings.TrimSuffix(filepath.Base(s.log.Path), ".log")+"@"+s.tp.String(), func(t *testing.T) {
			interval := int64(4096)
			if v, ok := exp.Topics[s.tp.Topic].Config["index.interval.bytes"]; ok {
				interval = mustInt(t, v)
			}
			wantIdx, wantTime := KafkaIndexEntries(out.File(s.log.Path).Batches, s.log.Offset, interval)
			idx, times := out.File(s.index.Path), out.File(s.times.Path)
			require.Equal(t, wantIdx, idx.IndexEntries, "%s: offset index entries", s.index.Path)
			require.Equal(t, len(wantIdx) == 0, idx.Empty, "%s: \"is empty.\" exactly when it has no entries", s.index.Path)
			require.Equal(t, wantTime, times.TimeEntries, "%s: time index entries", s.times.Path)
			require.Equal(t, int64(8*len(wantIdx)), s.index.Size, "%s is trimmed to its entries", s.index.Path)
			require.Equal(t, int64(12*len(wantTime)), s.times.Size, "%s is trimmed to its entries", s.times.Path)
		})
	}

	t.Run("segments roll when an index is full", func(t *testing.T) {
		// Kafka rolls before a batch that would not fit segment.bytes, and
		// when the offset index is full or the time index has one free
		// slot left (TimeIndex.isFull keeps the last for the roll).
		// segments rolls both ways.
		tp := TopicPartition{TopicSegments, 0}
		limit := mustInt(t, exp.Topics[TopicSegments].Config["segment.bytes"])
		bySize, byIndex := 0, 0
		var prev *segment
		for i := range segs {
			s := &segs[i]
			if s.tp != tp {
				continue
			}
			if prev != nil {
				next := out.File(s.log.Path).Batches[0].Size
				if prev.log.Size+next > limit {
					bySize++
				} else {
					byIndex++
					idx, times := out.File(prev.index.Path), out.File(prev.times.Path)
					require.True(t, len(idx.IndexEntries) == 5 || len(times.TimeEntries) >= 2,
						"%s rolled with room for the next batch: an index was full", prev.log.Path)
				}
			}
			prev = s
		}
		t.Logf("%s: %d rolls by size, %d by a full index", tp, bySize, byIndex)
		require.Positive(t, bySize, "rolls by size")
		require.Positive(t, byIndex, "rolls by a full index")
	})

	verify := k.Dump(t, indexes, "--verify-index-only")
	require.Empty(t, verify.Problems, "--verify-index-only finds nothing")
	require.Len(t, verify.Files, len(indexes))
	for _, f := range verify.Files {
		require.Empty(t, f.IndexEntries, "%s: --verify-index-only prints no entries", f.Path)
		require.Empty(t, f.TimeEntries, "%s: --verify-index-only prints no entries", f.Path)
	}

	sanity := k.Dump(t, indexes, "--index-sanity-check")
	require.Empty(t, sanity.Problems)
	require.Len(t, sanity.Files, len(indexes))
	for _, f := range sanity.Files {
		empty := out.File(f.Path).Empty
		require.True(t, f.SanityPassed != empty, "%s passed the sanity check (or is an empty .index, which the tool skips)", f.Path)
	}
}

func mustInt(t testing.TB, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	return v
}

// parsePartitionDir splits a partition directory's name, <topic>-<partition>.
func parsePartitionDir(name string) (TopicPartition, error) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return TopicPartition{}, fmt.Errorf("not a partition directory: %s", name)
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	return TopicPartition{name[:i], int32(p)}, err
}
