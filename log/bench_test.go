package log

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// benchBatch is a producer batch of 1,000 records with 100-byte values.
func benchBatch(b *testing.B) []byte {
	return producerBatch(b, 1000, 100, time.Now().UnixMilli(), record.None)
}

func benchDir(b *testing.B, path string, props map[string]string, topic string, partitions int32) (*Dir, []*Log) {
	return benchDirConfig(b, DefaultConfig(), path, props, topic, partitions)
}

func benchDirConfig(b *testing.B, cfg Config, path string, props map[string]string, topic string, partitions int32) (*Dir, []*Log) {
	d, err := Open(context.Background(), path, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := d.CreateTopic(context.Background(), topic, partitions, props); err != nil {
		b.Fatal(err)
	}
	var logs []*Log
	for p := range partitions {
		l, err := d.Partition(topic, p)
		if err != nil {
			b.Fatal(err)
		}
		logs = append(logs, l)
	}
	return d, logs
}

// BenchmarkAppend appends 1,000 × 100-byte record batches to one partition
// (validation, offset assignment, index entries) against a plain sequential
// write of the same bytes, both through the page cache: "log" as
// configured by default (the write overlapped with the validation, see
// Config.OverlapAppendBytes), "log-serial" without the overlap. cpu-µs/op
// is the process's CPU time per append. The log deletes its old segments
// every 256 MiB outside the timer so the disk does not fill.
func BenchmarkAppend(b *testing.B) {
	batch := benchBatch(b)
	for _, overlap := range []bool{true, false} {
		name := "log"
		cfg := DefaultConfig()
		if !overlap {
			name, cfg.OverlapAppendBytes = "log-serial", 0
		}
		b.Run(name, func(b *testing.B) { benchAppendLog(b, cfg, batch) })
	}
	b.Run("plain-file", func(b *testing.B) {
		f, err := os.Create(filepath.Join(b.TempDir(), "plain"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		var written int64
		b.SetBytes(int64(len(batch)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.Write(batch); err != nil {
				b.Fatal(err)
			}
			if written += int64(len(batch)); written > 512<<20 {
				b.StopTimer()
				if err := f.Truncate(0); err != nil {
					b.Fatal(err)
				}
				if _, err := f.Seek(0, io.SeekStart); err != nil {
					b.Fatal(err)
				}
				written = 0
				b.StartTimer()
			}
		}
		b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
	})
}

func benchAppendLog(b *testing.B, cfg Config, batch []byte) {
	d, logs := benchDirConfig(b, cfg, b.TempDir(), map[string]string{"segment.bytes": fmt.Sprint(256 << 20), "file.delete.delay.ms": "0"}, "bench", 1)
	defer d.Close()
	l := logs[0]
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	var cpu time.Duration
	c0 := cpuTime()
	for b.Loop() {
		if err := record.SetBaseOffset(batch, 0); err != nil {
			b.Fatal(err)
		}
		if _, err := l.Append(batch); err != nil {
			b.Fatal(err)
		}
		if len(l.local.segs()) > 2 {
			b.StopTimer()
			cpu += cpuTime() - c0
			if _, err := l.DeleteRecordsBefore(l.local.segs()[len(l.local.segs())-1].BaseOffset()); err != nil {
				b.Fatal(err)
			}
			if err := l.RemoveDeleted(true); err != nil {
				b.Fatal(err)
			}
			c0 = cpuTime()
			b.StartTimer()
		}
	}
	cpu += cpuTime() - c0
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkOpenClean opens a directory of 100 partitions × 10 segments
// after a clean shutdown: no segment is scanned.
func BenchmarkOpenClean(b *testing.B) {
	path := b.TempDir()
	d, logs := benchDir(b, path, map[string]string{"segment.bytes": "20000"}, "t", 100)
	small := producerBatch(b, 10, 150, time.Now().UnixMilli(), record.None)
	for _, l := range logs {
		for len(l.local.segs()) < 10 {
			_ = record.SetBaseOffset(small, 0)
			if _, err := l.Append(small); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := d.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		d, err := Open(context.Background(), path, DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if !d.Recovery().Clean || d.Recovery().Partitions != 100 {
			b.Fatal("not a clean open of 100 partitions", d.Recovery())
		}
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkOpen1000Partitions opens a directory of 1,000 partitions (10
// topics of 100), each holding 100 records of 100 bytes in one segment,
// after a clean shutdown (no scan) and an unclean one whose recovery
// points are lost too (no clean-shutdown marker, no recovery-point
// checkpoint: every partition's segment is scanned), on the real
// filesystem. ms/op is one Open; the Close after it is not timed.
func BenchmarkOpen1000Partitions(b *testing.B) {
	path := b.TempDir()
	d, err := Open(context.Background(), path, DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	batch := producerBatch(b, 100, 100, time.Now().UnixMilli(), record.None)
	for t := range 10 {
		name := fmt.Sprintf("t%d", t)
		if _, err := d.CreateTopic(context.Background(), name, 100, nil); err != nil {
			b.Fatal(err)
		}
		for p := range int32(100) {
			l, err := d.Partition(name, p)
			if err != nil {
				b.Fatal(err)
			}
			_ = record.SetBaseOffset(batch, 0)
			if _, err := l.Append(batch); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := d.Close(); err != nil {
		b.Fatal(err)
	}
	for _, clean := range []bool{true, false} {
		name := "clean"
		if !clean {
			name = "unclean"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				if !clean {
					_ = os.Remove(filepath.Join(path, checkpoint.CleanShutdownFile))
					_ = os.Remove(filepath.Join(path, checkpoint.RecoveryPointFile))
				}
				b.StartTimer()
				d, err := Open(context.Background(), path, DefaultConfig())
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				rec := d.Recovery()
				if rec.Partitions < 1000 || rec.Clean != clean || (!clean && rec.SegmentsRecovered < 1000) {
					b.Fatalf("not the open asked for: %+v", rec)
				}
				if err := d.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
		})
	}
}

// BenchmarkReadRaw reads a partition of 256 MiB from offset 0 as raw batches
// (file slices copied into a buffer, as a fetch does) against reading the
// same .log files with os.ReadFile.
func BenchmarkReadRaw(b *testing.B) {
	d, logs := benchDir(b, b.TempDir(), map[string]string{"segment.bytes": fmt.Sprint(64 << 20)}, "t", 1)
	defer d.Close()
	l := logs[0]
	batch := benchBatch(b)
	for l.Stats().Size < 256<<20 {
		_ = record.SetBaseOffset(batch, 0)
		if _, err := l.Append(batch); err != nil {
			b.Fatal(err)
		}
	}
	size := l.Stats().Size
	buf := make([]byte, 0, 2<<20)
	b.Run("log", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for off := int64(0); off < l.LogEndOffset(); {
				res, err := l.Read(off, 1<<20, true)
				if err != nil {
					b.Fatal(err)
				}
				if buf, err = res.Slice.Bytes(buf[:0]); err != nil {
					b.Fatal(err)
				}
				off = res.Slice.LastOffset + 1
				res.Release()
			}
		}
	})
	b.Run("os.ReadFile", func(b *testing.B) {
		var files []string
		for _, s := range l.local.segs() {
			files = append(files, s.LogFile())
		}
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, f := range files {
				if _, err := os.ReadFile(f); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkDurableAppend runs 16 goroutines appending 100-record batches
// durably: with group commit (AppendDurable) and with one fsync per append
// (Append then Flush). It reports records/s and the p50/p99 latency of an
// append.
func BenchmarkDurableAppend(b *testing.B) {
	for _, mode := range []string{"group-commit", "fsync-per-append"} {
		b.Run(mode, func(b *testing.B) {
			d, logs := benchDir(b, b.TempDir(), nil, "t", 1)
			defer d.Close()
			l := logs[0]
			const workers = 16
			var mu sync.Mutex
			var lat []time.Duration
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			per := (b.N + workers - 1) / workers
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					batch := producerBatch(b, 100, 100, time.Now().UnixMilli(), record.None)
					mine := make([]time.Duration, 0, per)
					for range per {
						_ = record.SetBaseOffset(batch, 0)
						t0 := time.Now()
						var err error
						if mode == "group-commit" {
							_, err = l.AppendDurable(context.Background(), batch)
						} else if _, err = l.Append(batch); err == nil {
							err = l.Flush(context.Background())
						}
						if err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, time.Since(t0))
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			slices.Sort(lat)
			b.ReportMetric(float64(len(lat)*100)/elapsed.Seconds(), "records/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkRecoveryScan opens a directory after an unclean shutdown (no
// clean-shutdown marker, recovery point 0) and reports the seconds per GB
// scanned.
func BenchmarkRecoveryScan(b *testing.B) {
	path := b.TempDir()
	d, logs := benchDir(b, path, map[string]string{"segment.bytes": fmt.Sprint(64 << 20)}, "t", 1)
	batch := benchBatch(b)
	for logs[0].Stats().Size < 256<<20 {
		_ = record.SetBaseOffset(batch, 0)
		if _, err := logs[0].Append(batch); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		b.Fatal(err)
	}
	var scanned int64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		_ = os.Remove(filepath.Join(path, checkpoint.CleanShutdownFile))
		_ = checkpoint.WriteOffsets(vfs.Default, filepath.Join(path, checkpoint.RecoveryPointFile), nil)
		b.StartTimer()
		d, err := Open(context.Background(), path, DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		scanned = d.Recovery().BytesScanned
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.SetBytes(scanned)
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/(float64(scanned)/1e9), "s/GB")
}

// BenchmarkPointRead reads single records at random offsets of a partition
// of 1M records in 1,000-record uncompressed batches.
func BenchmarkPointRead(b *testing.B) {
	d, logs := benchDir(b, b.TempDir(), nil, "t", 1)
	defer d.Close()
	l := logs[0]
	batch := benchBatch(b)
	for l.LogEndOffset() < 1_000_000 {
		_ = record.SetBaseOffset(batch, 0)
		if _, err := l.Append(batch); err != nil {
			b.Fatal(err)
		}
	}
	offsets := make([]int64, 10_000)
	for i := range offsets {
		offsets[i] = rand.Int64N(l.LogEndOffset())
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		off := offsets[i%len(offsets)]
		i++
		rec, ok, err := l.ReadRecord(off)
		if err != nil || !ok || rec.Offset != off || !bytes.HasPrefix(rec.Key, []byte("k")) {
			b.Fatal(err, ok, rec.Offset, off)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reads/s")
}

// BenchmarkReadRecords decodes every record of 64 MiB of batches in reads
// of 4 MiB, through Log.ReadRecords (a read buffer per call) and through
// one RecordReader (its buffers reused).
func BenchmarkReadRecords(b *testing.B) {
	d, logs := benchDir(b, b.TempDir(), map[string]string{"segment.bytes": fmt.Sprint(64 << 20)}, "t", 1)
	defer d.Close()
	l := logs[0]
	batch := benchBatch(b)
	for l.Stats().Size < 64<<20 {
		_ = record.SetBaseOffset(batch, 0)
		if _, err := l.Append(batch); err != nil {
			b.Fatal(err)
		}
	}
	size := l.Stats().Size
	var sum int
	count := func(rec *record.Record, _ *record.BatchHeader) error { sum += len(rec.Value); return nil }
	var rr RecordReader
	for _, bc := range []struct {
		name string
		read func(off int64) (int64, error)
	}{
		{"Log.ReadRecords", func(off int64) (int64, error) { return l.ReadRecords(off, 4<<20, count) }},
		{"RecordReader", func(off int64) (int64, error) { return rr.ReadRecords(l, off, 4<<20, count) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for off := int64(0); off < l.LogEndOffset(); {
					next, err := bc.read(off)
					if err != nil {
						b.Fatal(err)
					}
					off = next
				}
			}
		})
	}
}
