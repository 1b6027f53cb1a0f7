package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// Layout of one .txnindex entry (Kafka's AbortedTxn). Part of the file
// format: frozen.
const (
	// AbortedTxnBytes is the size of one .txnindex entry.
	AbortedTxnBytes = 34
	// AbortedTxnVersion is the only entry version (Kafka's
	// AbortedTxn.CURRENT_VERSION).
	AbortedTxnVersion = 0

	txnVersionAt          = 0
	txnProducerIDAt       = 2
	txnFirstOffsetAt      = 10
	txnLastOffsetAt       = 18
	txnLastStableOffsetAt = 26
)

// txnReadEntries is how many entries one ReadAt of a scan fetches.
const txnReadEntries = 120

// txnScanBufs holds the read buffers of scans, so that a read_committed
// fetch, which scans .txnindex files, allocates nothing.
var txnScanBufs = sync.Pool{New: func() any {
	b := make([]byte, txnReadEntries*AbortedTxnBytes)
	return &b
}}

// AbortedTxn is one .txnindex entry: a transaction of ProducerID aborted in
// this partition, with the offsets a read_committed fetch needs to filter
// its records out.
type AbortedTxn struct {
	// ProducerID is the transactional producer's id.
	ProducerID int64
	// FirstOffset is the first offset of the transaction's data in this
	// partition (possibly in an earlier segment).
	FirstOffset int64
	// LastOffset is the offset of the ABORT marker, in this segment.
	LastOffset int64
	// LastStableOffset is the partition's last stable offset right after
	// the abort: the first offset of the earliest transaction still open,
	// or LastOffset + 1 if none.
	LastStableOffset int64
}

// String formats t as Kafka's AbortedTxn.toString does, without the
// version.
func (t AbortedTxn) String() string {
	return "AbortedTxn(producerId=" + strconv.FormatInt(t.ProducerID, 10) +
		", firstOffset=" + strconv.FormatInt(t.FirstOffset, 10) +
		", lastOffset=" + strconv.FormatInt(t.LastOffset, 10) +
		", lastStableOffset=" + strconv.FormatInt(t.LastStableOffset, 10) + ")"
}

// AppendAbortedTxn appends the 34-byte encoding of t (version 0) to dst.
func AppendAbortedTxn(dst []byte, t AbortedTxn) []byte {
	dst = binary.BigEndian.AppendUint16(dst, AbortedTxnVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.ProducerID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.FirstOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.LastOffset))
	return binary.BigEndian.AppendUint64(dst, uint64(t.LastStableOffset))
}

// parseAbortedTxn decodes one entry. REQUIRES: len(b) ≥ AbortedTxnBytes.
func parseAbortedTxn(b []byte) (AbortedTxn, int16) {
	return AbortedTxn{
		ProducerID:       int64(binary.BigEndian.Uint64(b[txnProducerIDAt:])),
		FirstOffset:      int64(binary.BigEndian.Uint64(b[txnFirstOffsetAt:])),
		LastOffset:       int64(binary.BigEndian.Uint64(b[txnLastOffsetAt:])),
		LastStableOffset: int64(binary.BigEndian.Uint64(b[txnLastStableOffsetAt:])),
	}, int16(binary.BigEndian.Uint16(b[txnVersionAt:]))
}

// TxnIndex is a segment's .txnindex file: the transactions aborted by ABORT
// markers in this segment (Kafka's TransactionIndex). It is append-only and
// not preallocated; the segment creates it at its first entry, so a segment
// without aborts has no .txnindex.
//
// Entries are read from the file on every call, as Kafka does; the index
// keeps only the file's length and the last entry's LastOffset in memory.
//
// A torn tail (a last entry shorter than 34 bytes, left by a crash during
// an append) does not stop the file from opening: [OpenTxnIndex] in
// [ReadWrite] mode truncates it away, and in [ReadOnly] mode ignores it, as
// Kafka's reader does; [TxnIndex.TornBytes] tells how many bytes it was,
// and [TxnIndex.Validate] reports it (the entry it was is lost: the
// segment's file is rebuilt from the log).
//
// Kafka reads back only the first byte of an entry's version and rejects
// values above 0; this package reads the whole int16 and rejects anything
// but 0 as [ErrCorruptIndex]. Kafka writes only 0, so both accept every
// file Kafka writes.
//
// A TxnIndex is safe for concurrent use; reads run in parallel with each
// other.
type TxnIndex struct {
	fileState // f and err are protected by mu

	startOffset int64

	mu         sync.RWMutex // protects the fields below and fileState's f and err
	size       int64        // bytes of whole entries
	torn       int64        // bytes of a partial last entry found on open
	hasLast    bool         // lastOffset is set
	lastOffset int64        // LastOffset of the last entry
	wbuf       [AbortedTxnBytes]byte
}

// CreateTxnIndex creates a new, empty .txnindex file for the segment
// starting at startOffset (its base offset), open for appending. It fails
// if the file exists. The new file is durable only after [TxnIndex.Flush]
// and a sync of its directory.
func CreateTxnIndex(fsys vfs.FS, name string, startOffset int64) (*TxnIndex, error) {
	f, err := fsys.Create(name)
	if err != nil {
		return nil, err
	}
	return &TxnIndex{fileState: fileState{name: name, writable: true, f: f}, startOffset: startOffset}, nil
}

// OpenTxnIndex opens an existing .txnindex file of the segment starting at
// startOffset. In [ReadWrite] mode a torn tail is truncated away; in
// [ReadOnly] mode it is ignored. Open reads the last entry only; call
// [TxnIndex.SanityCheck] to check them all.
func OpenTxnIndex(fsys vfs.FS, name string, startOffset int64, mode Mode) (*TxnIndex, error) {
	f, err := openFile(fsys, name, mode)
	if err != nil {
		return nil, err
	}
	t := &TxnIndex{fileState: fileState{name: name, writable: mode == ReadWrite, f: f}, startOffset: startOffset}
	if err := t.load(); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return t, nil
}

func (t *TxnIndex) load() error {
	size, err := t.f.Size()
	if err != nil {
		return fmt.Errorf("index: size of %s: %w", t.name, err)
	}
	if size < 0 {
		return corruptf(t.name, "negative file size %d", size)
	}
	t.size = roundDown(size, AbortedTxnBytes)
	t.torn = size - t.size
	if t.torn != 0 && t.writable {
		if err := t.f.Truncate(t.size); err != nil {
			return fmt.Errorf("index: truncate the torn tail of %s at %d: %w", t.name, t.size, err)
		}
	}
	if t.size == 0 {
		return nil
	}
	b := t.wbuf[:]
	if err := readFull(t.f, t.name, b, t.size-AbortedTxnBytes); err != nil {
		return err
	}
	txn, _ := parseAbortedTxn(b)
	t.hasLast, t.lastOffset = true, txn.LastOffset
	return nil
}

// Name returns the file's name, as it was created or opened.
func (t *TxnIndex) Name() string { return t.name }

// StartOffset returns the base offset of the index's segment.
func (t *TxnIndex) StartOffset() int64 { return t.startOffset }

// Entries returns the number of whole entries in the file.
func (t *TxnIndex) Entries() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return int(t.size / AbortedTxnBytes)
}

// TornBytes returns the length of the partial last entry found when the
// file was opened (0 if there was none): dropped from the file in
// [ReadWrite] mode, ignored in [ReadOnly] mode.
func (t *TxnIndex) TornBytes() int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.torn
}

// Append adds txn. Its LastOffset must be larger than the last entry's and
// not below the segment's start offset ([ErrInvalidOffset]). The entry is
// in the page cache (or the memory FS) when Append returns, durable after
// [TxnIndex.Flush].
func (t *TxnIndex) Append(txn AbortedTxn) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.checkWritableLocked(); err != nil {
		return err
	}
	if t.hasLast && txn.LastOffset <= t.lastOffset {
		return fmt.Errorf("%w: append %v to %s, last offset not larger than the current last offset %d",
			ErrInvalidOffset, txn, t.name, t.lastOffset)
	}
	if txn.LastOffset < t.startOffset {
		return fmt.Errorf("%w: append %v to %s, last offset below the start offset %d",
			ErrInvalidOffset, txn, t.name, t.startOffset)
	}
	b := AppendAbortedTxn(t.wbuf[:0], txn)
	if _, err := t.f.WriteAt(b, t.size); err != nil {
		t.err = fmt.Errorf("index: append to %s at %d: %w", t.name, t.size, err)
		return t.err
	}
	t.size += AbortedTxnBytes
	t.hasLast, t.lastOffset = true, txn.LastOffset
	return nil
}

// scanLocked calls fn with each entry and its byte position, in file
// order, until fn returns false. An entry whose version is not 0 is a
// [*CorruptIndexError]. REQUIRES: t.mu held.
func (t *TxnIndex) scanLocked(fn func(txn AbortedTxn, pos int64) bool) error {
	if err := t.checkOpenLocked(); err != nil {
		return err
	}
	pb := txnScanBufs.Get().(*[]byte)
	defer txnScanBufs.Put(pb)
	buf := *pb
	for pos := int64(0); pos < t.size; {
		chunk := buf[:min(int64(len(buf)), t.size-pos)]
		if err := readFull(t.f, t.name, chunk, pos); err != nil {
			return err
		}
		for ; len(chunk) >= AbortedTxnBytes; chunk = chunk[AbortedTxnBytes:] {
			txn, version := parseAbortedTxn(chunk)
			if version != AbortedTxnVersion {
				return corruptf(t.name, "entry at byte %d has version %d, want %d", pos, version, AbortedTxnVersion)
			}
			if !fn(txn, pos) {
				return nil
			}
			pos += AbortedTxnBytes
		}
	}
	return nil
}

// AllAbortedTxns returns every entry, in file order.
func (t *TxnIndex) AllAbortedTxns() ([]AbortedTxn, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var all []AbortedTxn
	err := t.scanLocked(func(txn AbortedTxn, _ int64) bool {
		all = append(all, txn)
		return true
	})
	return all, err
}

// CollectAbortedTxns returns the entries that overlap the fetch range
// [fetchOffset, upperBoundOffset): LastOffset ≥ fetchOffset and FirstOffset
// < upperBoundOffset, in file order. complete is true if the search can
// stop at this segment: it stopped after an entry whose LastStableOffset ≥
// upperBoundOffset (no transaction aborted in a later segment can overlap
// the range). Otherwise the caller continues with the next segment's
// index (see the package doc's .txnindex section).
func (t *TxnIndex) CollectAbortedTxns(fetchOffset, upperBoundOffset int64) (txns []AbortedTxn, complete bool, err error) {
	return t.AppendAbortedTxns(nil, fetchOffset, upperBoundOffset)
}

// AppendAbortedTxns is CollectAbortedTxns appending to dst, for callers
// that reuse a slice from fetch to fetch: it allocates nothing once dst
// has room. On error it returns dst unchanged.
func (t *TxnIndex) AppendAbortedTxns(dst []AbortedTxn, fetchOffset, upperBoundOffset int64) (txns []AbortedTxn, complete bool, err error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	txns = dst
	err = t.scanLocked(func(txn AbortedTxn, _ int64) bool {
		if txn.LastOffset >= fetchOffset && txn.FirstOffset < upperBoundOffset {
			txns = append(txns, txn)
		}
		if txn.LastStableOffset >= upperBoundOffset {
			complete = true
			return false
		}
		return true
	})
	if err != nil {
		return dst, false, err
	}
	return txns, complete, nil
}

// TruncateTo removes the entries from the first one whose LastOffset is ≥
// offset on (Kafka's truncateTo: entries are in LastOffset order).
func (t *TxnIndex) TruncateTo(offset int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.checkWritableLocked(); err != nil {
		return err
	}
	cut, hasLast, last := int64(-1), false, int64(0)
	err := t.scanLocked(func(txn AbortedTxn, pos int64) bool {
		if txn.LastOffset >= offset {
			cut = pos
			return false
		}
		hasLast, last = true, txn.LastOffset
		return true
	})
	if err != nil || cut < 0 {
		return err
	}
	return t.truncateLocked(cut, hasLast, last)
}

// Reset removes every entry (Kafka's reset), ready for a rebuild.
func (t *TxnIndex) Reset() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.checkWritableLocked(); err != nil {
		return err
	}
	return t.truncateLocked(0, false, 0)
}

func (t *TxnIndex) truncateLocked(size int64, hasLast bool, last int64) error {
	if err := t.f.Truncate(size); err != nil {
		t.err = fmt.Errorf("index: truncate %s to %d: %w", t.name, size, err)
		return t.err
	}
	t.size, t.hasLast, t.lastOffset = size, hasLast, last
	return nil
}

// SanityCheck applies Kafka's check, that no entry's LastOffset is below
// the segment's start offset, and checks every entry's version. A failure
// is a [*CorruptIndexError]. A torn tail is not a failure.
func (t *TxnIndex) SanityCheck() error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var bad error
	err := t.scanLocked(func(txn AbortedTxn, pos int64) bool {
		if txn.LastOffset < t.startOffset {
			bad = corruptf(t.name, "last offset of %v at byte %d is below the start offset %d", txn, pos, t.startOffset)
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	return bad
}

// Validate checks every entry against the rules a .txnindex Kafka or this
// package writes keeps, which SanityCheck does not all check, and fails
// with a [*CorruptIndexError] on the first one broken:
//
//   - the file holds whole entries: a partial last entry (a torn write,
//     [TxnIndex.TornBytes]) is damage here, though it is not to
//     SanityCheck, since a segment's entries are durable before the
//     segment is trusted;
//   - every version is 0;
//   - 0 ≤ FirstOffset ≤ LastOffset;
//   - the start offset ≤ LastOffset < endOffset (the offset the segment's
//     batches end below: the next segment's base offset, or the log end
//     offset for the last segment; 0 when unknown);
//   - LastOffset strictly increases from entry to entry;
//   - 0 ≤ LastStableOffset ≤ LastOffset + 1 (the last stable offset after
//     an abort is the first offset of a transaction still open, or the
//     offset after the ABORT marker).
//
// A file that passes may still lack entries (one cut off at an entry
// boundary); only the segment's ABORT markers tell that.
func (t *TxnIndex) Validate(endOffset int64) error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.torn != 0 {
		return corruptf(t.name, "a partial entry of %d bytes at byte %d", t.torn, t.size)
	}
	var bad error
	hasPrev, prev := false, int64(0)
	err := t.scanLocked(func(txn AbortedTxn, pos int64) bool {
		switch {
		case txn.FirstOffset < 0 || txn.FirstOffset > txn.LastOffset:
			bad = corruptf(t.name, "entry %v at byte %d: first offset not in [0, last offset]", txn, pos)
		case txn.LastOffset < t.startOffset || (endOffset > 0 && txn.LastOffset >= endOffset):
			bad = corruptf(t.name, "entry %v at byte %d: last offset outside the segment [%d, %d)", txn, pos, t.startOffset, endOffset)
		case hasPrev && txn.LastOffset <= prev:
			bad = corruptf(t.name, "entry %v at byte %d: last offset not above the previous entry's %d", txn, pos, prev)
		case txn.LastStableOffset < 0 || txn.LastStableOffset > txn.LastOffset+1:
			bad = corruptf(t.name, "entry %v at byte %d: last stable offset not in [0, last offset + 1]", txn, pos)
		}
		hasPrev, prev = true, txn.LastOffset
		return bad == nil
	})
	if err != nil {
		return err
	}
	return bad
}

// Flush makes the entries durable (fsync). It is a no-op on a [ReadOnly]
// index.
func (t *TxnIndex) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.syncLocked(t.f)
}

// Close closes the file. Deleting or renaming it is the segment's job. A
// second Close returns nil.
func (t *TxnIndex) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		return nil
	}
	return t.closeFile()
}
