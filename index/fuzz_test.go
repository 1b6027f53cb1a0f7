package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// The fuzz targets open arbitrary bytes as an index file, on the memory
// filesystem (ReadAt/WriteAt) and on a real file (mmap), in the mode the
// input picks, and then exercise the index. Invariants checked:
//
//   - nothing panics, and every error is one the API documents for it;
//   - SanityCheck (and, for a .txnindex, Validate, which fails on every
//     partial entry) returns nil or a *CorruptIndexError;
//   - the entries are the file's slots decoded independently: all of them
//     for ReadOnly, up to the last slot holding a non-zero byte for
//     ReadWrite (the rest of the file is zeros);
//   - a lookup returns an existing entry whose key is ≤ the target, or the
//     segment start; on a well-ordered index, exactly the largest such;
//   - after a TruncateTo and Close of a ReadWrite index, the file holds a
//     prefix of the entries, trimmed.

// fuzzSeeds returns the golden files, to seed the corpus.
func fuzzSeeds(f *testing.F, suffix string) [][]byte {
	f.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "*"+suffix))
	require.NoError(f, err)
	var seeds [][]byte
	for _, name := range names {
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		seeds = append(seeds, b)
	}
	require.NotEmpty(f, seeds)
	return seeds
}

var fuzzFileSeq atomic.Int64

// fuzzDir is one directory for the OS files of all fuzz inputs of this
// process (a t.TempDir per input costs more than the input), removed by
// TestMain.
var fuzzDir struct {
	once sync.Once
	dir  string
	err  error
}

func fuzzOSDir() (string, error) {
	fuzzDir.once.Do(func() {
		fuzzDir.dir, fuzzDir.err = os.MkdirTemp("", "kafkalite-index-fuzz-")
	})
	return fuzzDir.dir, fuzzDir.err
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fuzzDir.dir != "" {
		os.RemoveAll(fuzzDir.dir)
	}
	os.Exit(code)
}

// fuzzFS returns the memory and OS filesystems for one fuzz input, with the
// data written to a fresh file name on each.
func fuzzFS(t *testing.T, data []byte, suffix string) ([]testFS, string) {
	name := fmt.Sprintf("f%d%s", fuzzFileSeq.Add(1), suffix)
	dir, err := fuzzOSDir()
	require.NoError(t, err)
	fss := []testFS{newTestFS(t, "mem"), {kind: "os", fs: vfs.Default, dir: dir}}
	for _, e := range fss {
		writeFile(t, e, name, data)
	}
	t.Cleanup(func() { os.Remove(fss[1].path(name)) })
	return fss, name
}

func fuzzMode(readWrite bool) Mode {
	if readWrite {
		return ReadWrite
	}
	return ReadOnly
}

// wantFuzzEntries returns the number of entries the package must count in
// data opened in mode, by the rules of doc.go.
func wantFuzzEntries(data []byte, entrySize int, mode Mode) int {
	slots := len(data) / entrySize
	if mode == ReadOnly {
		return slots
	}
	n := slots
	for n > 0 && bytes.Count(data[(n-1)*entrySize:n*entrySize], []byte{0}) == entrySize {
		n--
	}
	return n
}

func requireCorruptOrNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		var ce *CorruptIndexError
		require.ErrorAs(t, err, &ce)
	}
}

// fuzzIndex is what requireFuzzEntries needs of an offset or time index.
type fuzzIndex interface {
	SanityCheck() error
	Entries() int
}

// requireFuzzEntries requires the index opened from data in mode (ix, err)
// to pass its sanity check or fail it with a *CorruptIndexError, and to
// hold the entries doc.go's rules give: data's slots of entryBytes (those
// wantFuzzEntries counts), each decoded independently by decode. It
// returns them.
func requireFuzzEntries[I fuzzIndex, E comparable](t *testing.T, ix I, err error, data []byte, entryBytes int, mode Mode,
	entries func(I, []E) ([]E, error), decode func(slot []byte) E) []E {
	t.Helper()
	require.NoError(t, err)
	requireCorruptOrNil(t, ix.SanityCheck())
	n := wantFuzzEntries(data, entryBytes, mode)
	require.Equal(t, n, ix.Entries())
	got, err := entries(ix, nil)
	require.NoError(t, err)
	require.Len(t, got, n)
	want := make([]E, n)
	for i := range want {
		want[i] = decode(data[i*entryBytes:])
	}
	require.True(t, slices.Equal(want, got), "entries %v, want %v", got, want)
	return got
}

func FuzzOpenOffsetIndex(f *testing.F) {
	for _, seed := range fuzzSeeds(f, ".index") {
		f.Add(seed, int64(goldenBase), int64(1070), false)
		f.Add(seed, int64(goldenBase), int64(1031), true)
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x80, 0, 0, 0, 1}, int64(0), int64(-1), true)
	f.Add(make([]byte, 8*2000), int64(1<<40), int64(1<<40), true)
	f.Fuzz(func(t *testing.T, data []byte, base, target int64, readWrite bool) {
		mode := fuzzMode(readWrite)
		fss, name := fuzzFS(t, data, ".index")
		for _, e := range fss {
			ix, err := OpenOffsetIndex(e.fs, e.path(name), base, 1024, mode)
			entries := requireFuzzEntries(t, ix, err, data, OffsetIndexEntryBytes, mode, (*OffsetIndex).AppendEntries,
				func(b []byte) OffsetPosition {
					return OffsetPosition{
						Offset:   base + int64(int32(binary.BigEndian.Uint32(b))),
						Position: Position(int32(binary.BigEndian.Uint32(b[4:]))),
					}
				})
			n := len(entries)
			sorted := true
			for i := 1; i < n; i++ {
				sorted = sorted && entries[i-1].Offset < entries[i].Offset
			}
			if n > 0 {
				require.Equal(t, entries[n-1].Offset, ix.LastOffset())
				got, err := ix.Entry(n - 1)
				require.NoError(t, err)
				require.Equal(t, entries[n-1], got)
			}

			for _, tg := range []int64{target, base, base - 1} {
				got, err := ix.Lookup(tg)
				require.NoError(t, err)
				if got != (OffsetPosition{Offset: base}) {
					require.True(t, slices.Contains(entries, got), "lookup %d found %v, not an entry", tg, got)
					require.LessOrEqual(t, got.Offset, tg)
				}
				if sorted {
					require.Equal(t, refOffsetLookup(base, entries, tg), got)
				}
			}

			posSorted := sorted
			for i := 1; i < n && posSorted; i++ {
				posSorted = entries[i-1].Position < entries[i].Position
			}
			ub, ok, err := ix.FetchUpperBoundOffset(OffsetPosition{Position: Position(target)}, int(target>>32))
			require.NoError(t, err)
			if ok {
				require.True(t, slices.Contains(entries, ub), "upper bound %v is not an entry", ub)
			}
			if posSorted {
				want, wantOK := refFetchUpperBound(entries, int64(Position(target))+target>>32)
				require.Equal(t, wantOK, ok)
				require.Equal(t, want, ub)
			}

			if mode == ReadOnly {
				require.NoError(t, ix.Close())
				continue
			}
			if err := ix.Append(target, 7); err == nil {
				entries = append(entries, OffsetPosition{target, 7})
			} else if !errors.Is(err, ErrIndexFull) && !errors.Is(err, ErrInvalidOffset) && !errors.Is(err, ErrOffsetOverflow) {
				t.Fatalf("append: unexpected error %v", err)
			}
			require.NoError(t, ix.TruncateTo(target))
			kept := ix.Entries()
			require.LessOrEqual(t, kept, len(entries))
			if sorted {
				requireKeptBelow(t, entries, kept, target, func(e OffsetPosition) int64 { return e.Offset })
			}
			require.NoError(t, ix.Close())
			require.Equal(t, specOffsetEntries(base, entries[:kept]...), readFile(t, e, name))
		}
	})
}

func FuzzOpenTimeIndex(f *testing.F) {
	for _, seed := range fuzzSeeds(f, ".timeindex") {
		f.Add(seed, int64(goldenBase), int64(1_700_000_000_500), false)
		f.Add(seed, int64(goldenBase), int64(1_700_000_000_456), true)
	}
	f.Add(make([]byte, 12*1000+5), int64(0), int64(0), true)
	f.Fuzz(func(t *testing.T, data []byte, base, target int64, readWrite bool) {
		mode := fuzzMode(readWrite)
		fss, name := fuzzFS(t, data, ".timeindex")
		for _, e := range fss {
			ix, err := OpenTimeIndex(e.fs, e.path(name), base, 1200, mode)
			entries := requireFuzzEntries(t, ix, err, data, TimeIndexEntryBytes, mode, (*TimeIndex).AppendEntries,
				func(b []byte) TimestampOffset {
					return TimestampOffset{
						Timestamp: int64(binary.BigEndian.Uint64(b)),
						Offset:    base + int64(int32(binary.BigEndian.Uint32(b[8:]))),
					}
				})
			n := len(entries)
			sorted, offSorted := true, true
			for i := 1; i < n; i++ {
				sorted = sorted && entries[i-1].Timestamp < entries[i].Timestamp
				offSorted = offSorted && entries[i-1].Offset <= entries[i].Offset
			}
			if n > 0 {
				require.Equal(t, entries[n-1], ix.LastEntry())
			}

			none := TimestampOffset{Timestamp: NoTimestamp, Offset: base}
			for _, tg := range []int64{target, NoTimestamp, 0} {
				got, err := ix.Lookup(tg)
				require.NoError(t, err)
				if got != none {
					require.True(t, slices.Contains(entries, got), "lookup %d found %v, not an entry", tg, got)
					require.LessOrEqual(t, got.Timestamp, tg)
				}
				if sorted {
					require.Equal(t, refTimeLookup(base, entries, tg), got)
				}
			}

			if mode == ReadOnly {
				require.NoError(t, ix.Close())
				continue
			}
			offset := base + target%1000
			if err := ix.MaybeAppend(target, offset, true); err == nil {
				if ix.Entries() > len(entries) {
					require.Equal(t, TimestampOffset{target, offset}, ix.LastEntry())
					entries = append(entries, ix.LastEntry())
				}
			} else if !errors.Is(err, ErrIndexFull) && !errors.Is(err, ErrInvalidOffset) &&
				!errors.Is(err, ErrInvalidTimestamp) && !errors.Is(err, ErrOffsetOverflow) {
				t.Fatalf("append: unexpected error %v", err)
			}
			require.Equal(t, len(entries), ix.Entries())
			require.NoError(t, ix.TruncateTo(offset))
			kept := ix.Entries()
			if offSorted {
				requireKeptBelow(t, entries, kept, offset, func(e TimestampOffset) int64 { return e.Offset })
			}
			require.NoError(t, ix.Close())
			require.Equal(t, specTimeEntries(base, entries[:kept]...), readFile(t, e, name))
		}
	})
}

func FuzzTxnIndex(f *testing.F) {
	for _, seed := range fuzzSeeds(f, ".txnindex") {
		f.Add(seed, int64(goldenBase), int64(1000), int64(1065), false)
		f.Add(seed, int64(goldenBase), int64(0), int64(2000), true)
	}
	f.Add(make([]byte, 34*3+1), int64(0), int64(0), int64(1), true)
	f.Fuzz(func(t *testing.T, data []byte, start, fetch, upper int64, readWrite bool) {
		mode := fuzzMode(readWrite)
		fss, name := fuzzFS(t, data, ".txnindex")
		whole := len(data) / AbortedTxnBytes * AbortedTxnBytes
		for _, e := range fss {
			ix, err := OpenTxnIndex(e.fs, e.path(name), start, mode)
			require.NoError(t, err)
			require.Equal(t, int64(len(data)-whole), ix.TornBytes())
			require.Equal(t, whole/AbortedTxnBytes, ix.Entries())
			requireCorruptOrNil(t, ix.SanityCheck())
			verr := ix.Validate(upper)
			requireCorruptOrNil(t, verr)
			if len(data) != whole {
				require.Error(t, verr, "a partial entry fails Validate")
			}

			// Decode independently; the first entry with a version other
			// than 0 makes every full scan a corruption error.
			var want []AbortedTxn
			badVersion := false
			for b := data[:whole]; len(b) > 0; b = b[AbortedTxnBytes:] {
				if binary.BigEndian.Uint16(b) != 0 {
					badVersion = true
					break
				}
				want = append(want, AbortedTxn{
					ProducerID:       int64(binary.BigEndian.Uint64(b[2:])),
					FirstOffset:      int64(binary.BigEndian.Uint64(b[10:])),
					LastOffset:       int64(binary.BigEndian.Uint64(b[18:])),
					LastStableOffset: int64(binary.BigEndian.Uint64(b[26:])),
				})
			}
			all, err := ix.AllAbortedTxns()
			if badVersion {
				requireCorruptOrNil(t, err)
				require.Error(t, err)
			} else {
				require.NoError(t, err)
				require.Equal(t, want, all)
			}

			got, complete, err := ix.CollectAbortedTxns(fetch, upper)
			if err != nil {
				require.True(t, badVersion)
				requireCorruptOrNil(t, err)
			} else {
				var ref []AbortedTxn
				refComplete := false
				for _, txn := range want {
					if txn.LastOffset >= fetch && txn.FirstOffset < upper {
						ref = append(ref, txn)
					}
					if txn.LastStableOffset >= upper {
						refComplete = true
						break
					}
				}
				require.Equal(t, ref, got)
				require.Equal(t, refComplete, complete)
				for _, txn := range got {
					require.True(t, slices.Contains(want, txn))
				}
			}

			if mode == ReadOnly {
				require.NoError(t, ix.Close())
				require.Equal(t, data, readFile(t, e, name))
				continue
			}
			require.Equal(t, data[:whole], readFile(t, e, name), "torn tail truncated")
			err = ix.TruncateTo(fetch)
			requireCorruptOrNil(t, err)
			if err := ix.Append(AbortedTxn{ProducerID: 1, FirstOffset: fetch, LastOffset: upper, LastStableOffset: upper + 1}); err != nil {
				require.ErrorIs(t, err, ErrInvalidOffset)
			}
			require.NoError(t, ix.Close())
			size := int64(len(readFile(t, e, name)))
			require.Zero(t, size%AbortedTxnBytes)
		}
	})
}

// requireKeptBelow checks, for entries in offset order, that TruncateTo(target)
// kept exactly the first kept: those whose offset is below target.
func requireKeptBelow[E any](t *testing.T, entries []E, kept int, target int64, offset func(E) int64) {
	t.Helper()
	if kept > 0 {
		require.Less(t, offset(entries[kept-1]), target)
	}
	if kept < len(entries) {
		require.GreaterOrEqual(t, offset(entries[kept]), target)
	}
}
