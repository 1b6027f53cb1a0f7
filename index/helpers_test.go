package index

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/fileio"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// testFS is one filesystem the tests run on.
type testFS struct {
	// kind names the variant in subtest names.
	kind string
	fs   vfs.FS
	dir  string
	// mapped says whether .index and .timeindex files are memory-mapped.
	mapped bool
}

// path returns name inside the test directory.
func (e testFS) path(name string) string { return filepath.Join(e.dir, name) }

// newTestFS returns the filesystem of the given kind:
//
//   - "os": the OS filesystem in a temp dir; indexes are memory-mapped.
//   - "mem": the memory filesystem; indexes use ReadAt/WriteAt.
//   - "os-pread": OS files behind a fault injector with no rules, which
//     hides the *os.File, so indexes use pread/pwrite on real files.
func newTestFS(tb testing.TB, kind string) testFS {
	tb.Helper()
	switch kind {
	case "os":
		return testFS{kind: kind, fs: vfs.Default, dir: tb.TempDir(), mapped: osMaps(tb)}
	case "mem":
		m := vfs.NewMem()
		require.NoError(tb, m.MkdirAll("/idx"))
		return testFS{kind: kind, fs: m, dir: "/idx"}
	case "os-pread":
		return testFS{kind: kind, fs: vfs.NewFaultFS(vfs.Default), dir: tb.TempDir()}
	}
	panic("unknown test filesystem " + kind)
}

var testFSKinds = []string{"os", "mem", "os-pread"}

// osMaps reports whether fileio.Map maps OS files on this platform (not on
// Windows, for one).
func osMaps(tb testing.TB) bool {
	tb.Helper()
	f, err := vfs.Default.Create(filepath.Join(tb.TempDir(), "probe"))
	require.NoError(tb, err)
	defer func() { require.NoError(tb, f.Close()) }()
	require.NoError(tb, f.Truncate(8))
	m, err := fileio.Map(f, 8, false)
	if errors.Is(err, fileio.ErrNotSupported) {
		return false
	}
	require.NoError(tb, err)
	require.NoError(tb, m.Close())
	return true
}

// forEachFS runs fn as a subtest on every test filesystem: the mmap path
// and both fallback paths.
func forEachFS(t *testing.T, fn func(t *testing.T, e testFS)) {
	t.Helper()
	for _, kind := range testFSKinds {
		t.Run(kind, func(t *testing.T) {
			fn(t, newTestFS(t, kind))
		})
	}
}

// writeFile creates name with contents b (not synced: fsync is slow, and
// no test crashes a file written this way).
func writeFile(tb testing.TB, e testFS, name string, b []byte) {
	tb.Helper()
	f, err := e.fs.Create(e.path(name))
	require.NoError(tb, err)
	if len(b) > 0 {
		_, err = f.WriteAt(b, 0)
		require.NoError(tb, err)
	}
	require.NoError(tb, f.Close())
}

// readFile returns the contents of name.
func readFile(tb testing.TB, e testFS, name string) []byte {
	tb.Helper()
	f, err := e.fs.Open(e.path(name))
	require.NoError(tb, err)
	defer func() { require.NoError(tb, f.Close()) }()
	size, err := f.Size()
	require.NoError(tb, err)
	b := make([]byte, size)
	if size > 0 {
		n, err := f.ReadAt(b, 0)
		require.Equal(tb, len(b), n, "short read: %v", err)
	}
	return b
}

// fileSize returns the size of name.
func fileSize(tb testing.TB, e testFS, name string) int64 {
	tb.Helper()
	fi, err := e.fs.Stat(e.path(name))
	require.NoError(tb, err)
	return fi.Size
}

// segmentName returns Kafka's file name for a segment file: the base offset
// as 20 zero-padded digits plus the suffix.
func segmentName(baseOffset int64, suffix string) string {
	return fmt.Sprintf("%020d%s", baseOffset, suffix)
}

// specOffsetEntries encodes offset index entries straight from the layout in
// the package doc (relativeOffset int32, position int32, big-endian),
// independently of the package's encoder.
func specOffsetEntries(baseOffset int64, entries ...OffsetPosition) []byte {
	b := []byte{}
	for _, e := range entries {
		rel := uint32(e.Offset - baseOffset)
		pos := uint32(e.Position)
		b = append(b, byte(rel>>24), byte(rel>>16), byte(rel>>8), byte(rel),
			byte(pos>>24), byte(pos>>16), byte(pos>>8), byte(pos))
	}
	return b
}

// specTimeEntries encodes time index entries from the package doc's layout
// (timestamp int64, relativeOffset int32, big-endian).
func specTimeEntries(baseOffset int64, entries ...TimestampOffset) []byte {
	b := []byte{}
	for _, e := range entries {
		ts := uint64(e.Timestamp)
		rel := uint32(e.Offset - baseOffset)
		for shift := 56; shift >= 0; shift -= 8 {
			b = append(b, byte(ts>>shift))
		}
		b = append(b, byte(rel>>24), byte(rel>>16), byte(rel>>8), byte(rel))
	}
	return b
}

// specTxnEntries encodes .txnindex entries from the package doc's layout
// (version int16 = 0, producerId, firstOffset, lastOffset, lastStableOffset
// int64, big-endian).
func specTxnEntries(txns ...AbortedTxn) []byte {
	b := []byte{}
	put64 := func(v int64) {
		for shift := 56; shift >= 0; shift -= 8 {
			b = append(b, byte(uint64(v)>>shift))
		}
	}
	for _, t := range txns {
		b = append(b, 0, 0) // version 0
		put64(t.ProducerID)
		put64(t.FirstOffset)
		put64(t.LastOffset)
		put64(t.LastStableOffset)
	}
	return b
}
