package index

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// createTimeIndex creates a time index with the given entries, appended
// with the full check.
func createTimeIndex(t testing.TB, e testFS, name string, base int64, maxBytes int, entries ...TimestampOffset) *TimeIndex {
	t.Helper()
	ix, err := CreateTimeIndex(e.fs, e.path(name), base, maxBytes)
	require.NoError(t, err)
	for _, en := range entries {
		require.NoError(t, ix.MaybeAppend(en.Timestamp, en.Offset, false))
	}
	return ix
}

// refTimeLookup is the lookup rule, by linear scan.
func refTimeLookup(base int64, entries []TimestampOffset, target int64) TimestampOffset {
	res := TimestampOffset{Timestamp: NoTimestamp, Offset: base}
	for _, e := range entries {
		if e.Timestamp <= target {
			res = e
		}
	}
	return res
}

func TestTimeIndexCreate(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		ix, err := CreateTimeIndex(e.fs, e.path("t.timeindex"), 7, DefaultMaxIndexBytes)
		require.NoError(t, err)
		assert.Equal(t, int64(10485756), fileSize(t, e, "t.timeindex"), "roundDown(10 MiB, 12)")
		assert.Equal(t, 873813, ix.MaxEntries())
		assert.Equal(t, TimestampOffset{NoTimestamp, 7}, ix.LastEntry())
		assert.Equal(t, e.mapped, ix.Mapped())
		assert.Equal(t, int64(7), ix.BaseOffset())
		assert.Equal(t, e.path("t.timeindex"), ix.Name())
		assert.Equal(t, int64(10485756), ix.SizeBytes())
		assert.True(t, ix.CanAppendOffset(7+math.MaxInt32))
		assert.False(t, ix.CanAppendOffset(6))
		require.NoError(t, ix.Close())

		_, err = CreateTimeIndex(e.fs, e.path("small.timeindex"), 0, 11)
		require.ErrorIs(t, err, ErrInvalidSize)
	})
}

func TestTimeIndexMaybeAppendRules(t *testing.T) {
	const base = 1000
	first := TimestampOffset{Timestamp: 5000, Offset: base + 10}
	tests := []struct {
		name      string
		before    []TimestampOffset
		ts, off   int64
		skipFull  bool
		wantErr   error
		wantAdded bool
	}{
		{name: "no timestamp on empty index", ts: NoTimestamp, off: base + 1},
		{name: "below no timestamp on empty index", ts: -5, off: base + 1},
		{name: "first", ts: 0, off: base, wantAdded: true},
		{name: "larger timestamp", before: []TimestampOffset{first}, ts: 5001, off: base + 11, wantAdded: true},
		{name: "larger timestamp same offset", before: []TimestampOffset{first}, ts: 5001, off: base + 10, wantAdded: true},
		{name: "equal timestamp skipped", before: []TimestampOffset{first}, ts: 5000, off: base + 20},
		{name: "equal entry skipped", before: []TimestampOffset{first}, ts: 5000, off: base + 10},
		{name: "smaller timestamp", before: []TimestampOffset{first}, ts: 4999, off: base + 20, wantErr: ErrInvalidTimestamp},
		{name: "smaller offset", before: []TimestampOffset{first}, ts: 6000, off: base + 9, wantErr: ErrInvalidOffset},
		{name: "smaller offset equal timestamp", before: []TimestampOffset{first}, ts: 5000, off: base + 9, wantErr: ErrInvalidOffset},
		{name: "offset below base on empty index", ts: 10, off: base - 1, wantErr: ErrOffsetOverflow},
		{name: "relative offset overflow", before: []TimestampOffset{first}, ts: 6000, off: base + math.MaxInt32 + 1, wantErr: ErrOffsetOverflow},
		// maxEntries is 4: IsFull at 3 entries, the 4th slot is the roll
		// entry's.
		{name: "full", before: []TimestampOffset{{1, base + 1}, {2, base + 2}, {3, base + 3}}, ts: 4, off: base + 4, wantErr: ErrIndexFull},
		{name: "full equal timestamp", before: []TimestampOffset{{1, base + 1}, {2, base + 2}, {3, base + 3}}, ts: 3, off: base + 4, wantErr: ErrIndexFull},
		{name: "reserved slot", before: []TimestampOffset{{1, base + 1}, {2, base + 2}, {3, base + 3}}, ts: 4, off: base + 4, skipFull: true, wantAdded: true},
		{name: "reserved slot skipped", before: []TimestampOffset{{1, base + 1}, {2, base + 2}, {3, base + 3}}, ts: 3, off: base + 3, skipFull: true},
	}
	forEachFS(t, func(t *testing.T, e testFS) {
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				ix := createTimeIndex(t, e, segmentName(int64(i), ".timeindex"), base, 4*TimeIndexEntryBytes, tc.before...)
				defer func() { require.NoError(t, ix.Close()) }()
				assert.Equal(t, len(tc.before) == 3, ix.IsFull())
				lastBefore := ix.LastEntry()
				err := ix.MaybeAppend(tc.ts, tc.off, tc.skipFull)
				if tc.wantErr != nil {
					require.ErrorIs(t, err, tc.wantErr)
					assert.Equal(t, len(tc.before), ix.Entries())
					assert.Equal(t, lastBefore, ix.LastEntry())
					return
				}
				require.NoError(t, err)
				if !tc.wantAdded {
					assert.Equal(t, len(tc.before), ix.Entries(), "skipped")
					assert.Equal(t, lastBefore, ix.LastEntry())
					return
				}
				assert.Equal(t, len(tc.before)+1, ix.Entries())
				assert.Equal(t, TimestampOffset{tc.ts, tc.off}, ix.LastEntry())
				got, err := ix.Entry(len(tc.before))
				require.NoError(t, err)
				assert.Equal(t, TimestampOffset{tc.ts, tc.off}, got)
			})
		}
	})
}

func TestTimeIndexReservedSlotFull(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		ix := createTimeIndex(t, e, "full.timeindex", 0, 2*TimeIndexEntryBytes, TimestampOffset{10, 1})
		defer func() { require.NoError(t, ix.Close()) }()
		assert.True(t, ix.IsFull())
		require.NoError(t, ix.MaybeAppend(20, 2, true), "the reserved slot")
		require.ErrorIs(t, ix.MaybeAppend(30, 3, true), ErrIndexFull, "no slot at all")
		require.NoError(t, ix.MaybeAppend(20, 3, true), "an equal timestamp needs no slot")
	})
}

func TestTimeIndexLookup(t *testing.T) {
	const base = 100
	entries := []TimestampOffset{{1000, 110}, {2000, 120}, {3000, 120}, {4000, 135}}
	none := TimestampOffset{NoTimestamp, base}
	tests := []struct {
		name    string
		entries []TimestampOffset
		target  int64
		want    TimestampOffset
	}{
		{name: "empty", target: 1500, want: none},
		{name: "empty no timestamp", target: NoTimestamp, want: none},
		{name: "below first", entries: entries, target: 999, want: none},
		{name: "negative", entries: entries, target: -100, want: none},
		{name: "exact first", entries: entries, target: 1000, want: entries[0]},
		{name: "between", entries: entries, target: 2999, want: entries[1]},
		{name: "exact with repeated offset", entries: entries, target: 3000, want: entries[2]},
		{name: "exact last", entries: entries, target: 4000, want: entries[3]},
		{name: "beyond last", entries: entries, target: math.MaxInt64, want: entries[3]},
		{name: "min int64", entries: entries, target: math.MinInt64, want: none},
	}
	forEachFS(t, func(t *testing.T, e testFS) {
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				ix := createTimeIndex(t, e, segmentName(int64(i), ".timeindex"), base, 1200, tc.entries...)
				defer func() { require.NoError(t, ix.Close()) }()
				got, err := ix.Lookup(tc.target)
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
			})
		}
	})
}

func TestTimeIndexLookupWarmAndCold(t *testing.T) {
	const base = 77
	warm := warmSectionBytes / TimeIndexEntryBytes
	for _, n := range []int{1, warm, warm + 1, warm + 2, 2*warm + 5} {
		entries := make([]TimestampOffset, n)
		for i := range entries {
			entries[i] = TimestampOffset{Timestamp: 1_700_000_000_000 + int64(i)*4, Offset: base + int64(i)*3}
		}
		forEachFS(t, func(t *testing.T, e testFS) {
			ix := createTimeIndex(t, e, "warm.timeindex", base, (n+2)*TimeIndexEntryBytes, entries...)
			defer func() { require.NoError(t, ix.Close()) }()
			for target := entries[0].Timestamp - 3; target <= entries[n-1].Timestamp+5; target++ {
				got, err := ix.Lookup(target)
				require.NoError(t, err)
				require.Equal(t, refTimeLookup(base, entries, target), got, "target %d of %d entries", target, n)
			}
			all, err := ix.AppendEntries(nil)
			require.NoError(t, err)
			require.Equal(t, entries, all)
		})
	}
}

func TestTimeIndexTruncateTo(t *testing.T) {
	const base = 100
	entries := []TimestampOffset{{10, 110}, {20, 120}, {30, 120}, {40, 140}}
	tests := []struct {
		name   string
		offset int64
		keep   int
	}{
		{name: "repeated offset", offset: 120, keep: 1},
		{name: "just above repeated offset", offset: 121, keep: 3},
		{name: "exact last", offset: 140, keep: 3},
		{name: "above last", offset: 1000, keep: 4},
		{name: "exact first", offset: 110, keep: 0},
		{name: "below base", offset: -1, keep: 0},
	}
	forEachFS(t, func(t *testing.T, e testFS) {
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				name := segmentName(int64(i), ".timeindex")
				ix := createTimeIndex(t, e, name, base, 120, entries...)
				require.NoError(t, ix.TruncateTo(tc.offset))
				assert.Equal(t, tc.keep, ix.Entries())
				want := TimestampOffset{NoTimestamp, base}
				if tc.keep > 0 {
					want = entries[tc.keep-1]
				}
				assert.Equal(t, want, ix.LastEntry())
				require.NoError(t, ix.Close())
				assert.Equal(t, specTimeEntries(base, entries[:tc.keep]...), readFile(t, e, name))
			})
		}
	})
}

func TestTimeIndexReopen(t *testing.T) {
	const base = 9_000_000_000
	entries := []TimestampOffset{{1_700_000_000_000, base + 4}, {1_700_000_000_500, base + 9}, {1_700_000_001_000, base + 9}}
	forEachFS(t, func(t *testing.T, e testFS) {
		t.Run("trimmed", func(t *testing.T) {
			ix := createTimeIndex(t, e, "trim.timeindex", base, DefaultMaxIndexBytes, entries[:2]...)
			// Roll: the segment's max timestamp takes the reserved slot.
			require.NoError(t, ix.MaybeAppend(entries[2].Timestamp, entries[2].Offset, true))
			require.NoError(t, ix.Close())
			require.Equal(t, specTimeEntries(base, entries...), readFile(t, e, "trim.timeindex"))
			for _, mode := range []Mode{ReadOnly, ReadWrite} {
				ix, err := OpenTimeIndex(e.fs, e.path("trim.timeindex"), base, DefaultMaxIndexBytes, mode)
				require.NoError(t, err)
				require.NoError(t, ix.SanityCheck())
				assert.Equal(t, 3, ix.Entries())
				assert.True(t, ix.IsFull())
				assert.Equal(t, entries[2], ix.LastEntry())
				assert.Equal(t, e.mapped, ix.Mapped())
				got, err := ix.Lookup(1_700_000_000_999)
				require.NoError(t, err)
				assert.Equal(t, entries[1], got)
				require.NoError(t, ix.Close())
			}
		})
		t.Run("untrimmed", func(t *testing.T) {
			raw := append(specTimeEntries(base, entries...), make([]byte, 50*TimeIndexEntryBytes)...)
			writeFile(t, e, "crash.timeindex", raw)
			ix, err := OpenTimeIndex(e.fs, e.path("crash.timeindex"), base, DefaultMaxIndexBytes, ReadWrite)
			require.NoError(t, err)
			require.NoError(t, ix.SanityCheck())
			assert.Equal(t, 3, ix.Entries())
			assert.Equal(t, 53, ix.MaxEntries())
			assert.Equal(t, entries[2], ix.LastEntry())
			require.NoError(t, ix.MaybeAppend(1_700_000_002_000, base+20, false))
			require.NoError(t, ix.Close())
			assert.Equal(t, specTimeEntries(base, append(entries, TimestampOffset{1_700_000_002_000, base + 20})...), readFile(t, e, "crash.timeindex"))

			// Kafka's count on the same file: every slot; the zero last
			// entry fails Kafka's sanity check (timestamp 0 < first).
			writeFile(t, e, "inactive.timeindex", raw)
			ix, err = OpenTimeIndex(e.fs, e.path("inactive.timeindex"), base, DefaultMaxIndexBytes, ReadOnly)
			require.NoError(t, err)
			assert.Equal(t, 53, ix.Entries())
			require.ErrorIs(t, ix.SanityCheck(), ErrCorruptIndex)
			require.NoError(t, ix.Close())
		})
	})
}

func TestTimeIndexSanityCheck(t *testing.T) {
	const base = 500
	tests := []struct {
		name    string
		raw     []byte
		corrupt bool
	}{
		{name: "empty", raw: nil},
		{name: "valid", raw: specTimeEntries(base, TimestampOffset{10, base + 1}, TimestampOffset{20, base + 1})},
		{name: "size not a multiple of 12", raw: append(specTimeEntries(base, TimestampOffset{10, base + 1}), 0, 0, 0, 0), corrupt: true},
		{name: "last timestamp below first", raw: specTimeEntries(base, TimestampOffset{30, base + 1}, TimestampOffset{20, base + 2}), corrupt: true},
		{name: "last offset below base", raw: specTimeEntries(base, TimestampOffset{30, base + 1}, TimestampOffset{40, base - 1}), corrupt: true},
		{name: "one entry below base", raw: specTimeEntries(base, TimestampOffset{30, base - 100}), corrupt: true},
	}
	forEachFS(t, func(t *testing.T, e testFS) {
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				for _, mode := range []Mode{ReadOnly, ReadWrite} {
					// A ReadWrite Close trims, so each mode gets its own file.
					name := segmentName(int64(i), ".timeindex."+mode.String())
					writeFile(t, e, name, tc.raw)
					ix, err := OpenTimeIndex(e.fs, e.path(name), base, 1200, mode)
					require.NoError(t, err)
					err = ix.SanityCheck()
					require.NoError(t, ix.Close())
					if !tc.corrupt {
						require.NoError(t, err, mode)
						continue
					}
					var ce *CorruptIndexError
					require.ErrorAs(t, err, &ce, mode)
					assert.Equal(t, e.path(name), ce.File)
				}
			})
		}
	})
}

func TestTimeIndexResetResizeModes(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		ix := createTimeIndex(t, e, "r.timeindex", 0, 60, TimestampOffset{1, 1}, TimestampOffset{2, 2})
		require.NoError(t, ix.TrimToValidSize())
		assert.Equal(t, int64(24), fileSize(t, e, "r.timeindex"))
		assert.True(t, ix.IsFull())
		changed, err := ix.Resize(60)
		require.NoError(t, err)
		assert.True(t, changed)
		assert.Equal(t, TimestampOffset{2, 2}, ix.LastEntry())
		_, err = ix.Resize(12)
		require.ErrorIs(t, err, ErrInvalidSize)
		require.NoError(t, ix.TruncateToEntries(1))
		assert.Equal(t, TimestampOffset{1, 1}, ix.LastEntry())
		require.NoError(t, ix.Reset())
		assert.Equal(t, 0, ix.Entries())
		assert.Equal(t, TimestampOffset{NoTimestamp, 0}, ix.LastEntry())
		assert.Equal(t, make([]byte, 60), readFile(t, e, "r.timeindex"))
		require.NoError(t, ix.MaybeAppend(5, 5, false))
		require.NoError(t, ix.Flush())
		require.NoError(t, ix.Close())
		require.NoError(t, ix.Close())

		ro, err := OpenTimeIndex(e.fs, e.path("r.timeindex"), 0, 60, ReadOnly)
		require.NoError(t, err)
		require.ErrorIs(t, ro.MaybeAppend(6, 6, false), ErrReadOnly)
		require.ErrorIs(t, ro.TruncateTo(0), ErrReadOnly)
		require.ErrorIs(t, ro.TruncateToEntries(0), ErrReadOnly)
		require.ErrorIs(t, ro.Reset(), ErrReadOnly)
		_, err = ro.Resize(60)
		require.ErrorIs(t, err, ErrReadOnly)
		require.NoError(t, ro.Flush())
		require.NoError(t, ro.TrimToValidSize())
		_, err = ro.Entry(1)
		require.ErrorIs(t, err, ErrEntryOutOfRange)
		require.NoError(t, ro.Close())
		_, err = ro.Lookup(5)
		require.ErrorIs(t, err, ErrClosed)
		_, err = ro.Entry(0)
		require.ErrorIs(t, err, ErrClosed)
		_, err = ro.AppendEntries(nil)
		require.ErrorIs(t, err, ErrClosed)
		require.ErrorIs(t, ro.SanityCheck(), ErrClosed)
		require.ErrorIs(t, ro.MaybeAppend(6, 6, false), ErrClosed)
	})
}
