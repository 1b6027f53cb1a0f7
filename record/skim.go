package record

import "math"

// SkimCheck is what [Reader.SkimWhile] requires of every record besides its
// layout. The zero value admits only timestamps of exactly 0 (and
// NoTimestamp); start from [OpenSkimCheck] and narrow it.
type SkimCheck struct {
	// MinTimestamp and MaxTimestamp bound the records' timestamps (as Next
	// reports them), both inclusive. NoTimestamp (-1) passes whatever they
	// are, as Kafka's timestamp checks skip it.
	MinTimestamp, MaxTimestamp int64
	// KeyRequired fails a record with a null key (compacted topics).
	KeyRequired bool
}

// OpenSkimCheck returns the SkimCheck that every well-formed record passes
// (whose offset delta equals its index): any timestamp, null keys allowed.
func OpenSkimCheck() SkimCheck {
	return SkimCheck{MinTimestamp: math.MinInt64, MaxTimestamp: math.MaxInt64}
}

// SkimmedRecord is what skimming learns of one record.
type SkimmedRecord struct {
	// Index is the record's position in the batch, from 0.
	Index int32
	// OffsetDelta, Timestamp (as Next reports it) and NullKey are the
	// record's.
	OffsetDelta int32
	Timestamp   int64
	NullKey     bool
}

// SkimWhile skims records from the current one on, each checked exactly as
// [Reader.Skim] checks it, while they pass c and their offset delta equals
// their index in the batch (as in every batch a client builds). It stops
// after the first record that does not, and returns it with stopped true:
// the caller deals with it and may call SkimWhile again to go on. At the end
// of the batch, or on an error (see Err), stopped is false. maxTimestamp is
// the largest timestamp of the records passed by this call (NoTimestamp if
// none); the stopped record's is not included.
//
// SkimWhile is Skim in a loop, with the same results record for record
// (the fuzz target FuzzSkimWhile checks it), without the per-record call
// and with the common encodings decoded inline: a log validates every record
// of an appended batch with it at a few nanoseconds per record.
func (r *Reader) SkimWhile(c SkimCheck) (maxTimestamp int64, stop SkimmedRecord, stopped bool) {
	maxTimestamp = NoTimestamp
	if r.err != nil || r.data == nil {
		return maxTimestamp, stop, false
	}
	h := &r.hdr
	appendTime := h.Attributes.TimestampType() == LogAppendTime
	// skimRun's timestamps are the base timestamp plus deltas of at most
	// 2^20: they cannot wrap around unless the base is near the ends.
	fast := h.BaseTimestamp > -1<<62 && h.BaseTimestamp < 1<<62
	for {
		// A run of common records, checked as a whole.
		if fast && r.n < h.RecordsCount {
			pos, n, minDelta, maxDelta, ok := skimRun(r.data, r.pos, r.n, h.RecordsCount, c.KeyRequired)
			if n > r.n {
				lo, hi := h.BaseTimestamp+minDelta, h.BaseTimestamp+maxDelta
				if appendTime {
					lo, hi = h.MaxTimestamp, h.MaxTimestamp
				}
				// A NoTimestamp among other timestamps fails the window
				// test here but passes the record-by-record one below.
				if ok && (lo >= c.MinTimestamp || lo == NoTimestamp && hi == NoTimestamp) && (hi <= c.MaxTimestamp || hi == NoTimestamp) {
					r.pos, r.n = pos, n
					maxTimestamp = max(maxTimestamp, hi)
					continue
				}
				// Some record of the run fails c: find the first one.
				for end := n; r.n < end; {
					rec, ok := r.skimOne()
					if !ok {
						return maxTimestamp, stop, false // cannot happen: skimRun took these
					}
					if !c.passes(rec) {
						return maxTimestamp, rec, true
					}
					maxTimestamp = max(maxTimestamp, rec.Timestamp)
				}
				continue
			}
		}
		// A record skimRun could not take (or the end of the batch).
		rec, ok := r.skimOne()
		if !ok {
			return maxTimestamp, stop, false
		}
		if !c.passes(rec) {
			return maxTimestamp, rec, true
		}
		maxTimestamp = max(maxTimestamp, rec.Timestamp)
	}
}

// skimOne is Skim, returning a SkimmedRecord.
func (r *Reader) skimOne() (SkimmedRecord, bool) {
	n := r.n
	delta, ts, nullKey, ok := r.Skim()
	return SkimmedRecord{Index: n, OffsetDelta: delta, Timestamp: ts, NullKey: nullKey}, ok
}

func (c *SkimCheck) passes(rec SkimmedRecord) bool {
	return rec.OffsetDelta == rec.Index && (!rec.NullKey || !c.KeyRequired) &&
		(rec.Timestamp == NoTimestamp || (rec.Timestamp >= c.MinTimestamp && rec.Timestamp <= c.MaxTimestamp))
}

// skimRun is SkimWhile's loop over a run of common records: no headers,
// every varint at most three bytes long. It skims the records of b from pos
// (the n-th of count) while they are common, checking their layout exactly
// as Skim does, and returns the position and index after them, the smallest
// and largest timestamp delta among them, and whether each one's offset
// delta equals its index and, with keys set, each one has a key. It stops at
// a record it cannot take (an uncommon one, or a malformed one that Skim
// will report) and at the end of the batch. It calls nothing, so that the
// compiler keeps its state in registers.
func skimRun(b []byte, pos int, n, count int32, keys bool) (next int, m int32, minDelta, maxDelta int64, ok bool) {
	minDelta, maxDelta = 1<<62, -1<<62
	var deltas, nulls uint32 // nonzero once an offset delta is off, once a key is null
	for ; n < count; n++ {
		u, p := uvarint3(b, pos, len(b))
		if p == 0 || u&1 != 0 {
			break // a long or negative length
		}
		end := p + int(u>>1)
		if end > len(b) || end <= p {
			break
		}
		u, q := uvarint3(b, p+1, end) // timestamp delta, after the attributes
		if q == 0 {
			break
		}
		ts := zigzag64(uint64(u))
		if u, q = uvarint3(b, q, end); q == 0 {
			break
		}
		delta := u ^ uint32(n)<<1 // u is the delta zig-zag encoded; n ≥ 0
		if u, q = uvarint3(b, q, end); q == 0 || u&1 != 0 && u != 1 {
			break // a key length below -1
		}
		null := u & 1
		q += int(u >> 1) // 0 for null
		if u, q = uvarint3(b, q, end); q == 0 || u&1 != 0 && u != 1 {
			break // a value length below -1, or past the record (q is 0)
		}
		q += int(u >> 1)
		if q != end-1 || b[q] != 0 {
			break // headers, or lengths that do not add up
		}
		minDelta, maxDelta = min(minDelta, ts), max(maxDelta, ts)
		deltas |= delta
		nulls |= null
		pos = end
	}
	return pos, n, minDelta, maxDelta, deltas == 0 && (nulls == 0 || !keys)
}

// uvarint3 decodes an unsigned varint of at most three bytes at b[pos:]: it
// returns the value and the position after it, or next 0 when the encoding
// is longer, or pos is past the end of b, or a multi-byte encoding is not
// followed by at least one more byte of b before its end (never the case
// inside a well-formed record, where the header count comes last; the
// caller's slow path takes such input).
func uvarint3(b []byte, pos, end int) (u uint32, next int) {
	// Written to fit Go's inlining budget: skimRun must call nothing.
	if pos < end {
		if u = uint32(b[pos]); u < 0x80 {
			return u, pos + 1
		}
		if pos+2 < end {
			if u = u&0x7f | uint32(b[pos+1])<<7; u < 0x4000 { // second byte < 0x80
				return u, pos + 2
			}
			if c := uint32(b[pos+2]); c < 0x80 {
				return u&0x3fff | c<<14, pos + 3
			}
		}
	}
	return 0, 0
}

func zigzag32(u uint32) int32 { return int32(u>>1) ^ -int32(u&1) }

func zigzag64(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
