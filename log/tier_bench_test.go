package log

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// BenchmarkTierRead reads a 16 MiB range of a partition sequentially
// (ReadRecords, 1 MiB at a time) on the operating system's filesystem:
// local (a topic without tiered storage), from copies in a FileStore
// fetched anew for every read of the range (cold: the cache emptied
// first), and from copies already in the cache. SetBytes is the range's
// .log bytes.
func BenchmarkTierRead(b *testing.B) {
	for _, mode := range []string{"local", "remote-cold", "remote-cached"} {
		b.Run(mode, func(b *testing.B) {
			root := b.TempDir()
			cfg := DefaultConfig()
			cfg.RemoteLogStorageSystemEnable = true
			cfg.RemoteStorage = remote.NewFileStore(vfs.Default, filepath.Join(root, "remote"))
			cfg.RemoteLogManagerTaskInterval = time.Hour
			ctx := context.Background()
			d, err := Open(ctx, filepath.Join(root, "data"), cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			props := map[string]string{"segment.bytes": "1048576"}
			if mode != "local" {
				props = map[string]string{"segment.bytes": "1048576", "remote.storage.enable": "true", "local.retention.bytes": "0"}
			}
			if _, err := d.CreateTopic(ctx, "t", 1, props); err != nil {
				b.Fatal(err)
			}
			l, err := d.Partition("t", 0)
			if err != nil {
				b.Fatal(err)
			}
			for range 16 * 16 {
				if _, err := l.Append(producerBatch(b, 64, 1000, l.now().UnixMilli(), record.None)); err != nil {
					b.Fatal(err)
				}
			}
			if mode != "local" {
				if _, err := d.TierNow(ctx); err != nil {
					b.Fatal(err)
				}
				if _, err := l.EnforceRetention(); err != nil {
					b.Fatal(err)
				}
			}
			end := l.local.segs()[len(l.local.segs())-1].BaseOffset() // the sealed segments
			var size int64
			for _, s := range l.local.segs()[:len(l.local.segs())-1] {
				size += s.Size()
			}
			if mode != "local" {
				copies, err := d.RemoteSegments("t", 0)
				if err != nil || len(copies) == 0 {
					b.Fatal("no copies", err)
				}
				size = 0
				for _, m := range copies {
					size += int64(m.SizeInBytes)
				}
				end = l.local.segs()[0].BaseOffset()
			}
			var rr RecordReader
			read := func() {
				for off := int64(0); off < end; {
					next, err := rr.ReadRecords(l, off, 1<<20, func(*record.Record, *record.BatchHeader) error { return nil })
					if err != nil {
						b.Fatal(err)
					}
					off = next
				}
			}
			if mode == "remote-cached" {
				read() // warm the cache
			}
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if mode == "remote-cold" {
					d.tier.cache.dropAll()
				}
				read()
			}
		})
	}
}

// dropAll empties the cache, as a cold start finds it (close would also
// refuse later loads).
func (c *remoteCache) dropAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		c.dropLocked(e)
	}
}
