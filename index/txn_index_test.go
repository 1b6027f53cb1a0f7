package index

import (
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

func createTxnIndex(t testing.TB, e testFS, name string, start int64, txns ...AbortedTxn) *TxnIndex {
	t.Helper()
	ix, err := CreateTxnIndex(e.fs, e.path(name), start)
	require.NoError(t, err)
	for _, txn := range txns {
		require.NoError(t, ix.Append(txn))
	}
	return ix
}

func TestAppendAbortedTxn(t *testing.T) {
	txn := AbortedTxn{ProducerID: 0x0102030405060708, FirstOffset: 10, LastOffset: -2, LastStableOffset: 1 << 40}
	b := AppendAbortedTxn([]byte{0xAA}, txn)
	require.Len(t, b, 1+AbortedTxnBytes)
	assert.Equal(t, byte(0xAA), b[0])
	assert.Equal(t, specTxnEntries(txn), b[1:])
	got, version := parseAbortedTxn(b[1:])
	assert.Equal(t, txn, got)
	assert.Equal(t, int16(0), version)
}

func TestTxnIndexAppendRules(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		ix := createTxnIndex(t, e, "a.txnindex", 100)
		require.ErrorIs(t, ix.Append(AbortedTxn{ProducerID: 1, FirstOffset: 50, LastOffset: 99, LastStableOffset: 100}), ErrInvalidOffset,
			"the ABORT marker is in this segment")
		require.NoError(t, ix.Append(AbortedTxn{ProducerID: 1, FirstOffset: 50, LastOffset: 100, LastStableOffset: 101}))
		require.ErrorIs(t, ix.Append(AbortedTxn{ProducerID: 2, FirstOffset: 60, LastOffset: 100, LastStableOffset: 101}), ErrInvalidOffset)
		require.ErrorIs(t, ix.Append(AbortedTxn{ProducerID: 2, FirstOffset: 60, LastOffset: 90, LastStableOffset: 101}), ErrInvalidOffset)
		require.NoError(t, ix.Append(AbortedTxn{ProducerID: 2, FirstOffset: 60, LastOffset: 105, LastStableOffset: 106}))
		assert.Equal(t, 2, ix.Entries())
		require.NoError(t, ix.Flush())
		require.NoError(t, ix.Close())

		// Reopened, the index still knows the last offset.
		ix, err := OpenTxnIndex(e.fs, e.path("a.txnindex"), 100, ReadWrite)
		require.NoError(t, err)
		require.ErrorIs(t, ix.Append(AbortedTxn{ProducerID: 3, LastOffset: 105}), ErrInvalidOffset)
		require.NoError(t, ix.Append(AbortedTxn{ProducerID: 3, FirstOffset: 106, LastOffset: 110, LastStableOffset: 111}))
		require.NoError(t, ix.Close())
		assert.Equal(t, specTxnEntries(
			AbortedTxn{1, 50, 100, 101}, AbortedTxn{2, 60, 105, 106}, AbortedTxn{3, 106, 110, 111},
		), readFile(t, e, "a.txnindex"))

		_, err = CreateTxnIndex(e.fs, e.path("a.txnindex"), 100)
		require.ErrorIs(t, err, fs.ErrExist)
		_, err = OpenTxnIndex(e.fs, e.path("missing.txnindex"), 100, ReadOnly)
		require.ErrorIs(t, err, fs.ErrNotExist)
	})
}

// TestTxnIndexCollect follows the package doc's read_committed rule: collect
// entries with lastOffset ≥ fetchOffset and firstOffset < upperBound; stop,
// complete, after an entry whose lastStableOffset ≥ upperBound.
func TestTxnIndexCollect(t *testing.T) {
	txns := []AbortedTxn{
		{ProducerID: 1, FirstOffset: 0, LastOffset: 10, LastStableOffset: 11},
		{ProducerID: 2, FirstOffset: 5, LastOffset: 20, LastStableOffset: 15}, // another txn was open at 15
		{ProducerID: 3, FirstOffset: 15, LastOffset: 30, LastStableOffset: 31},
		{ProducerID: 4, FirstOffset: 40, LastOffset: 45, LastStableOffset: 46},
	}
	tests := []struct {
		name              string
		fetch, upperBound int64
		want              []int // indexes into txns
		complete          bool
	}{
		{name: "all", fetch: 0, upperBound: 100, want: []int{0, 1, 2, 3}},
		{name: "before everything", fetch: 0, upperBound: 0, want: nil, complete: true},
		{name: "range inside the first", fetch: 2, upperBound: 5, want: []int{0}, complete: true},
		{name: "stops at lastStableOffset", fetch: 0, upperBound: 11, want: []int{0}, complete: true},
		{name: "stops after a later lastStableOffset", fetch: 0, upperBound: 12, want: []int{0, 1}, complete: true},
		{name: "lastStableOffset below bound goes on", fetch: 11, upperBound: 16, want: []int{1, 2}, complete: true},
		{name: "fetch after the first", fetch: 11, upperBound: 31, want: []int{1, 2}, complete: true},
		{name: "firstOffset at bound excluded", fetch: 31, upperBound: 40, want: nil, complete: true},
		{name: "fetch at last offset", fetch: 45, upperBound: 46, want: []int{3}, complete: true},
		{name: "beyond the segment", fetch: 50, upperBound: 60, want: nil},
		{name: "bound beyond every LSO", fetch: 46, upperBound: 1000, want: nil},
	}
	forEachFS(t, func(t *testing.T, e testFS) {
		ix := createTxnIndex(t, e, "c.txnindex", 0, txns...)
		defer func() { require.NoError(t, ix.Close()) }()
		all, err := ix.AllAbortedTxns()
		require.NoError(t, err)
		require.Equal(t, txns, all)
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got, complete, err := ix.CollectAbortedTxns(tc.fetch, tc.upperBound)
				require.NoError(t, err)
				var want []AbortedTxn
				for _, i := range tc.want {
					want = append(want, txns[i])
				}
				assert.Equal(t, want, got)
				assert.Equal(t, tc.complete, complete)
			})
		}
	})
}

func TestTxnIndexCollectManyEntries(t *testing.T) {
	// More entries than one read of the scan fetches.
	forEachFS(t, func(t *testing.T, e testFS) {
		ix := createTxnIndex(t, e, "m.txnindex", 0)
		defer func() { require.NoError(t, ix.Close()) }()
		var txns []AbortedTxn
		for i := range int64(3*txnReadEntries + 5) {
			txn := AbortedTxn{ProducerID: i, FirstOffset: i * 10, LastOffset: i*10 + 5, LastStableOffset: i*10 + 6}
			require.NoError(t, ix.Append(txn))
			txns = append(txns, txn)
		}
		all, err := ix.AllAbortedTxns()
		require.NoError(t, err)
		require.Equal(t, txns, all)
		got, complete, err := ix.CollectAbortedTxns(1000, 2500)
		require.NoError(t, err)
		assert.True(t, complete)
		assert.Equal(t, txns[100:250], got)
	})
}

func TestTxnIndexTruncateTo(t *testing.T) {
	txns := []AbortedTxn{{1, 0, 10, 11}, {2, 5, 20, 21}, {3, 15, 30, 31}}
	tests := []struct {
		name   string
		offset int64
		keep   int
	}{
		{name: "exact", offset: 20, keep: 1},
		{name: "between", offset: 25, keep: 2},
		{name: "above", offset: 31, keep: 3},
		{name: "first", offset: 10, keep: 0},
		{name: "below", offset: -5, keep: 0},
	}
	forEachFS(t, func(t *testing.T, e testFS) {
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				name := segmentName(int64(i), ".txnindex")
				ix := createTxnIndex(t, e, name, 0, txns...)
				require.NoError(t, ix.TruncateTo(tc.offset))
				assert.Equal(t, tc.keep, ix.Entries())
				assert.Equal(t, specTxnEntries(txns[:tc.keep]...), readFile(t, e, name))
				// Appends continue above the new last entry.
				next := AbortedTxn{ProducerID: 9, FirstOffset: 0, LastOffset: 0, LastStableOffset: 1}
				if tc.keep > 0 {
					next.LastOffset = txns[tc.keep-1].LastOffset + 1
				}
				require.NoError(t, ix.Append(next))
				require.NoError(t, ix.Reset())
				assert.Equal(t, 0, ix.Entries())
				require.NoError(t, ix.Append(AbortedTxn{LastOffset: 0}))
				require.NoError(t, ix.Close())
			})
		}
	})
}

func TestTxnIndexTornTail(t *testing.T) {
	txns := []AbortedTxn{{1, 0, 10, 11}, {2, 5, 20, 21}}
	whole := specTxnEntries(txns...)
	forEachFS(t, func(t *testing.T, e testFS) {
		for _, torn := range []int{1, 2, 17, 33} {
			raw := append(append([]byte{}, whole...), specTxnEntries(AbortedTxn{3, 25, 30, 31})[:torn]...)

			// ReadOnly: the partial entry is ignored.
			writeFile(t, e, "ro.txnindex", raw)
			ix, err := OpenTxnIndex(e.fs, e.path("ro.txnindex"), 0, ReadOnly)
			require.NoError(t, err)
			assert.Equal(t, int64(torn), ix.TornBytes())
			require.NoError(t, ix.SanityCheck(), "a torn tail is not corruption")
			all, err := ix.AllAbortedTxns()
			require.NoError(t, err)
			assert.Equal(t, txns, all)
			require.ErrorIs(t, ix.Append(AbortedTxn{LastOffset: 40}), ErrReadOnly)
			require.ErrorIs(t, ix.TruncateTo(0), ErrReadOnly)
			require.ErrorIs(t, ix.Reset(), ErrReadOnly)
			require.NoError(t, ix.Flush())
			require.NoError(t, ix.Close())
			assert.Equal(t, raw, readFile(t, e, "ro.txnindex"), "read-only leaves the file alone")
			require.NoError(t, e.fs.Remove(e.path("ro.txnindex")))

			// ReadWrite: the partial entry is truncated away and the next
			// append lands on an entry boundary.
			writeFile(t, e, "rw.txnindex", raw)
			ix, err = OpenTxnIndex(e.fs, e.path("rw.txnindex"), 0, ReadWrite)
			require.NoError(t, err)
			assert.Equal(t, int64(torn), ix.TornBytes())
			assert.Equal(t, whole, readFile(t, e, "rw.txnindex"))
			require.NoError(t, ix.Append(AbortedTxn{4, 21, 40, 41}))
			require.NoError(t, ix.Close())
			assert.Equal(t, specTxnEntries(append(txns, AbortedTxn{4, 21, 40, 41})...), readFile(t, e, "rw.txnindex"))
			require.NoError(t, e.fs.Remove(e.path("rw.txnindex")))
		}
	})
}

func TestTxnIndexSanityCheck(t *testing.T) {
	const start = 100
	badVersion := specTxnEntries(AbortedTxn{1, 100, 110, 111})
	badVersion[1] = 1 // version 1
	negVersion := specTxnEntries(AbortedTxn{1, 100, 110, 111})
	negVersion[0] = 0xff
	tests := []struct {
		name    string
		raw     []byte
		corrupt bool
	}{
		{name: "empty", raw: nil},
		{name: "valid", raw: specTxnEntries(AbortedTxn{1, 50, 100, 101}, AbortedTxn{2, 90, 120, 121})},
		{name: "last offset below start", raw: specTxnEntries(AbortedTxn{1, 50, 100, 101}, AbortedTxn{2, 90, 99, 121}), corrupt: true},
		{name: "version 1", raw: badVersion, corrupt: true},
		{name: "negative version", raw: negVersion, corrupt: true},
		{name: "zeros", raw: make([]byte, 2*AbortedTxnBytes), corrupt: true},
	}
	forEachFS(t, func(t *testing.T, e testFS) {
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				name := segmentName(int64(i), ".txnindex")
				writeFile(t, e, name, tc.raw)
				ix, err := OpenTxnIndex(e.fs, e.path(name), start, ReadOnly)
				require.NoError(t, err)
				defer func() { require.NoError(t, ix.Close()) }()
				err = ix.SanityCheck()
				if !tc.corrupt {
					require.NoError(t, err)
					return
				}
				var ce *CorruptIndexError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, e.path(name), ce.File)
			})
		}
	})
}

func TestTxnIndexClosedAndFailures(t *testing.T) {
	mem := vfs.NewMem()
	ffs := vfs.NewFaultFS(mem)
	ix, err := CreateTxnIndex(ffs, "f.txnindex", 0)
	require.NoError(t, err)
	assert.Equal(t, "f.txnindex", ix.Name())
	assert.Equal(t, int64(0), ix.StartOffset())
	require.NoError(t, ix.Append(AbortedTxn{1, 0, 1, 2}))
	ffs.Inject(vfs.EIO(vfs.OpWrite, "f.txnindex", 1))
	require.ErrorIs(t, ix.Append(AbortedTxn{1, 0, 2, 3}), vfs.ErrInjected)
	require.ErrorIs(t, ix.Append(AbortedTxn{1, 0, 3, 4}), vfs.ErrInjected, "sticky")
	require.ErrorIs(t, ix.Flush(), vfs.ErrInjected)
	all, err := ix.AllAbortedTxns()
	require.NoError(t, err, "reads still work")
	assert.Equal(t, []AbortedTxn{{1, 0, 1, 2}}, all)
	require.NoError(t, ix.Close())
	require.NoError(t, ix.Close())
	require.ErrorIs(t, ix.Append(AbortedTxn{}), ErrClosed)
	require.ErrorIs(t, ix.SanityCheck(), ErrClosed)
	require.ErrorIs(t, ix.Flush(), ErrClosed)
	_, err = ix.AllAbortedTxns()
	require.ErrorIs(t, err, ErrClosed)
	_, _, err = ix.CollectAbortedTxns(0, 1)
	require.ErrorIs(t, err, ErrClosed)

	ffs.Clear()
	ffs.Inject(vfs.EIO(vfs.OpSync, "g.txnindex", 1))
	g, err := CreateTxnIndex(ffs, "g.txnindex", 0)
	require.NoError(t, err)
	require.ErrorIs(t, g.Flush(), vfs.ErrInjected)
	require.ErrorIs(t, g.Append(AbortedTxn{}), vfs.ErrInjected)
	require.NoError(t, g.Close())

	_, err = OpenTxnIndex(ffs, "g.txnindex", 0, Mode(5))
	require.Error(t, err)
}

// TestTxnIndexValidate: Validate fails, with a *CorruptIndexError, on every
// kind of entry a .txnindex written by Kafka or this package never holds,
// and passes what they write.
func TestTxnIndexValidate(t *testing.T) {
	good := []AbortedTxn{{ProducerID: 1, FirstOffset: 90, LastOffset: 104, LastStableOffset: 105}, {ProducerID: 2, FirstOffset: 101, LastOffset: 110, LastStableOffset: 95}}
	tests := []struct {
		name string
		file []byte
		ok   bool
	}{
		{"entries Kafka writes", specTxnEntries(good...), true},
		{"empty", nil, true},
		{"a partial last entry", append(specTxnEntries(good...), 0, 0, 0), false},
		{"a version other than 0", append([]byte{0, 1}, specTxnEntries(good[0])[2:]...), false},
		{"first offset after last offset", specTxnEntries(AbortedTxn{1, 105, 104, 105}), false},
		{"negative first offset", specTxnEntries(AbortedTxn{1, -1, 104, 105}), false},
		{"last offset below the segment", specTxnEntries(AbortedTxn{1, 10, 99, 100}), false},
		{"last offset at the segment's end", specTxnEntries(AbortedTxn{1, 100, 200, 201}), false},
		{"last offsets not increasing", specTxnEntries(good[1], good[0]), false},
		{"last stable offset past the marker", specTxnEntries(AbortedTxn{1, 100, 104, 106}), false},
		{"negative last stable offset", specTxnEntries(AbortedTxn{1, 100, 104, -1}), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			forEachFS(t, func(t *testing.T, e testFS) {
				for i, mode := range []Mode{ReadOnly, ReadWrite} {
					name := fmt.Sprintf("%d.txnindex", i)
					writeFile(t, e, name, tc.file)
					ix, err := OpenTxnIndex(e.fs, e.path(name), 100, mode)
					require.NoError(t, err)
					err = ix.Validate(200)
					if tc.ok {
						require.NoError(t, err)
					} else {
						var ce *CorruptIndexError
						require.ErrorAs(t, err, &ce, "%v", mode)
						require.ErrorIs(t, err, ErrCorruptIndex)
					}
					require.NoError(t, ix.Close())
				}
			})
		})
	}
}
