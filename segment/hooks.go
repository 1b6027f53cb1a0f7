package segment

import (
	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/record"
)

// LogHooks are the operations on segments that only kafkalite's log uses,
// kept off [Segment] so that its methods are those any broker built on
// this package needs. Through them the log publishes its appends to its
// readers, writes a large batch while it validates it, keeps the record
// marks of large batches for its point reads, bounds a sealed segment by
// the next one and hears of its damage, and checks and rebuilds .txnindex
// files against the ABORT markers of the .log. Only this module can get
// them ([Hooks]) or implement them.
type LogHooks interface {
	// Publish makes the batches appended to s so far visible through
	// ReadableSize. The log calls it after each append, once the batch's
	// offsets are published (its log end offset), so that a reader never
	// holds a batch past the log end offset it can see next.
	Publish(s *Segment)
	// ReadableSize returns the bytes of s that the log's readers may see:
	// the size at the last Publish, the size s was created (0) or opened
	// with before the first, and less after a truncation.
	ReadableSize(s *Segment) int64

	// AppendOverlapped is [Segment.Append] for a batch that the caller has
	// yet to validate. While check runs on the caller's goroutine, the
	// batch's bytes after its first 12 (base offset and batch length) are
	// written past the end of the .log, on a goroutine that lives for this
	// call; on a large batch the write and the validation take about as
	// long each, so the append takes about as long as the longer of the
	// two. When check returns the batch's header, the first 12 bytes are
	// written and the batch is appended as Append appends it. When check
	// returns an error, nothing is appended, the bytes written are taken
	// back, and AppendOverlapped returns check's error as it is; any other
	// error is the segment's own, as from Append.
	//
	// check may change the batch's first 12 bytes and nothing else, and
	// must not call the segment's writer methods. Where the write has not
	// started when check returns (one P, or every P busy), the caller
	// writes the bytes itself; where check fails first, they are never
	// written.
	//
	// When it returns nil, what is where is as after Append. A crash
	// before the header is written leaves a zero batch length in front of
	// the bytes (the region past a segment's size is always zero or
	// absent: the file ends there, or is preallocated, and failed or taken
	// back writes are cut off): recovery truncates there, so a batch that
	// was never validated is never recovered as data. A refused batch is
	// taken back: the file ends at the size again, or holds zeros past it
	// when preallocated.
	AppendOverlapped(s *Segment, batch []byte, check func() (record.BatchHeader, error)) error
	// RememberMarks keeps m for the batch at position pos of s's .log, as
	// RememberSliceMarks does for a slice's first batch: the log gives
	// the marks of a large batch as it appends it, so that the first
	// point read into it jumps at once. m must describe that batch and
	// not change afterwards.
	RememberMarks(s *Segment, pos int64, m *BatchMarks)
	// Marks returns the marks remembered for the slice's first batch, or
	// nil. Like the table of verified CRCs (see [Slice.VerifyCRC]) the
	// segment forgets them when the .log is cut, and keeps one batch's
	// marks per slot of a table sized by the .log (one slot per 8 KiB, 256
	// to 16,384 slots); a collision replaces the older marks. The active
	// segment keeps the marks its appender gives (RememberMarks); a
	// sealed one keeps its table only if point reads used it.
	Marks(sl *Slice) *BatchMarks
	// RememberSliceMarks keeps m for the slice's first batch. m must not
	// change afterwards; a later call with more marks replaces it.
	RememberSliceMarks(sl *Slice, m *BatchMarks)

	// SetNextBaseOffset tells a sealed segment the base offset of the
	// segment after it: every batch of s must end below it, and one that
	// does not is corruption ([ErrCorruptLog]) for reads, the recovery
	// scan and the index rebuild. The log sets it when it loads its
	// segments and when it rolls; a segment made active again
	// ([Segment.TruncateTo], [Segment.Recover]) forgets it.
	SetNextBaseOffset(s *Segment, offset int64)
	// Damage returns nil while s's .log is whole. A sealed segment found
	// to hold bytes past its last readable batch (bytes that do not parse
	// as a batch header where one must start: a .log cut short,
	// overwritten, or zeroed) returns the [*Error] that reads past there
	// return: it matches [ErrCorruptLog] and record.ErrCorrupt, and its
	// Position is where the readable part of the .log ends (see "Damage"
	// in [Segment]'s doc). It is the error [Config.OnLogDamage] was given.
	Damage(s *Segment) error

	// HasTxnIndex reports whether s has a .txnindex.
	HasTxnIndex(s *Segment) bool
	// CheckTxnIndex checks s's .txnindex with [index.TxnIndex.Validate]
	// (whole entries of version 0, offsets inside the segment and
	// endOffset, in order) and returns its error, or why it could not be
	// opened or read. endOffset is the offset the segment's batches end
	// below: the next segment's base offset, or the log end offset for the
	// last segment. A segment without a .txnindex returns nil. A failure
	// matches index.ErrCorruptIndex.
	CheckTxnIndex(s *Segment, endOffset int64) error
	// TxnIndexEntries returns every entry of s's .txnindex, none if it has
	// none.
	TxnIndexEntries(s *Segment) ([]index.AbortedTxn, error)
	// AppendAbortMarkers appends the ABORT markers of s's batches from
	// byte position from up to its readable size (ReadableSize) to dst, in
	// offset order, and returns them and the position where it stopped
	// (the readable size, or where bytes stop parsing as batches). Batches
	// whose offsets fail the read checks are stepped over, as reads step
	// over them. It walks batch headers and decodes only transactional
	// control batches.
	AppendAbortMarkers(s *Segment, dst []AbortMarker, from int64) ([]AbortMarker, int64, error)
	// ReplaceTxnIndex replaces s's .txnindex with entries (removing it
	// when there are none), crash-safely: the new file is written under a
	// temporary name, synced, and renamed over the old one, and the
	// directory synced, so that a crash leaves the old file or the new
	// one. The old handle is kept open until the segment closes, for
	// readers that may be using it. It fails with [ErrClosed] once the
	// segment was closed or renamed for deletion (its names may be a
	// cleaned segment's by then).
	//
	// REQUIRES: no [Segment.AppendAbortedTxn] runs meanwhile (the log
	// holds its write lock for the active segment).
	ReplaceTxnIndex(s *Segment, entries []index.AbortedTxn) error
	// TxnIndexVerified reports whether s's .txnindex is known to hold an
	// entry for every ABORT marker that ends a transaction with data
	// there: it was written by this process (a new segment, a rebuild),
	// or the log checked it against the markers and said so with
	// MarkTxnIndexVerified.
	TxnIndexVerified(s *Segment) bool
	// MarkTxnIndexVerified records that the log checked s's .txnindex
	// against the segment's ABORT markers.
	MarkTxnIndexVerified(s *Segment)

	logHooks()
}

// Hooks returns the [LogHooks]. Its argument is a token that only this
// module's packages can make.
func Hooks(access.Internal) LogHooks { return logHooks{} }

// logHooks implements LogHooks; its methods lie beside what they use, in
// the files of their subjects.
type logHooks struct{}

func (logHooks) logHooks() {}
