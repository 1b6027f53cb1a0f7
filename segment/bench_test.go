package segment

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// benchBatch is one batch of 1,000 records with 100-byte values.
func benchBatch(b *testing.B) []byte { return batchAt(b, 0, 1000, 100, 1700000000000) }

// BenchmarkAppend compares Segment.Append of 1,000 × 100-byte record batches
// with a plain sequential write of the same bytes, both through the OS page
// cache in one run. Segments roll (and old ones are removed) every 256 MiB so
// the benchmark does not fill the disk.
func BenchmarkAppend(b *testing.B) {
	batch := benchBatch(b)
	h, err := record.Validate(batch)
	if err != nil {
		b.Fatal(err)
	}
	const rollBytes = 256 << 20
	b.Run("segment", func(b *testing.B) {
		dir := b.TempDir()
		cfg := DefaultConfig()
		var s *Segment
		next := int64(0)
		roll := func() {
			if s != nil {
				if err := s.Remove(); err != nil {
					b.Fatal(err)
				}
			}
			if s, err = Create(vfs.Default, dir, next, cfg, 0); err != nil {
				b.Fatal(err)
			}
		}
		roll()
		b.SetBytes(int64(len(batch)))
		b.ReportAllocs()
		for b.Loop() {
			if s.Size() > rollBytes {
				roll()
			}
			h.BaseOffset = next
			if err := record.SetBaseOffset(batch, next); err != nil {
				b.Fatal(err)
			}
			if err := s.Append(batch, &h); err != nil {
				b.Fatal(err)
			}
			next += 1000
		}
		b.StopTimer()
		_ = s.Remove()
	})
	b.Run("plain-file", func(b *testing.B) {
		dir := b.TempDir()
		var f *os.File
		var written int64
		n := 0
		roll := func() {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
			n++
			if f, err = os.Create(filepath.Join(dir, FileName(int64(n), LogSuffix))); err != nil {
				b.Fatal(err)
			}
			written = 0
		}
		roll()
		b.SetBytes(int64(len(batch)))
		b.ReportAllocs()
		for b.Loop() {
			if written > rollBytes {
				roll()
			}
			if _, err := f.Write(batch); err != nil {
				b.Fatal(err)
			}
			written += int64(len(batch))
		}
		b.StopTimer()
		f.Close()
	})
}

// benchSegment writes a segment of about size bytes of 1,000-record batches.
func benchSegment(b *testing.B, fsys vfs.FS, dir string, size int64) *Segment {
	s, err := Create(fsys, dir, 0, DefaultConfig(), 0)
	if err != nil {
		b.Fatal(err)
	}
	for next := int64(0); s.Size() < size; next += 1000 {
		batch := batchAt(b, next, 1000, 100, 1700000000000+next)
		h := header(b, batch)
		if err := s.Append(batch, h); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkRecover measures the recovery scan (CRC of every batch, index
// rebuild) of a 256 MiB segment in the page cache.
func BenchmarkRecover(b *testing.B) {
	s := benchSegment(b, vfs.Default, b.TempDir(), 256<<20)
	defer s.Close()
	b.SetBytes(s.Size())
	b.ReportAllocs()
	for b.Loop() {
		res, err := s.Recover(RecoverOptions{})
		if err != nil || res.TruncatedBytes != 0 {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkRead reads 1 MiB slices at offsets spread over a 256 MiB
// segment: index lookup, header walk and the copy into memory.
func BenchmarkRead(b *testing.B) {
	s := benchSegment(b, vfs.Default, b.TempDir(), 256<<20)
	defer s.Close()
	next, _ := s.NextOffset()
	buf := make([]byte, 0, 2<<20)
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		off := (i * 7919 * 1000) % next
		i++
		sl, err := s.Read(off, 1<<20, s.Size(), true)
		if err != nil || sl == nil {
			b.Fatal(err)
		}
		if buf, err = sl.Bytes(buf[:0]); err != nil {
			b.Fatal(err)
		}
		sl.Release()
	}
}

// BenchmarkFindOffsetByTimestamp is the full timestamp → offset search:
// time index, offset index, header walk, and decoding the batch found.
func BenchmarkFindOffsetByTimestamp(b *testing.B) {
	s := benchSegment(b, vfs.Default, b.TempDir(), 256<<20)
	defer s.Close()
	next, _ := s.NextOffset()
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		off := (i * 7919) % next
		i++
		got, ok, err := s.FindOffsetByTimestamp(1700000000000+off, 0)
		if err != nil || !ok || got.Offset > off+1000 {
			b.Fatal(err, ok, got, off)
		}
	}
}
