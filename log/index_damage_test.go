package log

import (
	"encoding/binary"
	"testing"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
	"github.com/stretchr/testify/require"
)

// TestDamagedIndexOfSealedSegmentIsRebuilt: a sealed segment's .index or
// .timeindex that fails its checks (a byte too many, cut short, garbage,
// missing) is rebuilt from its .log on first use, with a warning and a
// count in the stats, and the partition serves every record, whether the
// directory was shut down cleanly or not (the segment lies below the
// recovery point). The rebuilt file is durable: the next open finds
// nothing to rebuild.
func TestDamagedIndexOfSealedSegmentIsRebuilt(t *testing.T) {
	damages := []struct {
		name    string
		suffix  string
		damage  func(t *testing.T, fsys vfs.FS, name string)
		rebuilt bool // false: the damage needs no rebuild (Kafka recreates a missing .timeindex empty)
	}{
		{"index with a byte appended", segment.IndexSuffix, appendByte, true},
		{"index cut to 3 bytes", segment.IndexSuffix, func(t *testing.T, fsys vfs.FS, name string) { truncateFile(t, fsys, name, 3) }, true},
		{"index of garbage", segment.IndexSuffix, garbage, true},
		{"index missing", segment.IndexSuffix, func(t *testing.T, fsys vfs.FS, name string) { require.NoError(t, fsys.Remove(name)) }, true},
		{"timeindex with a byte appended", segment.TimeIndexSuffix, appendByte, true},
		{"timeindex cut to 3 bytes", segment.TimeIndexSuffix, func(t *testing.T, fsys vfs.FS, name string) { truncateFile(t, fsys, name, 3) }, true},
		{"timeindex of garbage", segment.TimeIndexSuffix, garbage, true},
		{"timeindex missing", segment.TimeIndexSuffix, func(t *testing.T, fsys vfs.FS, name string) { require.NoError(t, fsys.Remove(name)) }, false},
	}
	for _, dm := range damages {
		for _, sd := range shutdowns {
			t.Run(dm.name+"/"+sd.name, func(t *testing.T) {
				matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, c matrix.Case) {
					f := newFixture(t, c, nil)
					const damaged = 2 // a sealed segment in the middle
					dm.damage(t, f.fsys, f.file(damaged, dm.suffix))

					d, l := f.reopen(t, sd.clean)
					end := l.LogEndOffset()
					require.Equal(t, int64(len(f.recs)), end)
					f.requireRecords(t, l, 0, end)
					f.requirePointReads(t, l, f.bases[damaged], f.bases[damaged+1])
					// The time index answers again: every batch's first record.
					for _, b := range f.batchesOf(damaged) {
						got, ok, err := l.OffsetForTimestamp(fixtureTimestamp(b.baseOffset))
						require.NoError(t, err)
						require.True(t, ok)
						require.Equal(t, b.baseOffset, got.Offset)
					}
					want := int64(0)
					if dm.rebuilt {
						want = 1
						require.Equal(t, 1, f.logs.count("rebuilt the indexes of a segment"), "one warning")
						require.Equal(t, 1, f.logs.count(f.file(damaged, segment.LogSuffix)), "naming the segment")
					}
					require.Equal(t, want, l.Stats().IndexRebuilds)
					require.Zero(t, l.Stats().DamagedSegments, "the .log is whole")
					for _, suffix := range []string{segment.IndexSuffix, segment.TimeIndexSuffix} {
						size := fileLen(t, f.fsys, f.file(damaged, suffix))
						require.Zero(t, size%map[string]int64{segment.IndexSuffix: 8, segment.TimeIndexSuffix: 12}[suffix], "%s is whole entries", suffix)
					}
					require.NoError(t, d.Close())

					// The rebuilt files were kept: nothing to rebuild this time.
					_, l = f.reopen(t, true)
					f.requireRecords(t, l, 0, end)
					require.Zero(t, l.Stats().IndexRebuilds)
				})
			})
		}
	}
}

// TestDamagedSealedLogKeepsTheRestReadable: a sealed .log damaged in the
// middle of the partition (below the recovery point, or after a clean
// shutdown) costs only what the damage destroyed. The records before the
// damage in its segment and every record of the other segments stay
// readable, no segment is deleted, and a read inside the lost range fails
// with a typed corruption error naming the file and the position where
// the readable part of the segment ends, never with a partial batch.
func TestDamagedSealedLogKeepsTheRestReadable(t *testing.T) {
	const damaged = 2 // a sealed segment in the middle
	const bad = 4     // its batch that the damage hits
	damages := []struct {
		name string
		// damage breaks batch b of the segment's .log.
		damage func(t *testing.T, f *fixture, b fixtureBatch)
		// lostToEnd: every batch from b to the segment's end is lost (no
		// index entry leads past the damage); otherwise only b is.
		lostToEnd bool
		// rebuilt: the index points past the damage and is rebuilt.
		rebuilt bool
	}{
		{"cut inside a batch", func(t *testing.T, f *fixture, b fixtureBatch) {
			truncateFile(t, f.fsys, f.file(damaged, segment.LogSuffix), b.position+b.size/2)
		}, true, true},
		{"cut at a batch boundary", func(t *testing.T, f *fixture, b fixtureBatch) {
			truncateFile(t, f.fsys, f.file(damaged, segment.LogSuffix), b.position)
		}, true, true},
		{"batch length overwritten", func(t *testing.T, f *fixture, b fixtureBatch) {
			writeAt(t, f.fsys, f.file(damaged, segment.LogSuffix), b.position+8, []byte{0x7f, 0xff, 0xff, 0xf0})
		}, false, false},
		{"zeros over a batch header", func(t *testing.T, f *fixture, b fixtureBatch) {
			writeAt(t, f.fsys, f.file(damaged, segment.LogSuffix), b.position, make([]byte, 61))
		}, false, false},
	}
	for _, dm := range damages {
		for _, sd := range shutdowns {
			t.Run(dm.name+"/"+sd.name, func(t *testing.T) {
				matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, c matrix.Case) {
					f := newFixture(t, c, nil)
					batches := f.batchesOf(damaged)
					b := batches[bad]
					dm.damage(t, f, b)
					logFile := f.file(damaged, segment.LogSuffix)

					_, l := f.reopen(t, sd.clean)
					end := l.LogEndOffset()
					require.Equal(t, int64(len(f.recs)), end, "no segment was deleted or truncated away")
					for i := range fixtureSegments {
						_, err := f.fsys.Stat(f.file(i, segment.LogSuffix))
						require.NoError(t, err, "segment %d is still there", i)
					}
					// Before the damage, and every other segment.
					f.requireRecords(t, l, 0, b.baseOffset)
					f.requirePointReads(t, l, f.bases[damaged], b.baseOffset)
					f.requireRecords(t, l, f.bases[damaged+1], end)
					// Inside the damage: a typed error, never a record. The
					// lost range ends at the first batch after the damage
					// that an index entry points at (reads find batches by
					// walking from an entry, and no walk gets past the
					// damage), or with the segment.
					lost := f.bases[damaged+1]
					if !dm.lostToEnd {
						for _, p := range indexPositions(t, f.fsys, f.file(damaged, segment.IndexSuffix)) {
							if int64(p) > b.position {
								for _, after := range batches {
									if after.position == int64(p) {
										lost = min(lost, after.baseOffset)
									}
								}
							}
						}
					}
					for off := b.baseOffset; off < lost; off++ {
						_, _, err := l.ReadRecord(off)
						requireCorruptAt(t, err, logFile, b.position)
						_, err = l.ReadRecords(off, 1<<20, func(*record.Record, *record.BatchHeader) error { return nil })
						requireCorruptAt(t, err, logFile, b.position)
						_, err = l.Read(off, 1<<20, true)
						se := requireCorruptAt(t, err, logFile, b.position)
						require.Equal(t, lost, se.NextOffset, "where reads go on")
					}
					// After the damage, from where an index entry leads past it.
					f.requirePointReads(t, l, lost, f.bases[damaged+1])
					want := int64(0)
					if dm.rebuilt {
						want = 1
					}
					require.Equal(t, want, l.Stats().IndexRebuilds)
					if dm.lostToEnd {
						require.Equal(t, 1, l.Stats().DamagedSegments)
					}
				})
			})
		}
	}
}

// TestIndexDamageFoundByARead: an .index entry in the middle of a sealed
// segment that names another offset than its batch's (it passes the
// checks made on open) is found by the read that uses it; the index is
// rebuilt and the read answered.
func TestIndexDamageFoundByARead(t *testing.T) {
	for _, sd := range shutdowns {
		t.Run(sd.name, func(t *testing.T) {
			matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, c matrix.Case) {
				f := newFixture(t, c, nil)
				const damaged = 1
				name := f.file(damaged, segment.IndexSuffix)
				require.GreaterOrEqual(t, fileLen(t, f.fsys, name), int64(16), "two entries at least")
				entry := readAt(t, f.fsys, name, 0, 4)
				entry[3]-- // the first entry's offset, one less
				writeAt(t, f.fsys, name, 0, entry)

				_, l := f.reopen(t, sd.clean)
				f.requirePointReads(t, l, f.bases[damaged], f.bases[damaged+1])
				f.requireRecords(t, l, 0, l.LogEndOffset())
				require.Equal(t, int64(1), l.Stats().IndexRebuilds)
			})
		})
	}
}

// indexPositions reads the positions of a trimmed .index file's entries.
func indexPositions(t *testing.T, fsys vfs.FS, name string) []index.Position {
	t.Helper()
	b := readAt(t, fsys, name, 0, int(fileLen(t, fsys, name)))
	var out []index.Position
	for ; len(b) >= index.OffsetIndexEntryBytes; b = b[index.OffsetIndexEntryBytes:] {
		out = append(out, index.Position(binary.BigEndian.Uint32(b[4:])))
	}
	return out
}
