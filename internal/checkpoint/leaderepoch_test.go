package checkpoint

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLeaderEpochs(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []EpochEntry
		err  bool
		line int
	}{
		{name: "canonical", in: "0\n3\n0 0\n2 1200\n5 4711\n", want: []EpochEntry{{0, 0}, {2, 1200}, {5, 4711}}},
		{name: "empty", in: ""},
		{name: "version only", in: "0\n"},
		{name: "crlf and trailing spaces", in: "0\r\n1\r\n3 10  \r\n", want: []EpochEntry{{3, 10}}},
		{name: "file order kept", in: "0\n2\n5 10\n3 20\n", want: []EpochEntry{{5, 10}, {3, 20}}},
		{name: "wrong version", in: "1\n0\n", err: true, line: 1},
		{name: "count mismatch", in: "0\n2\n0 0\n", err: true, line: 2},
		{name: "three fields", in: "0\n1\n0 0 0\n", err: true, line: 3},
		{name: "negative epoch", in: "0\n1\n-1 0\n", err: true, line: 3},
		{name: "negative offset", in: "0\n1\n0 -5\n", err: true, line: 3},
		{name: "epoch over int32", in: "0\n1\n2147483648 0\n", err: true, line: 3},
		{name: "offset not a number", in: "0\n1\n0 x\n", err: true, line: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseLeaderEpochs("f", []byte(tc.in))
			if tc.err {
				requireCorrupt(t, err, "f", tc.line)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestLeaderEpochsReadWrite(t *testing.T) {
	for _, e := range filesystems(t) {
		t.Run(e.name, func(t *testing.T) {
			name := e.path(LeaderEpochFile)
			got, err := ReadLeaderEpochs(e.fs, name)
			require.NoError(t, err, "missing file")
			assert.Empty(t, got)

			entries := []EpochEntry{{0, 0}, {2, 1200}, {5, 4711}}
			require.NoError(t, WriteLeaderEpochs(e.fs, name, entries))
			assert.Equal(t, "0\n3\n0 0\n2 1200\n5 4711\n", string(readAll(t, e.fs, name)))
			got, err = ReadLeaderEpochs(e.fs, name)
			require.NoError(t, err)
			assert.Equal(t, entries, got)

			require.ErrorIs(t, WriteLeaderEpochs(e.fs, name, []EpochEntry{{-1, 0}}), ErrInvalid)
			require.ErrorIs(t, WriteLeaderEpochs(e.fs, name, []EpochEntry{{0, -1}}), ErrInvalid)
			got, err = ReadLeaderEpochs(e.fs, name)
			require.NoError(t, err)
			assert.Equal(t, entries, got, "a refused write leaves the file alone")
		})
	}
}

// cacheOp is one step of a LeaderEpochCache scenario.
type cacheOp struct {
	assign            *EpochEntry
	truncateFromEnd   *int64
	truncateFromStart *int64
	clear             bool
	changed           bool // what the operation reports
}

func assign(epoch int32, offset int64, changed bool) cacheOp {
	return cacheOp{assign: &EpochEntry{epoch, offset}, changed: changed}
}

func fromEnd(offset int64, changed bool) cacheOp {
	return cacheOp{truncateFromEnd: &offset, changed: changed}
}

func fromStart(offset int64, changed bool) cacheOp {
	return cacheOp{truncateFromStart: &offset, changed: changed}
}

func (op cacheOp) apply(t *testing.T, c *LeaderEpochCache) bool {
	t.Helper()
	switch {
	case op.assign != nil:
		changed, err := c.Assign(op.assign.Epoch, op.assign.StartOffset)
		require.NoError(t, err)
		return changed
	case op.truncateFromEnd != nil:
		return c.TruncateFromEnd(*op.truncateFromEnd)
	case op.truncateFromStart != nil:
		return c.TruncateFromStart(*op.truncateFromStart)
	case op.clear:
		return c.Clear()
	}
	t.Fatal("empty op")
	return false
}

// TestLeaderEpochCache replays the behaviour of Kafka's
// LeaderEpochFileCache (the scenarios of its LeaderEpochFileCacheTest).
func TestLeaderEpochCache(t *testing.T) {
	base := []cacheOp{assign(2, 6, true), assign(3, 8, true), assign(4, 11, true)}
	with := func(ops ...cacheOp) []cacheOp { return append(append([]cacheOp(nil), base...), ops...) }
	for _, tc := range []struct {
		name string
		ops  []cacheOp
		want []EpochEntry
	}{
		{"add first entry", []cacheOp{assign(2, 10, true)}, []EpochEntry{{2, 10}}},
		{"same epoch, later offset: no change", []cacheOp{assign(2, 9, true), assign(2, 10, false)}, []EpochEntry{{2, 9}}},
		{"same epoch, same offset: no change", []cacheOp{assign(2, 6, true), assign(2, 6, false)}, []EpochEntry{{2, 6}}},
		{"new epoch at the same offset replaces", []cacheOp{assign(2, 9, true), assign(3, 9, true)}, []EpochEntry{{3, 9}}},
		{"same epoch, earlier offset truncates", []cacheOp{assign(5, 11, true), assign(6, 12, true), assign(7, 13, true), assign(7, 12, true)},
			[]EpochEntry{{5, 11}, {7, 12}}},
		{"lower epoch removes higher ones", []cacheOp{assign(1, 5, true), assign(2, 6, true), assign(1, 7, true)}, []EpochEntry{{1, 7}}},
		{"lower offset removes later ones", []cacheOp{assign(2, 6, true), assign(3, 5, true)}, []EpochEntry{{3, 5}}},
		{"follower appends", []cacheOp{assign(0, 0, true), assign(0, 1, false), assign(0, 2, false), assign(1, 3, true), assign(1, 4, false), assign(2, 6, true)},
			[]EpochEntry{{0, 0}, {1, 3}, {2, 6}}},
		{"leader changes at offset 0", []cacheOp{assign(0, 0, true), assign(1, 0, true), assign(2, 5, true)}, []EpochEntry{{1, 0}, {2, 5}}},

		{"truncate from end on a boundary", with(fromEnd(8, true)), []EpochEntry{{2, 6}}},
		{"truncate from end between boundaries", with(fromEnd(9, true)), []EpochEntry{{2, 6}, {3, 8}}},
		{"truncate from end past the last", with(fromEnd(12, false)), []EpochEntry{{2, 6}, {3, 8}, {4, 11}}},
		{"truncate from end, undefined offset", with(fromEnd(-1, false)), []EpochEntry{{2, 6}, {3, 8}, {4, 11}}},
		{"truncate from end to zero", with(fromEnd(0, true)), nil},
		{"truncate from end, empty cache", []cacheOp{fromEnd(7, false)}, nil},

		{"truncate from start on a boundary", with(fromStart(8, true)), []EpochEntry{{3, 8}, {4, 11}}},
		{"truncate from start too early", with(fromStart(1, false)), []EpochEntry{{2, 6}, {3, 8}, {4, 11}}},
		{"truncate from start at the first offset", with(fromStart(6, false)), []EpochEntry{{2, 6}, {3, 8}, {4, 11}}},
		{"truncate from start at the last boundary", with(fromStart(11, true)), []EpochEntry{{4, 11}}},
		{"truncate from start between boundaries", with(fromStart(9, true)), []EpochEntry{{3, 9}, {4, 11}}},
		{"truncate from start past the last", with(fromStart(15, true)), []EpochEntry{{4, 15}}},
		{"truncate from start inside the first epoch", []cacheOp{assign(0, 0, true), assign(1, 7, true), assign(2, 10, true), fromStart(5, true)},
			[]EpochEntry{{0, 5}, {1, 7}, {2, 10}}},
		{"truncate from start, undefined offset", with(fromStart(-1, false)), []EpochEntry{{2, 6}, {3, 8}, {4, 11}}},
		{"truncate from start, empty cache", []cacheOp{fromStart(7, false)}, nil},

		{"clear", with(cacheOp{clear: true, changed: true}), nil},
		{"clear empty", []cacheOp{{clear: true, changed: false}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewLeaderEpochCache(nil)
			require.NoError(t, err)
			require.False(t, c.Dirty())
			for i, op := range tc.ops {
				before := c.Entries()
				wasDirty := c.Dirty()
				changed := op.apply(t, c)
				require.Equal(t, op.changed, changed, "op %d", i)
				if !changed {
					require.Equal(t, before, c.Entries(), "op %d reported no change", i)
					require.Equal(t, wasDirty, c.Dirty(), "op %d", i)
				} else {
					require.NotEqual(t, before, c.Entries(), "op %d reported a change", i)
					require.True(t, c.Dirty(), "op %d", i)
				}
				requireMonotonic(t, c.Entries())
			}
			if tc.want == nil {
				assert.Empty(t, c.Entries())
			} else {
				assert.Equal(t, tc.want, c.Entries())
			}
		})
	}
}

func requireMonotonic(t testing.TB, entries []EpochEntry) {
	t.Helper()
	for i := 1; i < len(entries); i++ {
		require.Less(t, entries[i-1].Epoch, entries[i].Epoch, "%v", entries)
		require.Less(t, entries[i-1].StartOffset, entries[i].StartOffset, "%v", entries)
	}
}

func TestLeaderEpochCacheInvalid(t *testing.T) {
	c, err := NewLeaderEpochCache([]EpochEntry{{1, 5}})
	require.NoError(t, err)
	for _, e := range []EpochEntry{{-1, 5}, {2, -1}, {-1, -1}} {
		changed, err := c.Assign(e.Epoch, e.StartOffset)
		require.ErrorIs(t, err, ErrInvalid)
		require.False(t, changed)
	}
	assert.Equal(t, []EpochEntry{{1, 5}}, c.Entries())
	_, err = NewLeaderEpochCache([]EpochEntry{{1, 5}, {-1, 7}})
	require.ErrorIs(t, err, ErrInvalid)
}

func TestLeaderEpochCacheQueries(t *testing.T) {
	empty, err := NewLeaderEpochCache(nil)
	require.NoError(t, err)
	_, ok := empty.LatestEpoch()
	assert.False(t, ok)
	_, ok = empty.LatestEntry()
	assert.False(t, ok)
	_, ok = empty.EarliestEntry()
	assert.False(t, ok)
	_, ok = empty.EpochForOffset(0)
	assert.False(t, ok)
	e, o := empty.EndOffsetFor(7, 0)
	assert.Equal(t, []any{UndefinedEpoch, UndefinedEpochOffset}, []any{e, o})

	c, err := NewLeaderEpochCache([]EpochEntry{{0, 10}, {2, 13}, {4, 17}})
	require.NoError(t, err)
	require.False(t, c.Dirty(), "entries already in order")
	epoch, ok := c.LatestEpoch()
	require.True(t, ok)
	assert.Equal(t, int32(4), epoch)
	first, ok := c.EarliestEntry()
	require.True(t, ok)
	assert.Equal(t, EpochEntry{0, 10}, first)

	for _, tc := range []struct {
		offset int64
		epoch  int32
		ok     bool
	}{{9, 0, false}, {10, 0, true}, {12, 0, true}, {13, 2, true}, {16, 2, true}, {17, 4, true}, {1 << 40, 4, true}} {
		epoch, ok := c.EpochForOffset(tc.offset)
		assert.Equal(t, tc.ok, ok, "offset %d", tc.offset)
		if ok {
			assert.Equal(t, tc.epoch, epoch, "offset %d", tc.offset)
		}
	}

	const leo = 20
	for _, tc := range []struct {
		requested int32
		epoch     int32
		end       int64
	}{
		{UndefinedEpoch, UndefinedEpoch, UndefinedEpochOffset},
		{4, 4, leo},  // the latest epoch: the log end offset
		{0, 0, 13},   // the next epoch's start
		{1, 0, 13},   // no exact epoch: the one below, ending where the next starts
		{2, 2, 17},   //
		{3, 2, 17},   //
		{-5, -5, 10}, // below every epoch: the first start offset
		{5, UndefinedEpoch, UndefinedEpochOffset}, // above every epoch
		{math.MaxInt32, UndefinedEpoch, UndefinedEpochOffset},
	} {
		epoch, end := c.EndOffsetFor(tc.requested, leo)
		assert.Equal(t, tc.epoch, epoch, "requested %d", tc.requested)
		assert.Equal(t, tc.end, end, "requested %d", tc.requested)
	}
}

func TestLeaderEpochCacheLoadNormalizes(t *testing.T) {
	// Kafka loads the file by assigning every entry: out-of-order entries
	// are dropped, and the cache is then dirty.
	c, err := NewLeaderEpochCache([]EpochEntry{{5, 10}, {3, 20}, {4, 30}})
	require.NoError(t, err)
	assert.Equal(t, []EpochEntry{{3, 20}, {4, 30}}, c.Entries())
	assert.True(t, c.Dirty())
}

func TestLeaderEpochCachePersistence(t *testing.T) {
	for _, e := range filesystems(t) {
		t.Run(e.name, func(t *testing.T) {
			name := e.path(LeaderEpochFile)
			c, err := OpenLeaderEpochCache(e.fs, name)
			require.NoError(t, err, "a missing file is an empty cache")
			assert.Empty(t, c.Entries())

			changed, err := c.Assign(0, 0)
			require.NoError(t, err)
			require.True(t, changed)
			require.True(t, c.Dirty())
			require.NoError(t, c.Write(e.fs, name))
			require.False(t, c.Dirty())
			assert.Equal(t, "0\n1\n0 0\n", string(readAll(t, e.fs, name)))

			_, err = c.Assign(3, 100)
			require.NoError(t, err)
			require.NoError(t, c.Write(e.fs, name))

			c2, err := OpenLeaderEpochCache(e.fs, name)
			require.NoError(t, err)
			assert.Equal(t, c.Entries(), c2.Entries())
			assert.False(t, c2.Dirty())

			entries := c2.Entries()
			entries[0].Epoch = 99
			assert.NotEqual(t, entries, c2.Entries(), "Entries returns a copy")

			writeRaw(t, e.fs, name, []byte("0\n1\n"))
			_, err = OpenLeaderEpochCache(e.fs, name)
			requireCorrupt(t, err, name, 2)
		})
	}
}

func TestEpochEntryString(t *testing.T) {
	assert.Equal(t, "EpochEntry(epoch=3, startOffset=100)", EpochEntry{3, 100}.String())
}
