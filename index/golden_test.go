package index

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The golden segment: base offset 1000, three indexed batches. Positions and
// offsets are what a segment with index.interval.bytes = 4096 and batches
// of about 4 KiB would index; the first batch (at position 0) never gets an
// entry.
const goldenBase = 1000

var (
	goldenOffsetEntries = []OffsetPosition{{1031, 4160}, {1065, 8375}, {1090, 12610}}
	// The last entry is the roll entry, appended with skipFullCheck.
	goldenTimeEntries = []TimestampOffset{{1_700_000_000_123, 1031}, {1_700_000_000_456, 1065}, {1_700_000_000_789, 1090}}
	goldenTxns        = []AbortedTxn{
		{ProducerID: 4001, FirstOffset: 990, LastOffset: 1040, LastStableOffset: 1041},
		{ProducerID: 4002, FirstOffset: 1050, LastOffset: 1070, LastStableOffset: 1060},
	}
)

// goldenCase builds one index file on a test filesystem and returns its
// bytes; spec is the same file encoded from the entry layouts of the
// package doc by the test's own encoder.
type goldenCase struct {
	file  string
	build func(t *testing.T, e testFS, name string) []byte
	spec  []byte
	// check reopens the golden bytes and checks the entries decoded.
	check func(t *testing.T, e testFS, name string)
}

var goldenCases = []goldenCase{
	{
		file: "00000000000000001000.index",
		build: func(t *testing.T, e testFS, name string) []byte {
			ix := createOffsetIndex(t, e, name, goldenBase, DefaultMaxIndexBytes, goldenOffsetEntries...)
			require.NoError(t, ix.TrimToValidSize())
			require.NoError(t, ix.Close())
			return readFile(t, e, name)
		},
		spec: specOffsetEntries(goldenBase, goldenOffsetEntries...),
		check: func(t *testing.T, e testFS, name string) {
			ix, err := OpenOffsetIndex(e.fs, e.path(name), goldenBase, DefaultMaxIndexBytes, ReadOnly)
			requireSaneEntries(t, ix, err, (*OffsetIndex).AppendEntries, goldenOffsetEntries)
		},
	},
	{
		file: "00000000000000001000.timeindex",
		build: func(t *testing.T, e testFS, name string) []byte {
			ix := createTimeIndex(t, e, name, goldenBase, DefaultMaxIndexBytes, goldenTimeEntries[:2]...)
			last := goldenTimeEntries[2]
			require.NoError(t, ix.MaybeAppend(last.Timestamp, last.Offset, true))
			require.NoError(t, ix.Close())
			return readFile(t, e, name)
		},
		spec: specTimeEntries(goldenBase, goldenTimeEntries...),
		check: func(t *testing.T, e testFS, name string) {
			ix, err := OpenTimeIndex(e.fs, e.path(name), goldenBase, DefaultMaxIndexBytes, ReadOnly)
			requireSaneEntries(t, ix, err, (*TimeIndex).AppendEntries, goldenTimeEntries)
		},
	},
	{
		file: "00000000000000001000.txnindex",
		build: func(t *testing.T, e testFS, name string) []byte {
			ix := createTxnIndex(t, e, name, goldenBase, goldenTxns...)
			require.NoError(t, ix.Close())
			return readFile(t, e, name)
		},
		spec: specTxnEntries(goldenTxns...),
		check: func(t *testing.T, e testFS, name string) {
			ix, err := OpenTxnIndex(e.fs, e.path(name), goldenBase, ReadOnly)
			requireSaneEntries(t, ix, err, allAborted, goldenTxns)
		},
	},
	{
		// An active index after a crash: flushed, never trimmed
		// (segment.index.bytes = 64: 8 slots, 3 in use).
		file: "active-untrimmed.index",
		build: func(t *testing.T, e testFS, name string) []byte {
			return flushedBytes(t, e, name, createOffsetIndex(t, e, name, goldenBase, 64, goldenOffsetEntries...))
		},
		spec: append(specOffsetEntries(goldenBase, goldenOffsetEntries...), make([]byte, 64-24)...),
		check: func(t *testing.T, e testFS, name string) {
			ix, err := OpenOffsetIndex(e.fs, e.path(name), goldenBase, 64, ReadWrite)
			assert.Equal(t, 8, requireSaneEntries(t, ix, err, (*OffsetIndex).AppendEntries, goldenOffsetEntries).MaxEntries())
		},
	},
	{
		// The same for the time index (segment.index.bytes = 72: 6 slots).
		file: "active-untrimmed.timeindex",
		build: func(t *testing.T, e testFS, name string) []byte {
			return flushedBytes(t, e, name, createTimeIndex(t, e, name, goldenBase, 72, goldenTimeEntries...))
		},
		spec: append(specTimeEntries(goldenBase, goldenTimeEntries...), make([]byte, 72-36)...),
		check: func(t *testing.T, e testFS, name string) {
			ix, err := OpenTimeIndex(e.fs, e.path(name), goldenBase, 72, ReadWrite)
			requireSaneEntries(t, ix, err, (*TimeIndex).AppendEntries, goldenTimeEntries)
		},
	},
	{
		// A .txnindex whose last append was torn: two entries and 17 bytes
		// of a third. The package never writes one; the bytes are the spec
		// encoding cut short.
		file: "torn.txnindex",
		build: func(t *testing.T, e testFS, name string) []byte {
			return append(specTxnEntries(goldenTxns...),
				specTxnEntries(AbortedTxn{ProducerID: 4003, FirstOffset: 1080, LastOffset: 1095, LastStableOffset: 1096})[:17]...)
		},
		spec: append(specTxnEntries(goldenTxns...), specTxnEntries(AbortedTxn{4003, 1080, 1095, 1096})[:17]...),
		check: func(t *testing.T, e testFS, name string) {
			ix, err := OpenTxnIndex(e.fs, e.path(name), goldenBase, ReadOnly)
			require.NoError(t, err)
			defer func() { require.NoError(t, ix.Close()) }()
			assert.Equal(t, int64(17), ix.TornBytes())
			got, err := ix.AllAbortedTxns()
			require.NoError(t, err)
			assert.Equal(t, goldenTxns, got)
		},
	},
}

// checkedIndex is what requireSaneEntries needs of an index.
type checkedIndex interface {
	SanityCheck() error
	Close() error
}

// requireSaneEntries requires the index opened (ix, err) to pass its
// sanity check and to hold want, as entries appends them to nil; it closes
// the index when the test ends, and returns it.
func requireSaneEntries[I checkedIndex, E any](t *testing.T, ix I, err error, entries func(I, []E) ([]E, error), want []E) I {
	t.Helper()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, ix.Close()) })
	require.NoError(t, ix.SanityCheck())
	got, err := entries(ix, nil)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	return ix
}

// allAborted is AllAbortedTxns in AppendEntries' shape.
func allAborted(ix *TxnIndex, _ []AbortedTxn) ([]AbortedTxn, error) { return ix.AllAbortedTxns() }

// flushedBytes returns the bytes of the active index ix, file name, as a
// crash leaves them: flushed, not trimmed (read before Close trims it);
// it closes ix.
func flushedBytes(t *testing.T, e testFS, name string, ix interface {
	Flush() error
	Close() error
}) []byte {
	t.Helper()
	require.NoError(t, ix.Flush())
	b := readFile(t, e, name)
	require.NoError(t, ix.Close())
	return b
}

// TestGolden builds each golden file with the package on every test
// filesystem, checks its bytes against the spec encoding and the committed
// file in testdata/ (rewritten with -update), and reads the committed file
// back.
func TestGolden(t *testing.T) {
	for _, gc := range goldenCases {
		t.Run(gc.file, func(t *testing.T) {
			golden := filepath.Join("testdata", gc.file)
			forEachFS(t, func(t *testing.T, e testFS) {
				got := gc.build(t, e, gc.file)
				require.Equal(t, gc.spec, got, "bytes differ from the spec encoding")
				if *update && e.kind == testFSKinds[0] {
					require.NoError(t, os.WriteFile(golden, got, 0o644))
				}
				want, err := os.ReadFile(golden)
				require.NoError(t, err, "run go test -run TestGolden -update to create it")
				require.Equal(t, want, got, "bytes differ from %s", golden)

				// Read the committed file back.
				writeFile(t, e, "golden-"+gc.file, want)
				gc.check(t, e, "golden-"+gc.file)
			})
		})
	}
}
