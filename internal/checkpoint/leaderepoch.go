package checkpoint

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strconv"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// LeaderEpochFile is the name of a partition directory's leader epoch
// checkpoint (Kafka's LeaderEpochCheckpointFile; the package doc gives its
// format). Part of the on-disk format.
const LeaderEpochFile = "leader-epoch-checkpoint"

// leaderEpochVersion is the file's version line (Kafka's
// LeaderEpochCheckpointFile.CURRENT_VERSION).
const leaderEpochVersion = 0

// Kafka's sentinels for "no epoch" and "no offset" in
// [LeaderEpochCache.EndOffsetFor] (OffsetsForLeaderEpochResponse
// UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET).
const (
	UndefinedEpoch       int32 = -1
	UndefinedEpochOffset int64 = -1
)

// EpochEntry says that leader epoch Epoch starts at offset StartOffset: the
// first offset of the first batch whose partitionLeaderEpoch is Epoch.
// Kafka's EpochEntry.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// String returns "EpochEntry(epoch=<e>, startOffset=<o>)", as Kafka prints
// it.
func (e EpochEntry) String() string {
	return fmt.Sprintf("EpochEntry(epoch=%d, startOffset=%d)", e.Epoch, e.StartOffset)
}

// ReadLeaderEpochs reads a leader-epoch-checkpoint file: version line 0,
// count line, entry lines "<epoch> <startOffset>", with the generic rules
// of [ReadOffsets]. The entries are returned in file order, which Kafka
// writes by ascending epoch; [NewLeaderEpochCache] applies Kafka's rules to
// them. Epochs and offsets must be ≥ 0 (Kafka's cache refuses negative ones
// when it loads the file). A missing file returns no entries and a nil
// error, as does an empty one.
func ReadLeaderEpochs(fsys vfs.FS, path string) ([]EpochEntry, error) {
	data, err := readFile(fsys, path, maxCheckpointBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseLeaderEpochs(path, data)
}

func parseLeaderEpochs(file string, data []byte) ([]EpochEntry, error) {
	var entries []EpochEntry
	p := checkpointParser{
		file:    file,
		version: leaderEpochVersion,
		fields:  2,
		entry: func(line int, f [][]byte) error {
			epoch, ok := parseInt(f[0], 32)
			if !ok || epoch < 0 {
				return corruptf(file, line, "malformed leader epoch %q", clip(f[0]))
			}
			start, ok := parseInt(f[1], 64)
			if !ok || start < 0 {
				return corruptf(file, line, "malformed start offset %q", clip(f[1]))
			}
			entries = append(entries, EpochEntry{int32(epoch), start})
			return nil
		},
	}
	if err := p.parse(data); err != nil {
		return nil, err
	}
	return entries, nil
}

// WriteLeaderEpochs replaces a leader-epoch-checkpoint file with entries, in
// the order given, with [WriteFileAtomic] (durable and atomic when it
// returns nil). A negative epoch or offset is an error matching
// [ErrInvalid], and nothing is written. Kafka rewrites the file at once
// whenever a new epoch is assigned (LeaderEpochFileCache.assign).
func WriteLeaderEpochs(fsys vfs.FS, path string, entries []EpochEntry) error {
	data, err := appendLeaderEpochs(nil, entries)
	if err != nil {
		return err
	}
	return WriteFileAtomic(fsys, path, data)
}

func appendLeaderEpochs(dst []byte, entries []EpochEntry) ([]byte, error) {
	for _, e := range entries {
		if e.Epoch < 0 || e.StartOffset < 0 {
			return nil, invalidf("negative leader epoch entry %v", e)
		}
	}
	dst = appendHeader(dst, leaderEpochVersion, len(entries))
	for _, e := range entries {
		dst = strconv.AppendInt(dst, int64(e.Epoch), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, e.StartOffset, 10)
		dst = append(dst, '\n')
	}
	return dst, nil
}

// LeaderEpochCache is a partition's leader epoch cache in memory: the
// entries of its leader-epoch-checkpoint file, kept by Kafka's rules
// (LeaderEpochFileCache). Its entries always have strictly increasing epochs
// and strictly increasing start offsets.
//
// The cache does no I/O by itself: every change marks it dirty, and the
// caller decides when to call [LeaderEpochCache.Write]. Kafka writes the
// file at once after [LeaderEpochCache.Assign] (a new epoch must be durable
// before the batch that carries it is acknowledged) and in the background
// after truncations (recovery redoes a truncation that was lost).
//
// A LeaderEpochCache is not safe for concurrent use.
type LeaderEpochCache struct {
	entries []EpochEntry
	dirty   bool
}

// NewLeaderEpochCache returns a cache holding entries, added one by one
// with [LeaderEpochCache.Assign] as Kafka loads the checkpoint file: entries
// out of order are dropped by its rules. The cache is dirty if that changed
// anything. A negative epoch or offset is an error matching [ErrInvalid].
func NewLeaderEpochCache(entries []EpochEntry) (*LeaderEpochCache, error) {
	c := &LeaderEpochCache{}
	for _, e := range entries {
		if _, err := c.Assign(e.Epoch, e.StartOffset); err != nil {
			return nil, err
		}
	}
	c.dirty = !slices.Equal(c.entries, entries)
	return c, nil
}

// OpenLeaderEpochCache reads path with [ReadLeaderEpochs] and returns a
// cache of its entries (an empty one if the file is missing).
func OpenLeaderEpochCache(fsys vfs.FS, path string) (*LeaderEpochCache, error) {
	entries, err := ReadLeaderEpochs(fsys, path)
	if err != nil {
		return nil, err
	}
	return NewLeaderEpochCache(entries)
}

// Assign records that epoch starts at startOffset, as Kafka's
// LeaderEpochFileCache.assign does, and reports whether the cache changed:
//
//   - nothing changes if the latest entry has the same epoch and a start
//     offset ≤ startOffset (the epoch is already known);
//   - otherwise every trailing entry whose epoch is ≥ epoch or whose start
//     offset is ≥ startOffset is removed, and (epoch, startOffset) is
//     appended.
//
// Both must be ≥ 0, or the error matches [ErrInvalid] and nothing changes.
// Appending a batch calls Assign(batch.PartitionLeaderEpoch,
// batch.BaseOffset) for every batch with a leader epoch ≥ 0.
func (c *LeaderEpochCache) Assign(epoch int32, startOffset int64) (bool, error) {
	if epoch < 0 || startOffset < 0 {
		return false, invalidf("leader epoch %d at offset %d: negative", epoch, startOffset)
	}
	if n := len(c.entries); n > 0 {
		last := c.entries[n-1]
		if epoch == last.Epoch && startOffset >= last.StartOffset {
			return false, nil
		}
	}
	n := len(c.entries)
	for n > 0 && (c.entries[n-1].Epoch >= epoch || c.entries[n-1].StartOffset >= startOffset) {
		n--
	}
	c.entries = append(c.entries[:n], EpochEntry{epoch, startOffset})
	c.dirty = true
	return true, nil
}

// LatestEntry returns the entry with the highest epoch, and false if the
// cache is empty.
func (c *LeaderEpochCache) LatestEntry() (EpochEntry, bool) {
	if len(c.entries) == 0 {
		return EpochEntry{}, false
	}
	return c.entries[len(c.entries)-1], true
}

// LatestEpoch returns the highest epoch, and false if the cache is empty.
func (c *LeaderEpochCache) LatestEpoch() (int32, bool) {
	e, ok := c.LatestEntry()
	return e.Epoch, ok
}

// EarliestEntry returns the entry with the lowest epoch, and false if the
// cache is empty.
func (c *LeaderEpochCache) EarliestEntry() (EpochEntry, bool) {
	if len(c.entries) == 0 {
		return EpochEntry{}, false
	}
	return c.entries[0], true
}

// EpochForOffset returns the epoch of the batch at offset: that of the last
// entry whose start offset is ≤ offset, and false if there is none (Kafka's
// epochForOffset).
func (c *LeaderEpochCache) EpochForOffset(offset int64) (int32, bool) {
	i, found := slices.BinarySearchFunc(c.entries, offset, func(e EpochEntry, o int64) int {
		return cmp.Compare(e.StartOffset, o)
	})
	if found {
		return c.entries[i].Epoch, true
	}
	if i == 0 {
		return 0, false
	}
	return c.entries[i-1].Epoch, true
}

// EndOffsetFor answers an OffsetsForLeaderEpoch request as Kafka's
// endOffsetFor does: for the latest epoch, (epoch, logEndOffset); otherwise
// the largest known epoch ≤ requestedEpoch and the start offset of the
// first epoch above it; for an epoch below every known one, (requestedEpoch,
// start offset of the first epoch); ([UndefinedEpoch],
// [UndefinedEpochOffset]) for an undefined or too large epoch.
func (c *LeaderEpochCache) EndOffsetFor(requestedEpoch int32, logEndOffset int64) (int32, int64) {
	if requestedEpoch == UndefinedEpoch {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	if latest, ok := c.LatestEpoch(); ok && latest == requestedEpoch {
		return requestedEpoch, logEndOffset
	}
	if requestedEpoch == math.MaxInt32 {
		return UndefinedEpoch, UndefinedEpochOffset // no epoch is above it
	}
	// higher: the first entry with an epoch above requestedEpoch.
	higher, _ := slices.BinarySearchFunc(c.entries, requestedEpoch+1, func(e EpochEntry, epoch int32) int {
		return cmp.Compare(e.Epoch, epoch)
	})
	switch higher {
	case len(c.entries):
		return UndefinedEpoch, UndefinedEpochOffset
	case 0:
		return requestedEpoch, c.entries[0].StartOffset
	}
	return c.entries[higher-1].Epoch, c.entries[higher].StartOffset
}

// TruncateFromEnd removes every entry whose start offset is ≥ endOffset, as
// Kafka does when the log is truncated to endOffset (its new log end
// offset), and reports whether the cache changed. A negative endOffset
// changes nothing.
func (c *LeaderEpochCache) TruncateFromEnd(endOffset int64) bool {
	if endOffset < 0 {
		return false
	}
	n := len(c.entries)
	for n > 0 && c.entries[n-1].StartOffset >= endOffset {
		n--
	}
	if n == len(c.entries) {
		return false
	}
	c.entries = c.entries[:n]
	c.dirty = true
	return true
}

// TruncateFromStart drops the entries before startOffset, the log's new
// start offset, as Kafka's truncateFromStart does: every entry whose start
// offset is ≤ startOffset is removed, and the last of them comes back with
// its start offset moved up to startOffset (the epoch of the batch at the
// new log start). It reports whether the cache changed.
func (c *LeaderEpochCache) TruncateFromStart(startOffset int64) bool {
	n := 0
	for n < len(c.entries) && c.entries[n].StartOffset <= startOffset {
		n++
	}
	if n == 0 {
		return false
	}
	kept := EpochEntry{c.entries[n-1].Epoch, startOffset}
	if n == 1 && c.entries[0] == kept {
		return false
	}
	c.entries[n-1] = kept
	c.entries = slices.Delete(c.entries, 0, n-1)
	c.dirty = true
	return true
}

// Clear removes every entry and reports whether the cache changed.
func (c *LeaderEpochCache) Clear() bool {
	if len(c.entries) == 0 {
		return false
	}
	c.entries = c.entries[:0]
	c.dirty = true
	return true
}

// Entries returns a copy of the entries, by ascending epoch; nil if there
// are none.
func (c *LeaderEpochCache) Entries() []EpochEntry {
	if len(c.entries) == 0 {
		return nil
	}
	return slices.Clone(c.entries)
}

// Dirty reports whether the cache changed since it was made or last
// written with [LeaderEpochCache.Write].
func (c *LeaderEpochCache) Dirty() bool { return c.dirty }

// Write writes the entries to path with [WriteLeaderEpochs] and, on
// success, clears the dirty flag. It writes even when the cache is clean.
func (c *LeaderEpochCache) Write(fsys vfs.FS, path string) error {
	if err := WriteLeaderEpochs(fsys, path, c.entries); err != nil {
		return err
	}
	c.dirty = false
	return nil
}
