package segment

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/kafkalite/kafkalite/internal/fileio"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// logFile is a segment's .log as its appender and its readers share it:
// the file, the size of its whole batches, the count of its cuts, its
// read-only memory mapping (mmap.go), and the tables that spare point
// reads work: the batches whose CRC was verified (crc.go) and the record
// marks of large batches (marks.go), both valid for the bytes of one cut
// generation.
//
// Its rules, on which reads in place rely (see "Memory-mapped reads" in
// mmap.go): the size grows only by the segment's writer (an append,
// recovery), after the bytes are in the file; it shrinks only with mapMu
// held exclusively (cut, lower), before the file is truncated. So the file
// is never shorter than the size, and a reader holding mapMu shared reads
// only bytes below it. Mapped bytes are touched only inside view.
type logFile struct {
	f    vfs.File
	name string // the file's path, for errors and logs
	size atomic.Int64
	// cutGen counts the cuts (cut): a reader that sees it change knows
	// that what it read may be gone, and the tables key their entries
	// with it.
	cutGen atomic.Uint32
	// mapAt returns the size to map the file at: segment.bytes while the
	// segment is active, its size otherwise.
	mapAt func() int64

	// crcs remembers the batches whose CRC was verified; nil until the
	// first verification.
	crcs atomic.Pointer[crcCache]
	// marks remembers where records start in batches that point reads
	// went into; nil until the first.
	marks atomic.Pointer[marksTable]

	// mapMu is held shared while a reader touches mapped bytes, and
	// exclusively to map, unmap, or lower the size. It protects:
	mapMu   sync.RWMutex
	mapping *fileio.Mapping
	mapData []byte // mapping's bytes; nil when not mapped
	mapDone bool   // no more mapping: unsupported, failed, or the file closed
}

// cut truncates the file to size bytes, lowering the size first, once
// views in flight end; new views wait until it is done. The mapping is
// dropped (the next view maps the file as it is then), and so, by the new
// cut generation, is what the tables knew.
func (lf *logFile) cut(size int64) error {
	lf.mapMu.Lock()
	defer lf.mapMu.Unlock()
	err := lf.unmapLocked()
	if size < lf.size.Load() {
		lf.size.Store(size)
	}
	// Counted before the file changes, so that a reader that sees the
	// count unchanged after reading read bytes from before the cut.
	lf.cutGen.Add(1)
	return errors.Join(err, lf.f.Truncate(size))
}

// lower lowers the size to size, leaving the file as it is, if ok,
// called with mapMu held exclusively, says so; it reports ok's answer.
func (lf *logFile) lower(size int64, ok func() bool) bool {
	lf.mapMu.Lock()
	defer lf.mapMu.Unlock()
	if !ok() {
		return false
	}
	if size < lf.size.Load() {
		lf.size.Store(size)
	}
	return true
}

// close unmaps and closes the file, for good.
//
// REQUIRES: no live Slice and the segment closed.
func (lf *logFile) close() error {
	lf.mapMu.Lock()
	err := lf.unmapLocked()
	lf.mapDone = true
	lf.mapMu.Unlock()
	return errors.Join(err, lf.f.Close())
}

// walkError is the error a walk over the file's batches returns for err
// at pos: below the size a reader may see, every byte belongs to a whole
// batch, so bytes that do not parse as one are corruption
// ([ErrCorruptLog]), even where they read as a torn tail; a legacy batch
// keeps its ErrLegacyFormat and I/O errors stay what they are.
func (lf *logFile) walkError(pos int64, err error) error {
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	if isFormatError(err) {
		return corruptAt(lf.name, pos, err)
	}
	return &Error{File: lf.name, Position: pos, Err: err}
}
