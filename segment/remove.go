package segment

import (
	"errors"
	"fmt"
)

// References and removal. Read takes a reference on the segment (acquire)
// that its Slice gives back (release): the .log closes when the last one
// is released after Close, and the files of a removed segment go then.

func (s *Segment) acquire() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.refs++
	return nil
}

func (s *Segment) release() {
	_ = s.releaseRef() // the segment's Close already returned; nothing is written here
}

// releaseRef drops a reference. The last one, once the segment is closed,
// closes the .log (returning that error) and, after Remove, removes the
// files.
func (s *Segment) releaseRef() error {
	s.mu.Lock()
	s.refs--
	last := s.refs == 0
	closeLog := last && s.closed
	remove := last && s.removeReady
	s.mu.Unlock()
	var err error
	if closeLog {
		err = s.log.close()
	}
	if remove {
		_ = s.removeFiles() // leftovers are .deleted files, removed when the log opens next
	}
	return err
}

// RenameForDeletion renames the segment's files with the .deleted suffix, as
// retention and the cleaner do before removing a segment. Readers keep
// reading through their open files. The caller syncs the directory.
func (s *Segment) RenameForDeletion() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deleted {
		return nil
	}
	var errs []error
	for _, suffix := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix, TxnIndexSuffix} {
		from := s.path(suffix)
		if _, err := s.fsys.Stat(from); err != nil {
			continue // a .txnindex is optional; a missing .index was being rebuilt
		}
		if err := s.fsys.Rename(from, from+DeletedSuffix); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("segment: rename %s for deletion: %w", s.path(LogSuffix), err)
	}
	s.deleted = true
	return nil
}

// Remove closes the segment and removes its files (renamed or not): now if
// no Slice references it, else when the last one is released.
func (s *Segment) Remove() error {
	err := s.Close()
	s.mu.Lock()
	s.removeReady = true
	now := s.refs == 0
	s.mu.Unlock()
	if now {
		err = errors.Join(err, s.removeFiles())
	}
	return err
}

func (s *Segment) removeFiles() error {
	s.mu.Lock()
	suffix := ""
	if s.deleted {
		suffix = DeletedSuffix
	}
	s.mu.Unlock()
	var errs []error
	for _, f := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix, TxnIndexSuffix} {
		if err := s.fsys.Remove(s.path(f) + suffix); err != nil && !isNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
