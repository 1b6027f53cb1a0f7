package compaction

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// ErrSwap wraps a failure in the middle of a swap: the directory holds a
// state that the next Open completes or rolls back.
var ErrSwap = errors.New("compaction: segment swap failed")

// CommitSwap replaces the segments old by the cleaned segment at base, whose
// .cleaned files are written and fsynced, in Kafka's crash-safe order
// (LocalLog.replaceSegments):
//
//  1. rename the .cleaned files to .swap (indexes first, the .log last,
//     so a .log.swap means the whole segment is there), sync the directory;
//  2. rename the old segments' files to .deleted (readers keep their open
//     files; the log removes them later);
//  3. rename the .swap files to their final names (the .log first), sync
//     the directory.
//
// A crash before step 1 ends leaves the old segments (the .cleaned and
// partial .swap files are removed on open); after it, [RecoverDir] finishes
// the swap. The caller holds the log's write lock and updates its segment
// list; the old segments' index files must be open already (their names are
// reused by the new segment).
func CommitSwap(fsys vfs.FS, dir string, base int64, old []*segment.Segment) error {
	final := func(suffix string) string { return filepath.Join(dir, segment.FileName(base, suffix)) }
	for _, suffix := range []string{segment.IndexSuffix, segment.TimeIndexSuffix, segment.TxnIndexSuffix, segment.LogSuffix} {
		from := final(suffix) + segment.CleanedSuffix
		if _, err := fsys.Stat(from); err != nil {
			if suffix == segment.TxnIndexSuffix {
				continue
			}
			return fmt.Errorf("%w: %w", ErrSwap, err)
		}
		if err := fsys.Rename(from, final(suffix)+segment.SwapSuffix); err != nil {
			return fmt.Errorf("%w: %w", ErrSwap, err)
		}
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("%w: %w", ErrSwap, err)
	}
	for _, s := range old {
		if err := s.RenameForDeletion(); err != nil {
			return fmt.Errorf("%w: %w", ErrSwap, err)
		}
	}
	for _, suffix := range segmentSuffixes {
		from := final(suffix) + segment.SwapSuffix
		if _, err := fsys.Stat(from); err != nil {
			continue
		}
		if err := fsys.Rename(from, final(suffix)); err != nil {
			return fmt.Errorf("%w: %w", ErrSwap, err)
		}
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("%w: %w", ErrSwap, err)
	}
	return nil
}

// RecoverDir completes or rolls back a swap a crash interrupted in the
// partition directory dir, as Kafka's LogLoader does, before the log loads
// its segments:
//
//   - .cleaned files are removed; a .swap file whose base offset is at or
//     above the lowest .cleaned one belongs to an incomplete swap and is
//     removed too (the old segments are still whole);
//   - for each remaining <base>.log.swap, the segment files (not
//     snapshots: offsets do not change, so producer snapshots stay valid)
//     whose base offset lies in [base, the swap's next offset) are removed —
//     the segments the cleaned one replaces — and every .swap file loses
//     its suffix.
//
// It reports whether it changed anything; the directory is then synced.
func RecoverDir(fsys vfs.FS, dir string) (bool, error) {
	entries, err := fsys.List(dir)
	if err != nil {
		return false, err
	}
	minCleaned := int64(-1)
	var swaps []string
	for _, e := range entries {
		if e.IsDir {
			continue
		}
		base, _, perr := segment.ParseFileName(e.Name)
		switch {
		case perr != nil:
		case strings.HasSuffix(e.Name, segment.CleanedSuffix):
			if minCleaned < 0 || base < minCleaned {
				minCleaned = base
			}
		case strings.HasSuffix(e.Name, segment.SwapSuffix):
			swaps = append(swaps, e.Name)
		}
	}
	if minCleaned < 0 && len(swaps) == 0 {
		return false, nil
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir && strings.HasSuffix(e.Name, segment.CleanedSuffix) {
			errs = append(errs, removeIfExists(fsys, filepath.Join(dir, e.Name)))
		}
	}
	type span struct{ from, to int64 }
	var spans []span
	var keep []string
	for _, name := range swaps {
		base, suffix, _ := segment.ParseFileName(name)
		if minCleaned >= 0 && base >= minCleaned {
			errs = append(errs, removeIfExists(fsys, filepath.Join(dir, name)))
			continue
		}
		keep = append(keep, name)
		if suffix == segment.LogSuffix+segment.SwapSuffix {
			next, err := nextOffsetOfLog(fsys, filepath.Join(dir, name), base)
			if err != nil {
				return false, err
			}
			spans = append(spans, span{base, max(next, base+1)})
		}
	}
	for _, e := range entries {
		base, suffix, perr := segment.ParseFileName(e.Name)
		if e.IsDir || perr != nil {
			continue
		}
		switch suffix {
		case segment.LogSuffix, segment.IndexSuffix, segment.TimeIndexSuffix, segment.TxnIndexSuffix:
		default:
			continue
		}
		for _, sp := range spans {
			if base >= sp.from && base < sp.to {
				errs = append(errs, removeIfExists(fsys, filepath.Join(dir, e.Name)))
				break
			}
		}
	}
	for _, name := range keep {
		from := filepath.Join(dir, name)
		errs = append(errs, fsys.Rename(from, strings.TrimSuffix(from, segment.SwapSuffix)))
	}
	if err := errors.Join(errs...); err != nil {
		return true, fmt.Errorf("%w: recovering %s: %w", ErrSwap, dir, err)
	}
	return true, fsys.SyncDir(dir)
}

func removeIfExists(fsys vfs.FS, path string) error {
	if err := fsys.Remove(path); err != nil && !errors.Is(err, errNotExist) {
		return err
	}
	return nil
}

// nextOffsetOfLog walks the batch headers of a .log file and returns the
// offset after its last whole batch (base if it has none).
func nextOffsetOfLog(fsys vfs.FS, path string, base int64) (int64, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0, err
	}
	next := base
	var hdr [record.BatchHeaderLen]byte
	for pos := int64(0); pos+record.BatchHeaderLen <= size; {
		n, err := f.ReadAt(hdr[:], pos)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if n < len(hdr) {
			break // the file ended early: no stale header bytes are parsed
		}
		h, err := record.ParseHeader(hdr[:])
		if err != nil || pos+int64(h.Size()) > size {
			break
		}
		next = h.NextOffset()
		pos += int64(h.Size())
	}
	return next, nil
}
