package index

import (
	"errors"
	"io/fs"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// createOffsetIndex creates an offset index with the given entries.
func createOffsetIndex(t testing.TB, e testFS, name string, base int64, maxBytes int, entries ...OffsetPosition) *OffsetIndex {
	t.Helper()
	ix, err := CreateOffsetIndex(e.fs, e.path(name), base, maxBytes)
	require.NoError(t, err)
	for _, en := range entries {
		require.NoError(t, ix.Append(en.Offset, en.Position))
	}
	return ix
}

// refOffsetLookup is the lookup rule, by linear scan.
func refOffsetLookup(base int64, entries []OffsetPosition, target int64) OffsetPosition {
	res := OffsetPosition{Offset: base}
	for _, e := range entries {
		if e.Offset <= target {
			res = e
		}
	}
	return res
}

func TestOffsetIndexCreate(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		tests := []struct {
			maxBytes   int
			wantSize   int64
			wantErr    error
			maxEntries int
		}{
			{maxBytes: DefaultMaxIndexBytes, wantSize: DefaultMaxIndexBytes, maxEntries: 1310720},
			{maxBytes: 67, wantSize: 64, maxEntries: 8},
			{maxBytes: 8, wantSize: 8, maxEntries: 1},
			{maxBytes: 7, wantErr: ErrInvalidSize},
			{maxBytes: -1, wantErr: ErrInvalidSize},
		}
		for i, tc := range tests {
			name := segmentName(int64(i), ".index")
			ix, err := CreateOffsetIndex(e.fs, e.path(name), int64(i), tc.maxBytes)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				continue
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantSize, fileSize(t, e, name), "preallocated size")
			assert.Equal(t, tc.wantSize, ix.SizeBytes())
			assert.Equal(t, tc.maxEntries, ix.MaxEntries())
			assert.Equal(t, 0, ix.Entries())
			assert.Equal(t, int64(i), ix.LastOffset())
			assert.Equal(t, e.mapped, ix.Mapped())
			assert.Equal(t, e.path(name), ix.Name())
			assert.Equal(t, int64(i), ix.BaseOffset())
			require.NoError(t, ix.Close())
			assert.Equal(t, int64(0), fileSize(t, e, name), "an empty index closes trimmed to nothing")
		}

		// Create fails on an existing file.
		_, err := CreateOffsetIndex(e.fs, e.path(segmentName(0, ".index")), 0, 64)
		require.ErrorIs(t, err, fs.ErrExist)
	})
}

func TestOffsetIndexAppendRules(t *testing.T) {
	const base = 1000
	tests := []struct {
		name    string
		before  []OffsetPosition
		offset  int64
		wantErr error
	}{
		{name: "first at base offset", offset: base},
		{name: "first above base", offset: base + 10},
		{name: "increasing", before: []OffsetPosition{{base + 10, 100}}, offset: base + 11},
		{name: "equal offset", before: []OffsetPosition{{base + 10, 100}}, offset: base + 10, wantErr: ErrInvalidOffset},
		{name: "smaller offset", before: []OffsetPosition{{base + 10, 100}}, offset: base + 9, wantErr: ErrInvalidOffset},
		{name: "below base on empty index", offset: base - 1, wantErr: ErrOffsetOverflow},
		{name: "largest relative offset", offset: base + math.MaxInt32},
		{name: "relative offset overflow", before: []OffsetPosition{{base + 10, 100}}, offset: base + math.MaxInt32 + 1, wantErr: ErrOffsetOverflow},
		{name: "full", before: []OffsetPosition{{base + 1, 1}, {base + 2, 2}, {base + 3, 3}, {base + 4, 4}}, offset: base + 5, wantErr: ErrIndexFull},
	}
	forEachFS(t, func(t *testing.T, e testFS) {
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				name := segmentName(int64(i), ".index")
				ix := createOffsetIndex(t, e, name, base, 4*OffsetIndexEntryBytes, tc.before...)
				defer func() { require.NoError(t, ix.Close()) }()
				assert.Equal(t, len(tc.before) == 4, ix.IsFull())
				err := ix.Append(tc.offset, 4242)
				if tc.wantErr != nil {
					require.ErrorIs(t, err, tc.wantErr)
					assert.Equal(t, len(tc.before), ix.Entries(), "a rejected append adds nothing")
					if errors.Is(err, ErrOffsetOverflow) {
						var oe *OffsetOverflowError
						require.ErrorAs(t, err, &oe)
						assert.Equal(t, ix.Name(), oe.File)
					}
					// A rejected append is not a write failure: the index
					// still takes a valid entry if it has room.
					if !ix.IsFull() {
						require.NoError(t, ix.Append(base+math.MaxInt32, 1))
					}
					return
				}
				require.NoError(t, err)
				assert.Equal(t, tc.offset, ix.LastOffset())
				got, err := ix.Entry(len(tc.before))
				require.NoError(t, err)
				assert.Equal(t, OffsetPosition{tc.offset, 4242}, got)
			})
		}
	})
}

func TestOffsetIndexLookup(t *testing.T) {
	const base = 100
	entries := []OffsetPosition{{110, 1000}, {120, 2000}, {130, 3000}}
	tests := []struct {
		name    string
		entries []OffsetPosition
		target  int64
		want    OffsetPosition
	}{
		{name: "empty", target: 150, want: OffsetPosition{base, 0}},
		{name: "empty below base", target: 5, want: OffsetPosition{base, 0}},
		{name: "below base", entries: entries, target: 99, want: OffsetPosition{base, 0}},
		{name: "below first", entries: entries, target: 109, want: OffsetPosition{base, 0}},
		{name: "exact first", entries: entries, target: 110, want: entries[0]},
		{name: "between", entries: entries, target: 115, want: entries[0]},
		{name: "exact middle", entries: entries, target: 120, want: entries[1]},
		{name: "exact last", entries: entries, target: 130, want: entries[2]},
		{name: "beyond last", entries: entries, target: 1 << 40, want: entries[2]},
		{name: "max int64", entries: entries, target: math.MaxInt64, want: entries[2]},
		{name: "min int64", entries: entries, target: math.MinInt64, want: OffsetPosition{base, 0}},
	}
	forEachFS(t, func(t *testing.T, e testFS) {
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				ix := createOffsetIndex(t, e, segmentName(int64(i), ".index"), base, 1024, tc.entries...)
				defer func() { require.NoError(t, ix.Close()) }()
				got, err := ix.Lookup(tc.target)
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
			})
		}
	})
}

// TestOffsetIndexLookupWarmAndCold sweeps targets over an index much larger
// than the warm section, so that lookups take both of Kafka's paths and
// cross the boundary between them, and compares with a linear scan.
func TestOffsetIndexLookupWarmAndCold(t *testing.T) {
	const base = 5000
	warm := warmSectionBytes / OffsetIndexEntryBytes
	for _, n := range []int{1, 2, warm, warm + 1, warm + 2, 3*warm + 7} {
		entries := make([]OffsetPosition, n)
		for i := range entries {
			entries[i] = OffsetPosition{Offset: base + 3 + int64(i)*10, Position: Position(i * 4096)}
		}
		forEachFS(t, func(t *testing.T, e testFS) {
			ix := createOffsetIndex(t, e, "warm.index", base, (n+1)*OffsetIndexEntryBytes, entries...)
			defer func() { require.NoError(t, ix.Close()) }()
			last := entries[n-1].Offset
			for target := int64(base - 2); target <= last+12; target++ {
				got, err := ix.Lookup(target)
				require.NoError(t, err)
				require.Equal(t, refOffsetLookup(base, entries, target), got, "target %d of %d entries", target, n)
			}
			all, err := ix.AppendEntries(nil)
			require.NoError(t, err)
			require.Equal(t, entries, all)
		})
	}
}

// refFetchUpperBound is Kafka's fetchUpperBoundOffset, by linear scan: the
// first entry whose position is ≥ target.
func refFetchUpperBound(entries []OffsetPosition, target int64) (OffsetPosition, bool) {
	for _, e := range entries {
		if int64(e.Position) >= target {
			return e, true
		}
	}
	return OffsetPosition{}, false
}

func TestOffsetIndexFetchUpperBoundOffset(t *testing.T) {
	const base = 0
	warm := warmSectionBytes / OffsetIndexEntryBytes
	for _, n := range []int{0, 1, 3, warm + 1, 2*warm + 3} {
		entries := make([]OffsetPosition, n)
		for i := range entries {
			entries[i] = OffsetPosition{Offset: int64(i)*5 + 4, Position: Position(i*100 + 100)}
		}
		forEachFS(t, func(t *testing.T, e testFS) {
			ix := createOffsetIndex(t, e, "ub.index", base, (n+1)*OffsetIndexEntryBytes, entries...)
			defer func() { require.NoError(t, ix.Close()) }()
			for target := int64(-5); target <= int64(n*100+205); target += 7 {
				for _, start := range []OffsetPosition{{Offset: base, Position: 0}, {Offset: 9, Position: 50}} {
					size := int(target - int64(start.Position))
					got, ok, err := ix.FetchUpperBoundOffset(start, size)
					require.NoError(t, err)
					want, wantOK := refFetchUpperBound(entries, target)
					require.Equal(t, wantOK, ok, "target %d of %d entries", target, n)
					require.Equal(t, want, got, "target %d of %d entries", target, n)
				}
			}
			// Position + size does not overflow.
			_, ok, err := ix.FetchUpperBoundOffset(OffsetPosition{Position: math.MaxInt32}, math.MaxInt)
			require.NoError(t, err)
			require.False(t, ok)
		})
	}
}

func TestOffsetIndexEntry(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		ix := createOffsetIndex(t, e, "e.index", 0, 64, OffsetPosition{5, 50}, OffsetPosition{9, 90})
		defer func() { require.NoError(t, ix.Close()) }()
		for n, want := range []OffsetPosition{{5, 50}, {9, 90}} {
			got, err := ix.Entry(n)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		}
		for _, n := range []int{-1, 2, 8, math.MaxInt} {
			_, err := ix.Entry(n)
			assert.ErrorIs(t, err, ErrEntryOutOfRange, "entry %d", n)
		}
	})
}

func TestOffsetIndexTruncateTo(t *testing.T) {
	const base = 100
	entries := []OffsetPosition{{110, 1}, {120, 2}, {130, 3}, {140, 4}}
	tests := []struct {
		name   string
		offset int64
		keep   int
	}{
		{name: "exact entry", offset: 130, keep: 2},
		{name: "between entries", offset: 125, keep: 2},
		{name: "above last", offset: 200, keep: 4},
		{name: "just above last", offset: 141, keep: 4},
		{name: "exact last", offset: 140, keep: 3},
		{name: "exact first", offset: 110, keep: 0},
		{name: "below first", offset: 105, keep: 0},
		{name: "below base", offset: 0, keep: 0},
	}
	forEachFS(t, func(t *testing.T, e testFS) {
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				name := segmentName(int64(i), ".index")
				ix := createOffsetIndex(t, e, name, base, 64, entries...)
				require.NoError(t, ix.TruncateTo(tc.offset))
				assert.Equal(t, tc.keep, ix.Entries())
				wantLast := int64(base)
				if tc.keep > 0 {
					wantLast = entries[tc.keep-1].Offset
				}
				assert.Equal(t, wantLast, ix.LastOffset())
				// The index takes appends above the new last offset.
				require.NoError(t, ix.Append(wantLast+1, 99))
				require.NoError(t, ix.Flush())
				// The slots truncated away were zeroed (minus the one just
				// appended), so the zero-tail count of a reopen finds the
				// same entries.
				raw := readFile(t, e, name)
				assert.Equal(t, make([]byte, 64-(tc.keep+1)*OffsetIndexEntryBytes), raw[(tc.keep+1)*OffsetIndexEntryBytes:])
				require.NoError(t, ix.TruncateToEntries(tc.keep))
				require.NoError(t, ix.Close())
				assert.Equal(t, specOffsetEntries(base, entries[:tc.keep]...), readFile(t, e, name))
			})
		}
	})
}

func TestOffsetIndexReopen(t *testing.T) {
	const base = 1 << 33
	entries := []OffsetPosition{{base + 7, 4100}, {base + 19, 8300}, {base + 40, 12500}}
	forEachFS(t, func(t *testing.T, e testFS) {
		t.Run("trimmed", func(t *testing.T) {
			ix := createOffsetIndex(t, e, "trim.index", base, DefaultMaxIndexBytes, entries...)
			require.NoError(t, ix.Close())
			require.Equal(t, specOffsetEntries(base, entries...), readFile(t, e, "trim.index"))

			for _, mode := range []Mode{ReadOnly, ReadWrite} {
				ix, err := OpenOffsetIndex(e.fs, e.path("trim.index"), base, DefaultMaxIndexBytes, mode)
				require.NoError(t, err)
				require.NoError(t, ix.SanityCheck())
				assert.Equal(t, len(entries), ix.Entries(), mode)
				assert.Equal(t, len(entries), ix.MaxEntries(), mode)
				assert.True(t, ix.IsFull(), "a trimmed index is full until resized")
				assert.Equal(t, entries[2].Offset, ix.LastOffset())
				assert.Equal(t, e.mapped, ix.Mapped())
				got, err := ix.Lookup(base + 20)
				require.NoError(t, err)
				assert.Equal(t, entries[1], got)
				require.NoError(t, ix.Close())
			}

			// The active segment's index is re-expanded and appended to.
			ix, err := OpenOffsetIndex(e.fs, e.path("trim.index"), base, DefaultMaxIndexBytes, ReadWrite)
			require.NoError(t, err)
			changed, err := ix.Resize(DefaultMaxIndexBytes)
			require.NoError(t, err)
			assert.True(t, changed)
			changed, err = ix.Resize(DefaultMaxIndexBytes + 3)
			require.NoError(t, err)
			assert.False(t, changed, "rounds down to the same size")
			assert.False(t, ix.IsFull())
			require.NoError(t, ix.Append(base+50, 16600))
			require.NoError(t, ix.Close())
			assert.Equal(t, specOffsetEntries(base, append(entries, OffsetPosition{base + 50, 16600})...), readFile(t, e, "trim.index"))
		})

		t.Run("untrimmed", func(t *testing.T) {
			// An active index as a crash leaves it: entries, then the zeros
			// of the preallocation.
			raw := append(specOffsetEntries(base, entries...), make([]byte, 1000*OffsetIndexEntryBytes)...)
			writeFile(t, e, "crash.index", raw)

			ix, err := OpenOffsetIndex(e.fs, e.path("crash.index"), base, DefaultMaxIndexBytes, ReadWrite)
			require.NoError(t, err)
			require.NoError(t, ix.SanityCheck())
			assert.Equal(t, len(entries), ix.Entries(), "entries recovered up to the last non-zero slot")
			assert.Equal(t, 1003, ix.MaxEntries())
			assert.Equal(t, entries[2].Offset, ix.LastOffset())
			require.NoError(t, ix.Append(base+41, 13000))
			require.NoError(t, ix.Close())
			assert.Equal(t, specOffsetEntries(base, append(entries, OffsetPosition{base + 41, 13000})...), readFile(t, e, "crash.index"))

			// Kafka counts every slot of a file it opens; so does ReadOnly.
			writeFile(t, e, "inactive.index", raw)
			ix, err = OpenOffsetIndex(e.fs, e.path("inactive.index"), base, DefaultMaxIndexBytes, ReadOnly)
			require.NoError(t, err)
			assert.Equal(t, 1003, ix.Entries())
			assert.Equal(t, int64(base), ix.LastOffset(), "the last slot is zero: (base, 0)")
			require.NoError(t, ix.Close())
		})

		t.Run("zero entry first", func(t *testing.T) {
			// (base, 0) as the first entry is all zeros; it is kept when a
			// later entry follows.
			raw := append(specOffsetEntries(base, OffsetPosition{base, 0}, OffsetPosition{base + 1, 70}), make([]byte, 16)...)
			writeFile(t, e, "zero.index", raw)
			ix, err := OpenOffsetIndex(e.fs, e.path("zero.index"), base, 64, ReadWrite)
			require.NoError(t, err)
			assert.Equal(t, 2, ix.Entries())
			require.NoError(t, ix.Close())
		})

		t.Run("empty file", func(t *testing.T) {
			writeFile(t, e, "empty.index", nil)
			for _, mode := range []Mode{ReadOnly, ReadWrite} {
				ix, err := OpenOffsetIndex(e.fs, e.path("empty.index"), base, 64, mode)
				require.NoError(t, err)
				require.NoError(t, ix.SanityCheck())
				assert.Equal(t, 0, ix.Entries())
				assert.False(t, ix.Mapped(), "nothing to map")
				got, err := ix.Lookup(base + 5)
				require.NoError(t, err)
				assert.Equal(t, OffsetPosition{base, 0}, got)
				require.NoError(t, ix.Close())
			}
		})

		t.Run("missing file", func(t *testing.T) {
			_, err := OpenOffsetIndex(e.fs, e.path("missing.index"), base, 64, ReadOnly)
			require.ErrorIs(t, err, fs.ErrNotExist)
			_, err = OpenOffsetIndex(e.fs, e.path("missing.index"), base, 64, Mode(9))
			require.Error(t, err)
		})
	})
}

func TestOffsetIndexResizeAndReset(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		ix := createOffsetIndex(t, e, "r.index", 0, 80, OffsetPosition{1, 1}, OffsetPosition{2, 2}, OffsetPosition{3, 3})
		defer func() { require.NoError(t, ix.Close()) }()

		_, err := ix.Resize(16)
		require.ErrorIs(t, err, ErrInvalidSize, "below the bytes in use")
		_, err = ix.Resize(-8)
		require.ErrorIs(t, err, ErrInvalidSize)
		_, err = ix.Resize(math.MaxInt32 + 8)
		require.ErrorIs(t, err, ErrInvalidSize)

		require.NoError(t, ix.TrimToValidSize())
		assert.Equal(t, int64(24), fileSize(t, e, "r.index"))
		assert.True(t, ix.IsFull())
		require.ErrorIs(t, ix.Append(4, 4), ErrIndexFull)

		changed, err := ix.Resize(41)
		require.NoError(t, err)
		assert.True(t, changed)
		assert.Equal(t, int64(40), fileSize(t, e, "r.index"))
		assert.Equal(t, 5, ix.MaxEntries())
		require.NoError(t, ix.Append(4, 4))
		got, err := ix.Lookup(100)
		require.NoError(t, err)
		assert.Equal(t, OffsetPosition{4, 4}, got)

		require.NoError(t, ix.Reset())
		assert.Equal(t, 0, ix.Entries())
		assert.Equal(t, int64(80), fileSize(t, e, "r.index"), "reset returns to maxIndexBytes")
		assert.Equal(t, make([]byte, 80), readFile(t, e, "r.index"), "and zeroes the entries")
		require.NoError(t, ix.Append(0, 0))
	})
}

func TestOffsetIndexSanityCheck(t *testing.T) {
	const base = 500
	tests := []struct {
		name    string
		raw     []byte
		mode    Mode
		corrupt bool
	}{
		{name: "empty", raw: nil},
		{name: "valid", raw: specOffsetEntries(base, OffsetPosition{base + 1, 10}, OffsetPosition{base + 2, 20})},
		{name: "last offset at base", raw: specOffsetEntries(base, OffsetPosition{base, 0})},
		{name: "size not a multiple of 8", raw: append(specOffsetEntries(base, OffsetPosition{base + 1, 10}), 1, 2, 3), corrupt: true},
		{name: "size not a multiple of 8, short", raw: []byte{1, 2, 3}, corrupt: true},
		{name: "size not a multiple of 8, read-write", raw: append(specOffsetEntries(base, OffsetPosition{base + 1, 10}), 1, 2, 3), mode: ReadWrite, corrupt: true},
		{name: "last offset below base", raw: []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1}, corrupt: true},
		{name: "last offset below base, read-write", raw: []byte{0, 0, 0, 3, 0, 0, 0, 1, 0x80, 0, 0, 0, 0, 0, 0, 0}, mode: ReadWrite, corrupt: true},
		// Kafka checks only the last entry, not the order.
		{name: "out of order but last ok", raw: specOffsetEntries(base, OffsetPosition{base + 9, 10}, OffsetPosition{base + 2, 20})},
	}
	forEachFS(t, func(t *testing.T, e testFS) {
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				name := segmentName(int64(i), ".index")
				writeFile(t, e, name, tc.raw)
				ix, err := OpenOffsetIndex(e.fs, e.path(name), base, 1024, tc.mode)
				require.NoError(t, err)
				defer func() { require.NoError(t, ix.Close()) }()
				err = ix.SanityCheck()
				if !tc.corrupt {
					require.NoError(t, err)
					return
				}
				require.ErrorIs(t, err, ErrCorruptIndex)
				var ce *CorruptIndexError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, e.path(name), ce.File)
				assert.NotEmpty(t, ce.Reason)
			})
		}
	})
}

func TestOffsetIndexModesAndClose(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		ix := createOffsetIndex(t, e, "m.index", 0, 64, OffsetPosition{3, 30})
		require.NoError(t, ix.Close())

		ro, err := OpenOffsetIndex(e.fs, e.path("m.index"), 0, 64, ReadOnly)
		require.NoError(t, err)
		require.ErrorIs(t, ro.Append(4, 40), ErrReadOnly)
		require.ErrorIs(t, ro.TruncateTo(0), ErrReadOnly)
		require.ErrorIs(t, ro.TruncateToEntries(0), ErrReadOnly)
		require.ErrorIs(t, ro.Reset(), ErrReadOnly)
		_, err = ro.Resize(64)
		require.ErrorIs(t, err, ErrReadOnly)
		require.NoError(t, ro.TrimToValidSize(), "nothing to trim")
		require.NoError(t, ro.Flush(), "nothing to flush")
		require.NoError(t, ro.Close())
		require.NoError(t, ro.Close(), "a second Close is nil")

		for _, err := range []error{
			ro.Append(4, 40), ro.TruncateTo(0), ro.TruncateToEntries(0), ro.Reset(),
			ro.TrimToValidSize(), ro.Flush(), ro.SanityCheck(),
		} {
			require.ErrorIs(t, err, ErrClosed)
		}
		_, err = ro.Lookup(3)
		require.ErrorIs(t, err, ErrClosed)
		_, err = ro.Entry(0)
		require.ErrorIs(t, err, ErrClosed)
		_, err = ro.AppendEntries(nil)
		require.ErrorIs(t, err, ErrClosed)
		_, err = ro.Resize(8)
		require.ErrorIs(t, err, ErrClosed)

		// A read-only index with bytes past its last whole entry cannot be
		// trimmed.
		writeFile(t, e, "odd.index", make([]byte, 13))
		odd, err := OpenOffsetIndex(e.fs, e.path("odd.index"), 0, 64, ReadOnly)
		require.NoError(t, err)
		require.ErrorIs(t, odd.TrimToValidSize(), ErrReadOnly)
		require.NoError(t, odd.Close())
	})
}
