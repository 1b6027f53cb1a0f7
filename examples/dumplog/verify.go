package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/log/logdir"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// checkBatch verifies one batch: its CRC and layout (every record decoded,
// after decompression), and offsets that increase from the segment's base
// offset and from the previous batch.
func (d *dumper) checkBatch(st *partitionState, base int64, path string, pos int64, batch []byte, h *record.BatchHeader, verr error) {
	at := func(format string, args ...any) {
		d.problemf("%s: batch at position %d (offsets %d-%d): "+format,
			append([]any{path, pos, h.BaseOffset, h.LastOffset()}, args...)...)
	}
	if verr != nil {
		at("%v", verr)
	}
	r := record.NewReader(record.ReaderOptions{SkipCRC: true})
	if err := r.Reset(batch); err == nil {
		for {
			if _, _, _, ok := r.Skim(); !ok {
				break
			}
		}
	}
	if err := r.Err(); err != nil && verr == nil {
		at("%v", err)
	}
	switch {
	case h.LastOffsetDelta < 0:
		at("negative lastOffsetDelta %d", h.LastOffsetDelta)
	case h.BaseOffset < base:
		at("starts before the segment's base offset %d", base)
	case h.BaseOffset <= st.prevLast:
		at("offsets go backwards: the previous batch ends at offset %d", st.prevLast)
	}
	st.prevLast = max(st.prevLast, h.LastOffset())
}

// trackTxn follows a batch's effect on transactions and leader epochs, for
// the .txnindex and leader-epoch-checkpoint checks.
func (d *dumper) trackTxn(st *partitionState, batch []byte, h *record.BatchHeader) {
	if e := h.PartitionLeaderEpoch; e >= 0 && (len(st.epochs) == 0 || st.epochs[len(st.epochs)-1].Epoch != e) {
		st.epochs = append(st.epochs, logdir.EpochEntry{Epoch: e, StartOffset: h.BaseOffset})
	}
	if !h.Attributes.IsTransactional() {
		return
	}
	pid := h.ProducerID
	if !h.Attributes.IsControl() {
		if _, ok := st.open[pid]; !ok {
			st.open[pid] = h.BaseOffset
		}
		return
	}
	r := record.NewReader(record.ReaderOptions{SkipCRC: true})
	if r.Reset(batch) != nil || !r.Next() {
		return // reported by checkBatch
	}
	typ, err := record.ParseControlKey(r.Record().Key)
	if err != nil {
		return
	}
	first, withData := st.open[pid]
	delete(st.open, pid)
	if typ != record.ControlAbort {
		return
	}
	lso := h.BaseOffset + 1
	for _, f := range st.open {
		lso = min(lso, f)
	}
	if !withData {
		first = -1
	}
	st.aborts[h.BaseOffset] = expectedAbort{
		txn:      index.AbortedTxn{ProducerID: pid, FirstOffset: first, LastOffset: h.BaseOffset, LastStableOffset: lso},
		withData: withData,
		lsoKnown: withData && st.whole,
	}
}

// offsetIndex dumps a segment's .index and checks every entry against the
// batches of its .log.
func (d *dumper) offsetIndex(scan *logScan, pf partitionFiles, last bool) {
	name := segment.FileName(scan.base, segment.IndexSuffix)
	path := filepath.Join(filepath.Dir(scan.path), name)
	if !pf.has[name] {
		d.problemf("%s: missing (Kafka would rebuild the segment's indexes from the .log)", path)
		return
	}
	d.printf("Dumping %s\n", path)
	ix, err := index.OpenOffsetIndex(vfs.Default, path, scan.base, index.DefaultMaxIndexBytes, index.ReadOnly)
	if err != nil {
		d.fileProblem(path, err)
		return
	}
	defer ix.Close()
	entries, ok := indexEntries(d, path, index.OffsetIndexEntryBytes, last, ix.Entries(), ix.SanityCheck, ix.Entry)
	if !ok {
		return
	}
	for i, e := range entries {
		d.printf("offset: %d position: %d\n", e.Offset, e.Position)
		if !d.opts.verify {
			continue
		}
		if i > 0 && (e.Offset <= entries[i-1].Offset || e.Position <= entries[i-1].Position) {
			d.problemf("%s: entry %d (offset %d, position %d) does not increase from entry %d (offset %d, position %d)",
				path, i, e.Offset, e.Position, i-1, entries[i-1].Offset, entries[i-1].Position)
		}
		bi, ok := scan.byPos[int64(e.Position)]
		switch {
		case int64(e.Position) >= scan.end:
			d.problemf("%s: entry %d (offset %d) points at position %d, past the end of the .log's batches (%d bytes)", path, i, e.Offset, e.Position, scan.end)
		case !ok:
			d.problemf("%s: entry %d (offset %d) points at position %d, which is not where a batch starts", path, i, e.Offset, e.Position)
		case scan.batches[bi].h.LastOffset() != e.Offset:
			d.problemf("%s: entry %d names offset %d, but the batch at position %d ends at offset %d", path, i, e.Offset, e.Position, scan.batches[bi].h.LastOffset())
		}
	}
}

// usedSlots returns the number of entries in use in an index file: the
// slots before the run of all-zero slots that ends an untrimmed, preallocated
// index (the index package counts an active index's entries the same way).
// As in kafka-dump-log, a zero first slot counts as an entry of a sealed
// segment's index (an entry of the base offset at position 0 is possible);
// in the last segment's it is unused too. The file is read from its end, so
// a 10 MiB preallocated index costs little.
func usedSlots(path string, entrySize int, last bool) (int, error) {
	f, err := vfs.Default.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0, err
	}
	end := size - size%int64(entrySize) // bytes of whole slots
	buf := make([]byte, 64<<10)
	for end > 0 {
		from := max(0, end-int64(len(buf)))
		chunk := buf[:end-from]
		got, err := f.ReadAt(chunk, from)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if got < len(chunk) {
			return 0, fmt.Errorf("%s: cut to %d bytes while it was read: %w", path, from+int64(got), io.ErrUnexpectedEOF)
		}
		for i := len(chunk) - 1; i >= 0; i-- {
			if chunk[i] != 0 {
				return int((from+int64(i))/int64(entrySize)) + 1, nil
			}
		}
		end = from
	}
	if !last && size >= int64(entrySize) {
		return 1, nil
	}
	return 0, nil
}

// checkTrimmed reports an untrimmed index of a sealed segment, and applies
// Kafka's sanity check to trimmed indexes (an untrimmed active index fails
// it as Kafka reads files: its zero slots count as entries).
func (d *dumper) checkTrimmed(sanityCheck func() error, path string, unused int, last bool) {
	switch {
	case unused > 0 && !last:
		d.problemf("%s: %d unused slots at the end: not trimmed, although its segment is not the last (Kafka counts every slot of a sealed segment's index as an entry)", path, unused)
	case unused == 0:
		if err := sanityCheck(); err != nil {
			d.problemf("%s: %v", path, err)
		}
	}
}

// indexEntries reads the used entries of an index file (the slots up to
// its last non-zero byte: a preallocated tail is not entries), checking
// that a sealed index is trimmed. ok is false after a problem was
// reported.
func indexEntries[E any](d *dumper, path string, entryBytes int, last bool, entries int, sanity func() error, entry func(int) (E, error)) ([]E, bool) {
	used, err := usedSlots(path, entryBytes, last)
	if err != nil {
		d.fileProblem(path, err)
		return nil, false
	}
	d.checkTrimmed(sanity, path, entries-used, last)
	out := make([]E, used)
	for i := range out {
		if out[i], err = entry(i); err != nil {
			d.fileProblem(path, err)
			return nil, false
		}
	}
	if len(out) == 0 {
		d.printf("%s is empty.\n", path)
	}
	return out, true
}

// timeIndex dumps a segment's .timeindex and checks every entry against the
// batches of its .log. A missing .timeindex is not a problem: Kafka creates
// it empty.
func (d *dumper) timeIndex(scan *logScan, pf partitionFiles, last bool) {
	name := segment.FileName(scan.base, segment.TimeIndexSuffix)
	path := filepath.Join(filepath.Dir(scan.path), name)
	if !pf.has[name] {
		return
	}
	d.printf("Dumping %s\n", path)
	ix, err := index.OpenTimeIndex(vfs.Default, path, scan.base, index.DefaultMaxIndexBytes, index.ReadOnly)
	if err != nil {
		d.fileProblem(path, err)
		return
	}
	defer ix.Close()
	entries, ok := indexEntries(d, path, index.TimeIndexEntryBytes, last, ix.Entries(), ix.SanityCheck, ix.Entry)
	if !ok {
		return
	}
	for i, e := range entries {
		d.printf("timestamp: %d offset: %d\n", e.Timestamp, e.Offset)
		if !d.opts.verify {
			continue
		}
		if i > 0 && (e.Timestamp <= entries[i-1].Timestamp || e.Offset < entries[i-1].Offset) {
			d.problemf("%s: entry %d (timestamp %d, offset %d) does not increase from entry %d (timestamp %d, offset %d)",
				path, i, e.Timestamp, e.Offset, i-1, entries[i-1].Timestamp, entries[i-1].Offset)
		}
		bi, ok := scan.byLast[e.Offset]
		switch {
		case e.Offset > scan.lastOffset():
			d.problemf("%s: entry %d names offset %d, past the .log's last offset %d", path, i, e.Offset, scan.lastOffset())
		case !ok:
			d.problemf("%s: entry %d names offset %d, which is not the last offset of a batch", path, i, e.Offset)
		case scan.batches[bi].h.MaxTimestamp != e.Timestamp:
			d.problemf("%s: entry %d has timestamp %d, but the batch ending at offset %d has max timestamp %d", path, i, e.Timestamp, e.Offset, scan.batches[bi].h.MaxTimestamp)
		}
	}
}

// txnIndex dumps a segment's .txnindex and checks it against the ABORT
// markers of its .log: every entry names a marker of its producer, and every
// marker ending a transaction with data here has its entry, with the right
// first offset and last stable offset.
func (d *dumper) txnIndex(st *partitionState, scan *logScan, pf partitionFiles) {
	name := segment.FileName(scan.base, segment.TxnIndexSuffix)
	path := filepath.Join(filepath.Dir(scan.path), name)
	var entries []index.AbortedTxn
	if pf.has[name] {
		d.printf("Dumping %s\n", path)
		ix, err := index.OpenTxnIndex(vfs.Default, path, scan.base, index.ReadOnly)
		if err != nil {
			d.fileProblem(path, err)
			return
		}
		defer ix.Close()
		if n := ix.TornBytes(); n > 0 {
			d.problemf("%s: %d bytes at the end are not a whole entry", path, n)
		}
		if err := ix.SanityCheck(); err != nil {
			d.problemf("%s: %v", path, err)
		}
		if entries, err = ix.AllAbortedTxns(); err != nil {
			d.fileProblem(path, err)
			return
		}
		for _, e := range entries {
			d.printf("version: %d producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n",
				index.AbortedTxnVersion, e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset)
		}
	}
	if !d.opts.verify {
		return
	}
	found := make(map[int64]bool)
	for i, e := range entries {
		found[e.LastOffset] = true
		want, ok := st.aborts[e.LastOffset]
		switch {
		case !ok || want.txn.ProducerID != e.ProducerID:
			d.problemf("%s: entry %d (%v): there is no ABORT marker of producer %d at offset %d", path, i, e, e.ProducerID, e.LastOffset)
		case want.withData && want.txn.FirstOffset != e.FirstOffset:
			d.problemf("%s: entry %d (%v): the aborted transaction starts at offset %d", path, i, e, want.txn.FirstOffset)
		case want.lsoKnown && want.txn.LastStableOffset != e.LastStableOffset:
			d.problemf("%s: entry %d (%v): the last stable offset after the abort is %d", path, i, e, want.txn.LastStableOffset)
		}
		if i > 0 && e.LastOffset <= entries[i-1].LastOffset {
			d.problemf("%s: entry %d: lastOffset %d does not increase from %d", path, i, e.LastOffset, entries[i-1].LastOffset)
		}
	}
	var missing []int64
	for off, want := range st.aborts {
		if off >= scan.base && off <= scan.lastOffset() && want.withData && !found[off] {
			missing = append(missing, off)
		}
	}
	slices.Sort(missing)
	for _, off := range missing {
		t := st.aborts[off].txn
		d.problemf("%s: the ABORT marker at offset %d (producer %d, transaction from offset %d) has no entry", path, off, t.ProducerID, t.FirstOffset)
	}
}

// checkLeaderEpochs checks the leader-epoch-checkpoint against the leader
// epochs stamped in the batches: each run of batches of one epoch must
// belong to that epoch's entry. Batches below the first entry are not
// checked (the log start offset may have moved past them).
func (d *dumper) checkLeaderEpochs(path string, entries, batches []logdir.EpochEntry) {
	if len(entries) == 0 {
		return
	}
	for _, b := range batches {
		i, found := slices.BinarySearchFunc(entries, b.StartOffset, func(e logdir.EpochEntry, off int64) int {
			switch {
			case e.StartOffset < off:
				return -1
			case e.StartOffset > off:
				return 1
			}
			return 0
		})
		if !found {
			i--
		}
		if i < 0 {
			continue
		}
		if e := entries[i]; e.Epoch != b.Epoch {
			d.problemf("%s: the batch at offset %d has leader epoch %d, but the checkpoint gives epoch %d from offset %d", path, b.StartOffset, b.Epoch, e.Epoch, e.StartOffset)
		}
	}
}
