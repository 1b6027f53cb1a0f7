package segment

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// Segment is one segment of a partition: the .log file of batches starting at
// BaseOffset and its .index, .timeindex and (once a transaction aborts)
// .txnindex. The Segment owns these files: nothing else opens them.
//
// Concurrency: one writer (the partition's appender, holding the
// partition's write lock) calls Append, Seal, TruncateTo, Recover, Flush and
// Close; any number of readers call Read, FindOffsetByTimestamp, the
// accessors and the methods of their Slices at the same time. Readers see a
// batch once Append has returned; readers of batches that TruncateTo or
// Recover cut off get errors, never a crash, also where the .log is
// memory-mapped (see [Slice.View]): truncating, sealing and closing wait
// for the views in flight, never for a Slice to be released.
//
// What is where when a call returns:
//
//   - Append: the batch is in the .log through the OS page cache (or the
//     memory FS) and readable; index entries likewise. Nothing is durable.
//   - Flush: the .log, then the indexes, are fsynced.
//   - Seal and Close: the indexes are trimmed to their entries (the last
//     time-index slot takes the segment's max timestamp); not fsynced.
//   - RenameForDeletion: the files carry the .deleted suffix; the caller
//     syncs the directory. Remove deletes them once no Slice is live.
//
// Bad input and its handling, per case (each is a test):
//
//   - a partial batch at the end (a torn write), a zero-filled tail (a
//     preallocated file after a crash), a CRC mismatch, garbage, offsets
//     that cannot be true (see below): Recover truncates from the first
//     such batch on and says why in RecoverResult.Cause (record.ErrTruncated
//     for a torn tail, record.ErrCorrupt for damage), as Kafka does;
//   - a legacy magic 0/1 batch: Recover stops with [ErrLegacyFormat] naming
//     the file and position, and truncates nothing;
//   - the active segment's index that fails its checks, or its missing
//     .index: Open reports index.ErrCorruptIndex or fs.ErrNotExist, and
//     Recover rebuilds it; a missing .timeindex: Open creates it empty;
//   - a sealed segment's damage, which no Recover rescans: see below;
//   - a file name that is not 20 digits: [ParseFileName] fails with
//     [ErrBadFileName].
//
// Damage. After a clean shutdown, and below a log's recovery point,
// segments are opened without a scan of their .log (a log recovers only
// from its recovery point on). Damage found there is worked around
// without truncating or deleting anything, so that it costs only what it
// destroyed:
//
//   - Offsets. A batch's base offset and length lie outside its CRC. Every
//     walk over batch headers (reads, the recovery scan, the tail scan, the
//     rebuild scan) serves a batch only if its offsets can be true: it
//     starts above the batch before it, fits the relative offsets of the
//     indexes, ends below the next segment's base offset
//     ([LogHooks.SetNextBaseOffset]) and the segment's next offset, and the
//     batch after it starts above its last offset (when that one does not
//     but the one after it does, the one in between is the odd one). A
//     batch that fails is stepped over: a read of an offset it may hold (up
//     to the next good batch's base offset) fails with [ErrCorruptLog]
//     naming the file and the batch's position; reads of later offsets get
//     the later batches. Recover truncates at such a batch instead.
//   - Indexes. A sealed segment's .index or .timeindex that fails Kafka's
//     sanity checks or ours (the last .index entry must point at a batch
//     ending at its offset, the last .timeindex entry at a batch of its
//     offset whose max timestamp it names), a missing .index, and an entry
//     that a read finds pointing at a batch with another last offset, make
//     the segment rebuild both files from its .log, crash-safely (written
//     under a temporary name, synced, renamed, the directory synced: a
//     crash leaves the old file, which is rebuilt again, or the new one),
//     and tell the log ([Config.OnIndexRebuild]). The rebuild indexes the
//     batches whose header, CRC and offsets pass, and steps over the
//     others. It never races the writer: a rebuild begun before the
//     segment is made active again (TruncateTo, Recover) is discarded, and
//     a read that met a mismatch while the writer changed the segment
//     fails with [ErrCutUnderRead] instead of rebuilding. A segment
//     rebuilds at most once.
//   - The .log. Bytes that do not parse as a batch header where a batch
//     must start (a .log cut short, overwritten, zeroed) end the readable
//     part of a sealed segment where the tail scan or a rebuild meets them:
//     reads past there return an error matching [ErrCorruptLog] that names
//     the file and the position where the readable part ends,
//     [Segment.Size] becomes that position, and the log hears of it
//     ([Config.OnLogDamage]). A read that meets such bytes elsewhere fails
//     the same way, unless an index entry past them leads to a batch
//     holding the offset asked for. Reads never return a partial batch.
//     The file is left as it is, so that the damage is found again after a
//     restart; TruncateTo and Recover cut it off. A .log cut exactly at a
//     batch boundary is found by the rebuild of its index, whose last
//     entry names an offset past the new end: the segment's readable part
//     ends there the same way, but only until the directory is reopened,
//     since the rebuilt index leaves nothing to find (the segment then
//     ends there, as one the cleaner shortened would).
//   - CRCs. [Slice.VerifyCRC] checks a slice's batches for readers that
//     decode them, remembering what it verified, and the batches this
//     process appended, until the .log is cut.
//   - The .txnindex. The log checks it against the ABORT markers of the
//     .log and rebuilds it from them, crash-safely ([LogHooks]).
type Segment struct {
	fsys vfs.FS
	dir  string
	base int64
	cfg  Config

	// log is the .log with its size, its mapping and the tables of point
	// reads (logfile.go).
	log logFile
	// published is the size at the last Publish (LogHooks), or the size
	// the segment was created or opened with: the bound of ReadableSize.
	published atomic.Int64

	// Writer state (the appender's, see the type comment).
	bytesSinceLastIndexEntry int
	maxTimestampSoFar        atomic.Int64 // -1 until a batch has a timestamp
	offsetOfMaxTimestamp     atomic.Int64
	nextOffset               atomic.Int64 // -1 until known (lazily scanned)
	firstBatchTimestamp      int64        // Kafka's rollingBasedTimestamp; -2 = not loaded
	created                  time.Time
	rollJitter               time.Duration
	failed                   error
	ahead                    writeAhead // AppendOverlapped's write

	// limit is the next segment's base offset, 0 when unknown (the
	// active segment): see SetNextBaseOffset.
	limit atomic.Int64
	// damage is set once a sealed segment's .log is found to hold bytes
	// past its last readable batch (see Damage); its Position is where the
	// readable part ends, and size was lowered to it.
	damage atomic.Pointer[Error]
	// txnVerified: the .txnindex was checked against the segment's ABORT
	// markers, or written by this process (see TxnIndexVerified).
	txnVerified atomic.Bool
	// activations counts the segment's activations (activate): a rebuild
	// or read that sees it change knows the writer took the segment over.
	activations atomic.Uint32

	// rebuild serialises the rebuilds of the indexes (rebuild.go). Lock
	// order: rebuild.mu, then log.mapMu, then mu.
	rebuild indexRebuild

	mu sync.Mutex // protects the fields below
	//   indexes open lazily; both nil until first use
	offsetIndex *index.OffsetIndex
	timeIndex   *index.TimeIndex
	txnIndex    *index.TxnIndex // nil until the file exists
	// txnDamage is why the .txnindex could not be opened or trusted, nil
	// when it is fine or absent (see CheckTxnIndex).
	txnDamage error
	// retired holds index handles a rebuild replaced: readers may still
	// be using them, so they are closed with the segment.
	retired     []io.Closer
	active      bool
	closed      bool
	deleted     bool // files renamed to .deleted
	removeReady bool // Remove was called: remove files when refs drop to 0
	refs        int  // live Slices
}

const notLoaded = -2

// Create creates a new, empty segment's files in dir: the .log (preallocated
// if configured) and the .index and .timeindex preallocated to
// MaxIndexBytes. It fails if any of them exists. A Create that fails (no
// file descriptor left, no space) removes the files it made, so that it
// can be called again for the same base offset. rollJitter is the
// segment's random share of segment.jitter.ms, chosen by the log.
func Create(fsys vfs.FS, dir string, baseOffset int64, cfg Config, rollJitter time.Duration) (*Segment, error) {
	s := newSegment(fsys, dir, baseOffset, cfg, rollJitter, true)
	f, err := fsys.Create(s.path(LogSuffix))
	if err != nil {
		return nil, err
	}
	// undo closes and removes what was made before a failure.
	undo := func(err error, made ...io.Closer) error {
		errs := []error{err}
		for _, c := range made {
			errs = append(errs, c.Close())
		}
		errs = append(errs, fsys.Remove(s.path(LogSuffix)))
		if len(made) > 1 {
			errs = append(errs, fsys.Remove(s.path(IndexSuffix)))
		}
		return errors.Join(errs...)
	}
	s.log.f = f
	if cfg.Preallocate && cfg.SegmentBytes > 0 {
		if err := f.Truncate(cfg.SegmentBytes); err != nil {
			return nil, undo(err, f)
		}
	}
	s.nextOffset.Store(baseOffset)
	s.firstBatchTimestamp = record.NoTimestamp
	oi, err := index.CreateOffsetIndex(fsys, s.path(IndexSuffix), baseOffset, cfg.MaxIndexBytes)
	if err != nil {
		return nil, undo(err, f)
	}
	ti, err := index.CreateTimeIndex(fsys, s.path(TimeIndexSuffix), baseOffset, cfg.MaxIndexBytes)
	if err != nil {
		return nil, undo(err, f, oi)
	}
	s.offsetIndex, s.timeIndex = oi, ti
	s.txnVerified.Store(true) // every entry it gets, this process writes
	return s, nil
}

// OpenOptions say how to open an existing segment.
type OpenOptions struct {
	// Active opens the indexes for appending (read-write, expanded to
	// MaxIndexBytes) and scans the tail of the .log to find the next offset
	// and the largest timestamp. Inactive segments open their indexes
	// read-only, on first use.
	Active bool
	// RollJitter is the segment's share of segment.jitter.ms.
	RollJitter time.Duration
}

// Open opens an existing segment without recovering it: the .log's size is
// taken as it is and the indexes are trusted after Kafka's sanity checks
// and ours (run when they are first used, see "Damage" in [Segment]'s
// doc). Call [Segment.Recover] after an unclean shutdown.
//
// An inactive segment whose .index or .timeindex fails the checks, or
// whose .index is missing, rebuilds both from its .log on first use. The
// active segment's indexes are checked by Open, which returns the Segment
// and an error matching [index.ErrCorruptIndex] (or fs.ErrNotExist for a
// missing .index) on which the caller calls Recover. A missing .timeindex
// is created empty, as Kafka does. A .txnindex that cannot be opened or
// read is not an error here: [LogHooks.CheckTxnIndex] reports it, and the
// log rebuilds it ([LogHooks.ReplaceTxnIndex]).
func Open(fsys vfs.FS, dir string, baseOffset int64, cfg Config, opts OpenOptions) (*Segment, error) {
	s := newSegment(fsys, dir, baseOffset, cfg, opts.RollJitter, opts.Active)
	// The .log is always opened for writing: recovery and truncation may
	// cut it, whether or not the segment is active.
	f, err := fsys.OpenReadWrite(s.path(LogSuffix))
	if err != nil {
		return nil, err
	}
	s.log.f = f
	size, err := f.Size()
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	if size > maxLogBytes {
		return nil, errors.Join(&Error{File: s.path(LogSuffix), Position: maxLogBytes, Err: ErrSegmentFull}, f.Close())
	}
	s.log.size.Store(size)
	s.published.Store(size)
	// A Stat that fails for another reason than a missing file must not
	// pass for a missing index: a .txnindex taken for absent would serve
	// aborted records to read_committed and be recreated empty.
	if _, err := fsys.Stat(s.path(TimeIndexSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, errors.Join(&Error{File: s.path(TimeIndexSuffix), Err: err}, f.Close())
	} else if err != nil {
		ti, err := index.CreateTimeIndex(fsys, s.path(TimeIndexSuffix), baseOffset, cfg.MaxIndexBytes)
		if err != nil {
			return nil, errors.Join(err, f.Close())
		}
		if err := ti.Close(); err != nil {
			return nil, errors.Join(err, f.Close())
		}
	}
	if _, err := fsys.Stat(s.path(TxnIndexSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, errors.Join(&Error{File: s.path(TxnIndexSuffix), Err: err}, f.Close())
	} else if err == nil {
		mode := index.ReadOnly
		if opts.Active {
			mode = index.ReadWrite
		}
		if s.txnIndex, err = index.OpenTxnIndex(fsys, s.path(TxnIndexSuffix), baseOffset, mode); err != nil {
			if !errors.Is(err, index.ErrCorruptIndex) {
				return nil, errors.Join(err, f.Close()) // I/O: do not recover without it
			}
			s.txnDamage = err // the log rebuilds it from the ABORT markers
		}
	}
	if _, err := fsys.Stat(s.path(IndexSuffix)); err != nil {
		if !isNotExist(err) || opts.Active {
			return s, &Error{File: s.path(IndexSuffix), Err: err}
		}
		// An inactive segment rebuilds it on first use.
	}
	if opts.Active {
		if _, _, err := s.indexes(); err != nil {
			return s, err
		}
		if err := s.loadTail(); err != nil {
			return s, err
		}
	}
	return s, nil
}

// maxLogBytes is the largest .log Kafka can address with int32 positions.
const maxLogBytes = 1<<31 - 1

func newSegment(fsys vfs.FS, dir string, base int64, cfg Config, jitter time.Duration, active bool) *Segment {
	if cfg.IndexIntervalBytes <= 0 {
		cfg.IndexIntervalBytes = DefaultConfig().IndexIntervalBytes
	}
	if cfg.MaxIndexBytes <= 0 {
		cfg.MaxIndexBytes = DefaultConfig().MaxIndexBytes
	}
	s := &Segment{fsys: fsys, dir: dir, base: base, cfg: cfg, rollJitter: jitter, active: active,
		created: cfg.now(), firstBatchTimestamp: notLoaded}
	s.maxTimestampSoFar.Store(record.NoTimestamp)
	s.offsetOfMaxTimestamp.Store(base)
	s.nextOffset.Store(-1)
	s.log.name = s.path(LogSuffix)
	s.log.mapAt = func() int64 {
		s.mu.Lock()
		active := s.active
		s.mu.Unlock()
		if active {
			// Mapped up to segment.bytes, so that what is appended
			// later is mapped already.
			return max(s.log.size.Load(), min(s.cfg.SegmentBytes, maxLogBytes))
		}
		return s.log.size.Load()
	}
	return s
}

func (s *Segment) path(suffix string) string { return filepath.Join(s.dir, FileName(s.base, suffix)) }

// BaseOffset returns the offset of the segment's first possible record.
func (s *Segment) BaseOffset() int64 { return s.base }

// Size returns the size of the .log's batches in bytes.
func (s *Segment) Size() int64 { return s.log.size.Load() }

func (logHooks) Publish(s *Segment) { s.published.Store(s.log.size.Load()) }

func (logHooks) ReadableSize(s *Segment) int64 { return min(s.published.Load(), s.log.size.Load()) }

// LogFile returns the path of the .log file.
func (s *Segment) LogFile() string { return s.log.name }

// MaxTimestamp returns the largest batch max timestamp in the segment, or -1.
// For a segment opened inactive it is loaded on first use.
func (s *Segment) MaxTimestamp() (int64, error) {
	if err := s.ensureTailLoaded(); err != nil {
		return record.NoTimestamp, err
	}
	return s.maxTimestampSoFar.Load(), nil
}

// NextOffset returns the offset after the segment's last batch (the base
// offset if it is empty). For a segment opened inactive it is found by a
// scan of the batches after the last index entry, on first use.
func (s *Segment) NextOffset() (int64, error) {
	if err := s.ensureTailLoaded(); err != nil {
		return -1, err
	}
	return s.nextOffset.Load(), nil
}

func (s *Segment) ensureTailLoaded() error {
	if s.nextOffset.Load() >= 0 {
		return nil
	}
	return s.loadTail()
}

// indexes returns the offset and time indexes, opening them on first use
// (read-write for the active segment, read-only otherwise) and checking
// them (checkIndexes). An inactive segment whose indexes fail the checks,
// or whose .index is missing, rebuilds them from the .log (rebuild.go).
func (s *Segment) indexes() (*index.OffsetIndex, *index.TimeIndex, error) {
	oi, ti, err := s.openIndexes()
	if err != nil && s.rebuildable(err) {
		return s.rebuildIndexes(nil, err)
	}
	return oi, ti, err
}

// openIndexes is indexes without the rebuild.
func (s *Segment) openIndexes() (*index.OffsetIndex, *index.TimeIndex, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, ErrClosed
	}
	if s.offsetIndex != nil {
		return s.offsetIndex, s.timeIndex, nil
	}
	mode := index.ReadOnly
	if s.active {
		mode = index.ReadWrite
	}
	oi, err := index.OpenOffsetIndex(s.fsys, s.path(IndexSuffix), s.base, s.cfg.MaxIndexBytes, mode)
	if err != nil {
		return nil, nil, err
	}
	ti, err := index.OpenTimeIndex(s.fsys, s.path(TimeIndexSuffix), s.base, s.cfg.MaxIndexBytes, mode)
	if err != nil {
		return nil, nil, errors.Join(err, oi.Close())
	}
	err = s.checkIndexes(oi, ti)
	if err == nil && s.active {
		_, err = oi.Resize(int64(s.cfg.MaxIndexBytes))
		if err == nil {
			_, err = ti.Resize(int64(s.cfg.MaxIndexBytes))
		}
	}
	if err != nil {
		return nil, nil, errors.Join(err, oi.Close(), ti.Close())
	}
	s.offsetIndex, s.timeIndex = oi, ti
	return oi, ti, nil
}

// Flush makes everything appended so far durable: the .log, then the
// indexes.
func (s *Segment) Flush() error {
	if err := s.FlushData(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if s.offsetIndex != nil {
		errs = append(errs, s.offsetIndex.Flush(), s.timeIndex.Flush())
	}
	if s.txnIndex != nil {
		errs = append(errs, s.txnIndex.Flush())
	}
	return errors.Join(errs...)
}

// FlushData fsyncs the .log alone: the batches appended so far are
// durable, the indexes are not (recovery rebuilds them from the .log).
func (s *Segment) FlushData() error {
	if err := s.log.f.Sync(); err != nil {
		return &Error{File: s.path(LogSuffix), Position: s.log.size.Load(), Err: err}
	}
	return nil
}

// Close seals the indexes (the final time index entry, trimmed files) and
// closes every file, joining their errors. A preallocated .log is trimmed to
// its batches. Slices still referencing the segment keep reading until
// released. A second Close returns nil.
func (s *Segment) Close() error {
	s.ahead.wait()
	var errs []error
	if s.active {
		errs = append(errs, s.finalTimeIndexEntry())
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.offsetIndex != nil {
		errs = append(errs, s.offsetIndex.Close(), s.timeIndex.Close())
	}
	if s.txnIndex != nil {
		errs = append(errs, s.txnIndex.Close())
	}
	for _, c := range s.retired {
		errs = append(errs, c.Close())
	}
	s.retired = nil
	// Close holds a reference of its own while it trims the .log, so that
	// the last Slice released meanwhile does not close the file under it;
	// dropping it closes the .log unless a Slice is still live.
	s.refs++
	s.mu.Unlock()
	if s.active && s.cfg.Preallocate {
		errs = append(errs, s.log.cut(s.log.size.Load()))
	}
	errs = append(errs, s.releaseRef())
	return errors.Join(errs...)
}

// finalTimeIndexEntry appends (max timestamp so far, its offset) to the time
// index, in its reserved last slot, if it is newer than the last entry.
func (s *Segment) finalTimeIndexEntry() error {
	ts := s.maxTimestampSoFar.Load()
	if ts < 0 {
		return nil
	}
	_, ti, err := s.indexes()
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return nil
		}
		return err
	}
	return ti.MaybeAppend(ts, s.offsetOfMaxTimestamp.Load(), true)
}

// String names the segment for logs.
func (s *Segment) String() string {
	return fmt.Sprintf("segment %s (base offset %d, %d bytes)", s.path(LogSuffix), s.base, s.log.size.Load())
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
