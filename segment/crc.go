package segment

import (
	"math/bits"
	"sync/atomic"

	"github.com/kafkalite/kafkalite/internal/crc"
)

// VerifyCRC checks the CRC-32C of every batch of the slice, as a decoding
// reader with Kafka's check.crcs does, and returns an error matching
// record.ErrCRC (and [ErrCorruptLog], record.ErrCorrupt) that names the
// file and the batch's position if one fails. Point reads, which decode
// one record of a batch, call it so that the record is never returned
// from a batch whose bytes are damaged.
//
// The segment remembers the batches it verified, by position, in a small
// table (a batch verified once is not verified again while the segment
// holds it unchanged), so that repeated point reads into a large batch
// cost the CRC once. It also remembers the batches appended to it by this
// process ([Segment.Append] takes valid batches: the log checked their
// CRC, or computed it, before it appended them), so that the first point
// read into a batch just written does not read all of its bytes again. It
// forgets them when the .log is cut (TruncateTo, Recover, a failed
// append): new bytes may then lie at the same positions. What it remembers
// is only what was verified or written in this process, and a failed
// batch is never remembered; so bytes changed under a running process
// after they were written or verified are found by ReadRecords (which
// checks every batch it decodes) and by the next process, not by a point
// read.
func (sl *Slice) VerifyCRC() error {
	if sl.released {
		return ErrClosed
	}
	lf := &sl.seg.log
	c := lf.crcTable()
	if !c.read.Load() {
		c.read.Store(true)
	}
	end := sl.Position + sl.Size
	var err error
	mapped, _ := lf.view(0, end, func(b []byte) error {
		// No cut can happen while the view lasts: the generation is
		// that of the bytes in b.
		err = lf.verifyCRCs(mappedScanner(b), c, lf.cutGen.Load(), sl.Position, end)
		return nil
	})
	if mapped {
		return err
	}
	gen := lf.cutGen.Load()
	sc := newScanner(lf.f, end, scanWindow)
	err = lf.verifyCRCs(sc, c, gen, sl.Position, end)
	sc.release()
	if lf.cutGen.Load() != gen {
		// Cut while it was read (cut counts the cut before it
		// truncates): the bytes verified may not be the slice's.
		return &Error{File: lf.name, Position: sl.Position, Err: ErrCutUnderRead}
	}
	return err
}

// verifyCRCs verifies the batches of [from, end) with sc.
func (lf *logFile) verifyCRCs(sc *scanner, c *crcCache, gen uint32, from, end int64) error {
	for pos := from; pos < end; {
		h, err := sc.header(pos)
		if err != nil {
			return lf.walkError(pos, err)
		}
		if !c.has(gen, pos) {
			sum, err := sc.crc(pos, h.Size(), crc.Update)
			if err != nil {
				return lf.walkError(pos, err)
			}
			if sum != h.CRC {
				return corruptAt(lf.name, pos, crcError(&h, sum))
			}
			c.add(gen, pos)
		}
		pos += int64(h.Size())
	}
	return nil
}

// crcCache is a direct-mapped table of verified batch positions: each
// slot holds one position (with the cut generation it was verified in);
// a collision replaces the older one, which is then verified again when
// read. Lock-free: slots are atomics.
type crcCache struct {
	forSize int64 // the segment's size when the table was made
	shift   uint
	slots   []atomic.Uint64
	// read: a point read used the table (see forgetUnreadTables).
	read atomic.Bool
}

// Table sizes: one slot per 8 KiB of .log, between 256 and 16,384 slots
// (2 KiB to 128 KiB: on the active segment, and on sealed segments that
// serve point reads).
const (
	crcCacheBytesPerSlot = 8 << 10
	crcCacheMinBits      = 8
	crcCacheMaxBits      = 14
)

// crcTable returns the file's CRC table, making one (or a larger one,
// once the file grew to four times the size the last was made for,
// holding what the last one held).
func (lf *logFile) crcTable() *crcCache {
	size := lf.size.Load()
	c := lf.crcs.Load()
	if c != nil && !tableOutgrown(c.forSize, size, len(c.slots)) {
		return c
	}
	n := tableBits(size)
	nc := &crcCache{forSize: size, shift: uint(64 - n), slots: make([]atomic.Uint64, 1<<n)}
	if c != nil {
		nc.read.Store(c.read.Load())
		for i := range c.slots {
			if k := c.slots[i].Load(); k != 0 {
				nc.slot(int64(uint32(k)) - 1).Store(k)
			}
		}
	}
	if lf.crcs.CompareAndSwap(c, nc) {
		return nc
	}
	return lf.crcs.Load()
}

// tableBits is log2 of the slots of a point-read table (the CRC table,
// the marks table) for a .log of size bytes.
func tableBits(size int64) int {
	return min(max(bits.Len64(uint64(size/crcCacheBytesPerSlot)), crcCacheMinBits), crcCacheMaxBits)
}

// tableOutgrown reports whether a table of slots made for a .log of
// forSize bytes should be made again for one of size bytes.
func tableOutgrown(forSize, size int64, slots int) bool {
	return forSize*4 < size && slots < 1<<crcCacheMaxBits
}

// crcKey packs a cut generation and a position (below 2^31, as Kafka's
// file positions are) into a slot value; 0 is an empty slot.
func crcKey(gen uint32, pos int64) uint64 { return uint64(gen)<<32 | uint64(pos+1) }

func (c *crcCache) slot(pos int64) *atomic.Uint64 {
	return &c.slots[(uint64(pos)*0x9e3779b97f4a7c15)>>c.shift]
}

func (c *crcCache) has(gen uint32, pos int64) bool { return c.slot(pos).Load() == crcKey(gen, pos) }

func (c *crcCache) add(gen uint32, pos int64) { c.slot(pos).Store(crcKey(gen, pos)) }

// rememberVerified records the batch at pos, just appended, as verified
// (see VerifyCRC).
func (lf *logFile) rememberVerified(pos int64) { lf.crcTable().add(lf.cutGen.Load(), pos) }
