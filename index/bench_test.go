package index

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// benchEntries is the number of entries of a full 1 GiB segment's index at
// index.interval.bytes = 4096: 1 GiB / 4096.
const benchEntries = (1 << 30) / 4096

const benchBase = 1 << 32

// benchFSKinds are the filesystems benchmarked: "os" is the mmap path; the
// others are the ReadAt/WriteAt fallback on the memory FS and on real files.
var benchFSKinds = []string{"os", "mem", "os-pread"}

// buildOffsetIndex writes a trimmed offset index of n entries, offsets
// base+10i+9 at positions 4096i, and opens it ReadOnly, as an inactive
// segment's index is.
func buildOffsetIndex(tb testing.TB, e testFS, n int) *OffsetIndex {
	tb.Helper()
	ix, err := CreateOffsetIndex(e.fs, e.path("bench.index"), benchBase, n*OffsetIndexEntryBytes)
	require.NoError(tb, err)
	for i := range n {
		require.NoError(tb, ix.Append(benchBase+int64(i)*10+9, Position(i*4096)))
	}
	require.NoError(tb, ix.Close())
	ix, err = OpenOffsetIndex(e.fs, e.path("bench.index"), benchBase, DefaultMaxIndexBytes, ReadOnly)
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, ix.Close()) })
	return ix
}

// buildTimeIndex is buildOffsetIndex for a time index: timestamps
// 1.7e12+5i, offsets base+10i+9.
func buildTimeIndex(tb testing.TB, e testFS, n int) *TimeIndex {
	tb.Helper()
	ix, err := CreateTimeIndex(e.fs, e.path("bench.timeindex"), benchBase, (n+1)*TimeIndexEntryBytes)
	require.NoError(tb, err)
	for i := range n {
		require.NoError(tb, ix.MaybeAppend(1_700_000_000_000+int64(i)*5, benchBase+int64(i)*10+9, false))
	}
	require.NoError(tb, ix.Close())
	ix, err = OpenTimeIndex(e.fs, e.path("bench.timeindex"), benchBase, DefaultMaxIndexBytes, ReadOnly)
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, ix.Close()) })
	return ix
}

// benchTargets returns 64Ki targets uniformly in [lo, hi), or, for warm,
// in the last 512 entries' range (a consumer or follower near the tail).
func benchTargets(lo, hi int64, warm bool, step int64) []int64 {
	r := rand.New(rand.NewPCG(1, 2))
	if warm {
		lo = hi - 512*step
	}
	t := make([]int64, 1<<16)
	for i := range t {
		t[i] = lo + r.Int64N(hi-lo)
	}
	return t
}

// benchLookup measures lookups in an index of benchEntries entries that
// build makes on each filesystem (returning its Lookup), of targets drawn
// from [lo, hi) ("random") or from the last entries' range ("warm"), step
// apart.
func benchLookup[E any](b *testing.B, build func(e testFS) func(int64) (E, error), lo, hi, step int64) {
	for _, kind := range benchFSKinds {
		lookup := build(newTestFS(b, kind))
		for _, warm := range []bool{false, true} {
			name := kind + "/entries=262144/random"
			if warm {
				name = kind + "/entries=262144/warm"
			}
			targets := benchTargets(lo, hi, warm, step)
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := lookup(targets[i&(len(targets)-1)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

func BenchmarkOffsetIndexLookup(b *testing.B) {
	benchLookup(b, func(e testFS) func(int64) (OffsetPosition, error) { return buildOffsetIndex(b, e, benchEntries).Lookup },
		benchBase, benchBase+benchEntries*10+9, 10)
}

func BenchmarkTimeIndexLookup(b *testing.B) {
	benchLookup(b, func(e testFS) func(int64) (TimestampOffset, error) { return buildTimeIndex(b, e, benchEntries).Lookup },
		1_700_000_000_000, 1_700_000_000_000+benchEntries*5, 5)
}

// appendIndex is what benchAppend needs of an offset or time index.
type appendIndex interface {
	IsFull() bool
	TruncateToEntries(n int) error
	Close() error
}

// benchAppend measures appends of entries of entryBytes to an index
// created by create (as file name) on each filesystem, emptied whenever it
// is full; add appends the entry for offset off.
func benchAppend[I appendIndex](b *testing.B, name string, entryBytes int64,
	create func(fsys vfs.FS, name string, baseOffset int64, maxIndexBytes int) (I, error), add func(ix I, off int64) error) {
	for _, kind := range benchFSKinds {
		b.Run(kind, func(b *testing.B) {
			e := newTestFS(b, kind)
			ix, err := create(e.fs, e.path(name), 0, DefaultMaxIndexBytes)
			require.NoError(b, err)
			defer func() { require.NoError(b, ix.Close()) }()
			b.ReportAllocs()
			b.SetBytes(entryBytes)
			var off int64
			for b.Loop() {
				if ix.IsFull() {
					b.StopTimer()
					require.NoError(b, ix.TruncateToEntries(0))
					off = 0
					b.StartTimer()
				}
				off += 10
				if err := add(ix, off); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkOffsetIndexAppend(b *testing.B) {
	benchAppend(b, "append.index", OffsetIndexEntryBytes, CreateOffsetIndex,
		func(ix *OffsetIndex, off int64) error { return ix.Append(off, Position(off*400)) })
}

func BenchmarkTimeIndexAppend(b *testing.B) {
	benchAppend(b, "append.timeindex", TimeIndexEntryBytes, CreateTimeIndex,
		func(ix *TimeIndex, off int64) error { return ix.MaybeAppend(1_700_000_000_000+off, off, false) })
}

// BenchmarkOpenActiveIndex measures opening an untrimmed 10 MiB active
// index with 3 entries: the worst case of the zero-tail count, a scan of the
// whole file.
func BenchmarkOpenActiveIndex(b *testing.B) {
	for _, kind := range benchFSKinds {
		b.Run(kind, func(b *testing.B) {
			e := newTestFS(b, kind)
			ix, err := CreateOffsetIndex(e.fs, e.path("active.index"), 0, DefaultMaxIndexBytes)
			require.NoError(b, err)
			for i := range int64(3) {
				require.NoError(b, ix.Append(i+1, Position(i*4096)))
			}
			require.NoError(b, ix.Flush())
			b.ReportAllocs()
			b.SetBytes(DefaultMaxIndexBytes)
			for b.Loop() {
				ix2, err := OpenOffsetIndex(e.fs, e.path("active.index"), 0, DefaultMaxIndexBytes, ReadWrite)
				if err != nil {
					b.Fatal(err)
				}
				if ix2.Entries() != 3 {
					b.Fatalf("entries = %d", ix2.Entries())
				}
				// Not Close: that would trim the file under the first
				// handle's mapping.
				b.StopTimer()
				require.NoError(b, ix2.x.unmapLocked())
				require.NoError(b, ix2.x.closeFile())
				b.StartTimer()
			}
			require.NoError(b, ix.Close())
		})
	}
}

// TestLookupAllocs pins zero allocations per lookup on every path.
func TestLookupAllocs(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		oix := buildOffsetIndex(t, e, 5000)
		tix := buildTimeIndex(t, e, 5000)
		targets := benchTargets(benchBase, benchBase+5000*10, false, 10)
		i := 0
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := oix.Lookup(targets[i%len(targets)]); err != nil {
				t.Fatal(err)
			}
			if _, err := tix.Lookup(1_700_000_000_000 + targets[i%len(targets)] - benchBase); err != nil {
				t.Fatal(err)
			}
			i++
		})
		require.Zero(t, allocs, "allocations per lookup")
	})
}
