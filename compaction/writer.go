package compaction

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// segmentSuffixes are a segment's files; the .txnindex exists only once an
// aborted transaction is indexed.
var segmentSuffixes = []string{segment.LogSuffix, segment.IndexSuffix, segment.TimeIndexSuffix, segment.TxnIndexSuffix}

// cleanedWriter writes one cleaned segment: <base>.log.cleaned and its
// .index.cleaned, .timeindex.cleaned and (lazily) .txnindex.cleaned, with
// index entries spaced as Kafka's LogSegment.append spaces them (one offset
// and one time entry once more than index.interval.bytes were written since
// the last).
type cleanedWriter struct {
	fsys vfs.FS
	dir  string
	base int64

	log vfs.File
	oi  *index.OffsetIndex
	ti  *index.TimeIndex
	txn *index.TxnIndex

	indexInterval int
	sinceIndex    int
	pos           int64 // file position of buf[0]
	buf           []byte
	bufLimit      int
	maxTS, offMax int64
	written       int64
}

func cleanedPath(dir string, base int64, suffix string) string {
	return filepath.Join(dir, segment.FileName(base, suffix)+segment.CleanedSuffix)
}

// createCleaned creates the .cleaned files of a new segment at base,
// replacing leftovers of an earlier attempt.
func createCleaned(fsys vfs.FS, dir string, base int64, indexInterval, maxIndexBytes, bufBytes int) (*cleanedWriter, error) {
	removeCleaned(fsys, dir, base)
	w := &cleanedWriter{fsys: fsys, dir: dir, base: base, indexInterval: indexInterval, bufLimit: bufBytes,
		maxTS: record.NoTimestamp, offMax: base}
	var err error
	if w.log, err = fsys.Create(cleanedPath(dir, base, segment.LogSuffix)); err != nil {
		return nil, err
	}
	if w.oi, err = index.CreateOffsetIndex(fsys, cleanedPath(dir, base, segment.IndexSuffix), base, maxIndexBytes); err != nil {
		return nil, errors.Join(err, w.abort())
	}
	if w.ti, err = index.CreateTimeIndex(fsys, cleanedPath(dir, base, segment.TimeIndexSuffix), base, maxIndexBytes); err != nil {
		return nil, errors.Join(err, w.abort())
	}
	return w, nil
}

// append adds one batch (h describes it).
func (w *cleanedWriter) append(batch []byte, h *record.BatchHeader) error {
	pos := w.pos + int64(len(w.buf))
	if pos+int64(len(batch)) > 1<<31-1 {
		return fmt.Errorf("%w: cleaned segment %d would exceed 2 GiB", segment.ErrSegmentFull, w.base)
	}
	if !index.CanIndex(w.base, h.LastOffset()) {
		return fmt.Errorf("%w: offset %d in the cleaned segment at %d", segment.ErrOffsetOverflow, h.LastOffset(), w.base)
	}
	if h.MaxTimestamp > w.maxTS {
		w.maxTS, w.offMax = h.MaxTimestamp, h.LastOffset()
	}
	if w.sinceIndex > w.indexInterval {
		err := errors.Join(w.oi.Append(h.LastOffset(), index.Position(pos)), w.ti.MaybeAppend(w.maxTS, w.offMax, false))
		if err != nil && !errors.Is(err, index.ErrIndexFull) {
			return err
		}
		w.sinceIndex = 0
	}
	w.sinceIndex += len(batch)
	w.buf = append(w.buf, batch...)
	if len(w.buf) >= w.bufLimit {
		return w.flushBuf()
	}
	return nil
}

func (w *cleanedWriter) flushBuf() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.log.WriteAt(w.buf, w.pos); err != nil {
		return err
	}
	w.pos += int64(len(w.buf))
	w.written += int64(len(w.buf))
	w.buf = w.buf[:0]
	return nil
}

// appendAbortedTxn indexes an aborted transaction kept in the segment.
func (w *cleanedWriter) appendAbortedTxn(t index.AbortedTxn) error {
	if w.txn == nil {
		var err error
		if w.txn, err = index.CreateTxnIndex(w.fsys, cleanedPath(w.dir, w.base, segment.TxnIndexSuffix), w.base); err != nil {
			return err
		}
	}
	return w.txn.Append(t)
}

// finish seals the segment as a roll does (final time index entry, indexes
// trimmed), fsyncs every file and closes them.
func (w *cleanedWriter) finish() error {
	err := w.flushBuf()
	if err == nil && w.maxTS >= 0 {
		err = w.ti.MaybeAppend(w.maxTS, w.offMax, true)
	}
	if err == nil {
		err = errors.Join(w.oi.TrimToValidSize(), w.ti.TrimToValidSize())
	}
	if err == nil {
		err = errors.Join(w.log.Sync(), w.oi.Flush(), w.ti.Flush())
	}
	if err == nil && w.txn != nil {
		err = w.txn.Flush()
	}
	return errors.Join(err, w.close())
}

func (w *cleanedWriter) close() error {
	var errs []error
	if w.log != nil {
		errs = append(errs, w.log.Close())
		w.log = nil
	}
	if w.oi != nil {
		errs = append(errs, w.oi.Close())
		w.oi = nil
	}
	if w.ti != nil {
		errs = append(errs, w.ti.Close())
		w.ti = nil
	}
	if w.txn != nil {
		errs = append(errs, w.txn.Close())
		w.txn = nil
	}
	return errors.Join(errs...)
}

// abort closes and removes the cleaned files.
func (w *cleanedWriter) abort() error {
	err := w.close()
	removeCleaned(w.fsys, w.dir, w.base)
	return err
}

// removeCleaned removes the .cleaned files of base, if any. A failure
// leaves files the next Open removes.
func removeCleaned(fsys vfs.FS, dir string, base int64) {
	for _, suffix := range segmentSuffixes {
		_ = fsys.Remove(cleanedPath(dir, base, suffix))
	}
}

var errNotExist = fs.ErrNotExist
