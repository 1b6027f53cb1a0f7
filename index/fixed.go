package index

import (
	"errors"
	"fmt"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// entryCodec describes the entries E of a fixed-size index to the code that
// [OffsetIndex] and [TimeIndex] share.
type entryCodec[E any] struct {
	// size is the size of one entry in the file.
	size int
	// parse decodes one entry's bytes.
	parse func(e []byte, baseOffset int64) E
	// none is what stands for the last entry of an empty index, and what
	// Lookup returns below the first entry.
	none func(baseOffset int64) E
	// offset is the key TruncateTo cuts at: an entry's absolute offset.
	offset keyFunc
}

// fixedIndex is the part of [OffsetIndex] and [TimeIndex] that differs
// only in the entry type: the file and the cached last entry.
type fixedIndex[E any] struct {
	indexFile
	// last is the last entry, codec.none(baseOffset) when there is none.
	// Protected by mu.
	last  E
	codec *entryCodec[E]
}

// createIndex creates the index's file (see [indexFile.create]).
func (ix *fixedIndex[E]) createIndex(fsys vfs.FS, name string, baseOffset int64, maxIndexBytes int) error {
	ix.last = ix.codec.none(baseOffset)
	return ix.indexFile.create(fsys, name, baseOffset, ix.codec.size, maxIndexBytes)
}

// openIndex opens the index's file (see [indexFile.open]) and reads its last
// entry.
func (ix *fixedIndex[E]) openIndex(fsys vfs.FS, name string, baseOffset int64, maxIndexBytes int, mode Mode) error {
	if err := ix.indexFile.open(fsys, name, baseOffset, ix.codec.size, maxIndexBytes, mode); err != nil {
		return err
	}
	if err := ix.loadLastLocked(); err != nil {
		return errors.Join(err, ix.indexFile.unmapLocked(), ix.indexFile.closeFile())
	}
	return nil
}

// loadLastLocked sets last from the file (Kafka's lastEntryFromIndexFile).
func (ix *fixedIndex[E]) loadLastLocked() error {
	x := &ix.indexFile
	if x.entries == 0 {
		ix.last = ix.codec.none(x.baseOffset)
		return nil
	}
	buf := x.scratch()
	defer release(buf)
	e, err := x.entryLocked(x.entries-1, buf)
	if err != nil {
		return err
	}
	ix.last = ix.codec.parse(e, x.baseOffset)
	return nil
}

// lastEntry returns last, taking mu for reading.
func (ix *fixedIndex[E]) lastEntry() E {
	ix.indexFile.mu.RLock()
	defer ix.indexFile.mu.RUnlock()
	return ix.last
}

// lookup returns the entry with the largest key ≤ target, or
// codec.none(baseOffset) if there is none. It does not allocate.
func (ix *fixedIndex[E]) lookup(target int64, key keyFunc) (E, error) {
	e, ok, err := ix.find(target, key, false)
	if err == nil && !ok {
		e = ix.codec.none(ix.indexFile.baseOffset)
	}
	return e, err
}

// find returns the entry with the largest key ≤ target or, if upper, the
// one with the smallest key ≥ target. ok is false if there is none. It does
// not allocate.
func (ix *fixedIndex[E]) find(target int64, key keyFunc, upper bool) (e E, ok bool, err error) {
	x := &ix.indexFile
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.checkOpenLocked(); err != nil {
		return e, false, err
	}
	buf := x.scratch()
	defer release(buf)
	var slot int
	if upper {
		slot, err = x.smallestUpperBoundLocked(target, key, buf)
	} else {
		slot, err = x.largestLowerBoundLocked(target, key, buf)
	}
	if err != nil || slot < 0 {
		return e, false, err
	}
	b, err := x.entryLocked(slot, buf)
	if err != nil {
		return e, false, err
	}
	return ix.codec.parse(b, x.baseOffset), true, nil
}

// entry returns entry n, 0 ≤ n < entries ([ErrEntryOutOfRange]).
func (ix *fixedIndex[E]) entry(n int) (e E, err error) {
	x := &ix.indexFile
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.checkOpenLocked(); err != nil {
		return e, err
	}
	if n < 0 || n >= x.entries {
		return e, fmt.Errorf("%w: entry %d of %s, which has %d", ErrEntryOutOfRange, n, x.name, x.entries)
	}
	buf := x.scratch()
	defer release(buf)
	b, err := x.entryLocked(n, buf)
	if err != nil {
		return e, err
	}
	return ix.codec.parse(b, x.baseOffset), nil
}

// appendEntries appends every entry in use to dst, in file order.
func (ix *fixedIndex[E]) appendEntries(dst []E) ([]E, error) {
	x := &ix.indexFile
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.checkOpenLocked(); err != nil {
		return dst, err
	}
	buf := x.scratch()
	defer release(buf)
	for n := range x.entries {
		e, err := x.entryLocked(n, buf)
		if err != nil {
			return dst, err
		}
		dst = append(dst, ix.codec.parse(e, x.baseOffset))
	}
	return dst, nil
}

// truncateTo removes the entries whose offset is ≥ offset and zeroes their
// slots.
func (ix *fixedIndex[E]) truncateTo(offset int64) error {
	x := &ix.indexFile
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkWritableLocked(); err != nil {
		return err
	}
	buf := x.scratch()
	defer release(buf)
	n, err := x.firstAtLeastLocked(offset, ix.codec.offset, buf)
	if err != nil {
		return err
	}
	return ix.truncateLocked(n)
}

// truncateToEntries keeps the first max(n, 0) entries and zeroes the rest.
func (ix *fixedIndex[E]) truncateToEntries(n int) error {
	x := &ix.indexFile
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkWritableLocked(); err != nil {
		return err
	}
	return ix.truncateLocked(max(n, 0))
}

// truncateLocked is indexFile.truncateToEntriesLocked, then loadLastLocked.
func (ix *fixedIndex[E]) truncateLocked(n int) error {
	if err := ix.indexFile.truncateToEntriesLocked(n); err != nil {
		return err
	}
	return ix.loadLastLocked()
}

// reset removes every entry and resizes the file back to maxIndexBytes.
func (ix *fixedIndex[E]) reset() error {
	x := &ix.indexFile
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkWritableLocked(); err != nil {
		return err
	}
	if err := ix.truncateLocked(0); err != nil {
		return err
	}
	_, err := x.resizeLocked(int64(x.maxIndexBytes))
	return err
}
