package segment

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// File suffixes of a segment's files and of the states a file passes
// through, as Kafka's LogFileUtils names them. The names start with an
// offset zero-padded to 20 digits ([FileName]): a segment's files with its
// base offset, a producer snapshot with the offset it was taken at. A state
// suffix is appended to the whole name (00000000000000000000.log.deleted):
// .deleted marks a file scheduled for deletion, .cleaned the cleaner's
// output while it is written, .swap cleaned output ready to replace the
// segments it covers (the compaction package doc gives the swap). Part of
// Kafka's layout; must not change.
const (
	LogSuffix       = ".log"
	IndexSuffix     = ".index"
	TimeIndexSuffix = ".timeindex"
	TxnIndexSuffix  = ".txnindex"
	SnapshotSuffix  = ".snapshot"
	DeletedSuffix   = ".deleted"
	CleanedSuffix   = ".cleaned"
	SwapSuffix      = ".swap"

	// offsetDigits is the width of the zero-padded base offset in names.
	offsetDigits = 20
)

// ErrBadFileName means a name does not follow Kafka's 20-digit scheme.
var ErrBadFileName = errors.New("segment: not a segment file name")

// FileName returns the name of a segment file: the base offset zero-padded
// to 20 digits, then suffix (".log", ".index", ...). This is the one place
// that formats these names.
func FileName(baseOffset int64, suffix string) string {
	return fmt.Sprintf("%020d%s", baseOffset, suffix)
}

// ParseFileName splits a segment file name into its base offset and its
// suffix, which keeps any state suffix (".log.deleted" for
// "00000000000000000000.log.deleted"). The prefix must be exactly 20 decimal
// digits and the offset not negative.
func ParseFileName(name string) (baseOffset int64, suffix string, err error) {
	if len(name) < offsetDigits+1 || name[offsetDigits] != '.' {
		return 0, "", fmt.Errorf("%w: %q", ErrBadFileName, name)
	}
	digits := name[:offsetDigits]
	if strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, "", fmt.Errorf("%w: %q", ErrBadFileName, name)
	}
	off, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%w: %q: offset out of range", ErrBadFileName, name)
	}
	return off, name[offsetDigits:], nil
}
