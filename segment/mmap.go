package segment

import (
	"github.com/kafkalite/kafkalite/internal/fileio"
)

// Memory-mapped reads
//
// On the operating system's filesystem the .log is also mapped read-only
// the first time a reader looks at bytes in place: [Slice.View], which the
// log's point reads use, and [Segment.Read] for the batch headers it walks.
// An active segment is mapped up to segment.bytes, so that what is
// appended later shows in the same mapping; an inactive one at its size.
// Elsewhere (the memory filesystem, the fault injector, systems without
// mmap or a unified buffer cache), or where mapping fails, readers copy
// with ReadAt; so do ReadAt, Bytes and WriteTo everywhere.
//
// No access through the mapping can reach unmapped memory or a page past
// the end of the file (either would kill the process, the latter with
// SIGBUS), by construction:
//
//   - Mapped bytes are touched only inside logFile.view, holding mapMu
//     shared, and only bytes below the size as it is under that lock. They
//     never leave it: View's callback must copy what it keeps (the log
//     clones the record it returns).
//   - The size shrinks only with mapMu held exclusively (logFile.cut for
//     TruncateTo, Recover and cutting a failed append off; logFile.lower
//     for damage), lowered before the file is truncated; at all other
//     times the file is at least that long, since an append writes its
//     batch before it raises the size. So while a reader holds mapMu,
//     every byte below the size it saw is in the file.
//   - The mapping is unmapped only with mapMu held exclusively: when the
//     segment turns inactive or active again (Seal, TruncateTo, Recover;
//     the next reader maps it at the size that suits it) and when the .log
//     closes, which happens only once no Slice is live (Close without
//     readers, or the last Release after Close). Read takes its reference
//     before it looks at the mapping.
//   - Deletion renames and then unlinks the files; a mapping of an
//     unlinked file stays valid until it is unmapped.
//
// So truncating, sealing and closing wait only for the views in flight (a
// view parses a few headers or decodes one record), never for a Slice to
// be released; a Slice whose batches were truncated away is no longer
// viewed (View returns false) and ReadAt reports ErrCutUnderRead. Another
// process truncating the files is not guarded against; the log's
// directory lock keeps other kafkalite processes out.

// view calls fn with the file's bytes [pos, pos+n) in place and returns
// true and fn's error; it returns false without calling fn when those
// bytes are not mapped (mapping unsupported or failed, or beyond the
// mapping) or not all below the size. fn runs with mapMu held shared, so
// that nothing shrinks the file or unmaps it meanwhile.
//
// REQUIRES: the caller holds a reference on the segment (a live Slice),
// so that the file is open; fn does not call view again (a waiting writer
// would deadlock it) and does not keep or write b.
func (lf *logFile) view(pos, n int64, fn func(b []byte) error) (bool, error) {
	lf.mapMu.RLock()
	if lf.mapData == nil && !lf.mapDone {
		lf.mapMu.RUnlock()
		lf.mapMu.Lock()
		if lf.mapData == nil && !lf.mapDone {
			lf.mapLocked()
		}
		lf.mapMu.Unlock()
		lf.mapMu.RLock()
	}
	defer lf.mapMu.RUnlock()
	end := pos + n
	// The size only shrinks under mapMu held exclusively, and the file is
	// never shorter than the size, so bytes below it stay in the file
	// until RUnlock.
	if pos < 0 || n < 0 || end > lf.size.Load() || end > int64(len(lf.mapData)) {
		return false, nil
	}
	return true, fn(lf.mapData[pos:end:end])
}

// mapLocked maps the file at the size mapAt gives. A failure leaves reads
// to ReadAt for good.
//
// REQUIRES: mapMu held exclusively.
func (lf *logFile) mapLocked() {
	m, err := fileio.MapGrowing(lf.f, lf.mapAt())
	if err != nil {
		lf.mapDone = true
		return
	}
	if len(m.Bytes()) == 0 {
		_ = m.Close() // nothing mapped; an empty segment is mapped once it has bytes
		return
	}
	lf.mapping, lf.mapData = m, m.Bytes()
}

// unmapLocked drops the mapping; the next view maps the file again.
//
// REQUIRES: mapMu held exclusively.
func (lf *logFile) unmapLocked() error {
	m := lf.mapping
	lf.mapping, lf.mapData = nil, nil
	if m == nil {
		return nil
	}
	return m.Close()
}

// unmap unmaps the file once views in flight end, as the segment changes
// between active and inactive (the size of its mapping depends on it).
func (lf *logFile) unmap() error {
	lf.mapMu.Lock()
	defer lf.mapMu.Unlock()
	return lf.unmapLocked()
}
