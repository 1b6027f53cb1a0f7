package remote_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/remote/remotetest"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// benchSegmentBytes is the .log size the copy benchmarks move.
const benchSegmentBytes = 64 << 20

// BenchmarkFileStoreCopy copies a 64 MiB segment (with small indexes) to a
// FileStore on the operating system's filesystem: every file written,
// checksummed and fsynced, the manifest last. BenchmarkPlainCopy is the
// baseline: the same .log bytes written to one file and fsynced.
func BenchmarkFileStoreCopy(b *testing.B) {
	seg := remotetest.NewSegment("bench", 0, 0, benchSegmentBytes, true)
	store := remote.NewFileStore(vfs.Default, b.TempDir())
	ctx := context.Background()
	b.SetBytes(benchSegmentBytes)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := store.CopyLogSegmentData(ctx, seg.Meta, seg.Data()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlainCopy(b *testing.B) {
	data := make([]byte, benchSegmentBytes)
	_, _ = rand.Read(data)
	name := filepath.Join(b.TempDir(), "plain.log")
	b.SetBytes(benchSegmentBytes)
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(f, io.NewSectionReader(bytes.NewReader(data), 0, benchSegmentBytes)); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFileStoreFetch reads a stored 64 MiB .log back whole (its
// checksum checked at the end); BenchmarkPlainRead reads the same bytes
// from one file.
func BenchmarkFileStoreFetch(b *testing.B) {
	seg := remotetest.NewSegment("bench", 0, 0, benchSegmentBytes, false)
	store := remote.NewFileStore(vfs.Default, b.TempDir())
	ctx := context.Background()
	if _, err := store.CopyLogSegmentData(ctx, seg.Meta, seg.Data()); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	b.SetBytes(benchSegmentBytes)
	b.ReportAllocs()
	for b.Loop() {
		r, err := store.FetchLogSegment(ctx, seg.Meta, 0, -1)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyBuffer(io.Discard, r, buf); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}

func BenchmarkPlainRead(b *testing.B) {
	data := make([]byte, benchSegmentBytes)
	_, _ = rand.Read(data)
	name := filepath.Join(b.TempDir(), "plain.log")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	b.SetBytes(benchSegmentBytes)
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(name)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyBuffer(io.Discard, f, buf); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
