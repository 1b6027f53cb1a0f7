package segment

import (
	"errors"

	"github.com/kafkalite/kafkalite/internal/fileio"
)

// Memory-mapped reads: the .log is mapped read-only on first use by
// [Slice.View], so that a point read looks at a batch in place instead of
// copying it out of the page cache. See "Memory-mapped reads" in the package
// doc for why no access can touch unmapped memory or a page past the end of
// the file.

// view calls fn with the .log's bytes [pos, pos+n) in place and returns
// true and fn's error; it returns false without calling fn when those bytes
// are not mapped (mapping unsupported or failed, or beyond the mapping) or
// not all below the segment's size. fn runs with s.mapMu held shared, so
// that nothing shrinks the file or unmaps it meanwhile.
//
// REQUIRES: the caller holds a reference on the segment (a live Slice), so
// that the .log is open; fn does not call view again (a waiting writer
// would deadlock it) and does not keep or write b.
func (s *Segment) view(pos, n int64, fn func(b []byte) error) (bool, error) {
	s.mapMu.RLock()
	if s.mapData == nil && !s.mapDone {
		s.mapMu.RUnlock()
		s.mapMu.Lock()
		if s.mapData == nil && !s.mapDone {
			s.mapLocked()
		}
		s.mapMu.Unlock()
		s.mapMu.RLock()
	}
	defer s.mapMu.RUnlock()
	end := pos + n
	// s.size only shrinks under s.mapMu held exclusively, and the file is
	// never shorter than s.size, so bytes below it stay in the file until
	// RUnlock.
	if pos < 0 || n < 0 || end > s.size.Load() || end > int64(len(s.mapData)) {
		return false, nil
	}
	return true, fn(s.mapData[pos:end:end])
}

// mapLocked maps the .log: an active segment up to segment.bytes (or its
// size if larger), so that what is appended later is mapped already; an
// inactive one at its size. A failure leaves reads to ReadAt for good.
//
// REQUIRES: s.mapMu held exclusively.
func (s *Segment) mapLocked() {
	size := s.size.Load()
	s.mu.Lock()
	active := s.active
	s.mu.Unlock()
	if active {
		size = max(size, min(s.cfg.SegmentBytes, maxLogBytes))
	}
	m, err := fileio.MapGrowing(s.log, size)
	if err != nil {
		s.mapDone = true
		return
	}
	if len(m.Bytes()) == 0 {
		_ = m.Close() // nothing mapped; an empty segment is mapped once it has bytes
		return
	}
	s.mapping, s.mapData = m, m.Bytes()
}

// unmapLocked drops the mapping; the next view maps the file again.
//
// REQUIRES: s.mapMu held exclusively.
func (s *Segment) unmapLocked() error {
	m := s.mapping
	s.mapping, s.mapData = nil, nil
	if m == nil {
		return nil
	}
	return m.Close()
}

// dropMapping unmaps the .log once in-flight views end, as the segment
// changes between active and inactive (the size of its mapping depends on
// it).
func (s *Segment) dropMapping() error {
	s.mapMu.Lock()
	defer s.mapMu.Unlock()
	return s.unmapLocked()
}

// shrinkLog cuts the .log to size bytes, lowering the segment's size first,
// once in-flight views end; new views wait until it is done. The mapping is
// dropped: the next view maps the file as it is then.
func (s *Segment) shrinkLog(size int64) error {
	s.mapMu.Lock()
	defer s.mapMu.Unlock()
	err := s.unmapLocked()
	if size < s.size.Load() {
		s.size.Store(size)
	}
	// Counted before the file changes, so that a reader that sees the
	// count unchanged after reading read bytes from before the cut.
	s.cutGen.Add(1)
	return errors.Join(err, s.log.Truncate(size))
}

// closeLog unmaps and closes the .log, for good.
//
// REQUIRES: no live Slice (refs is 0) and the segment closed.
func (s *Segment) closeLog() error {
	s.mapMu.Lock()
	err := s.unmapLocked()
	s.mapDone = true
	s.mapMu.Unlock()
	return errors.Join(err, s.log.Close())
}
