package record

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// skimEvent is what one SkimWhile call returns.
type skimEvent struct {
	maxTimestamp int64
	stop         SkimmedRecord
	stopped      bool
}

// skimAll calls SkimWhile until it reports the end, as the log does.
func skimAll(r *Reader, c SkimCheck) []skimEvent {
	var evs []skimEvent
	for {
		ts, stop, stopped := r.SkimWhile(c)
		evs = append(evs, skimEvent{ts, stop, stopped})
		if !stopped {
			return evs
		}
	}
}

// skimAllRef is skimAll done with Skim record by record: SkimWhile's
// specification.
func skimAllRef(r *Reader, c SkimCheck) []skimEvent {
	var evs []skimEvent
	ev := skimEvent{maxTimestamp: NoTimestamp}
	for i := r.n; ; i++ {
		delta, ts, nullKey, ok := r.Skim()
		if !ok {
			return append(evs, ev)
		}
		rec := SkimmedRecord{Index: i, OffsetDelta: delta, Timestamp: ts, NullKey: nullKey}
		if delta != i || (nullKey && c.KeyRequired) || (ts != NoTimestamp && (ts < c.MinTimestamp || ts > c.MaxTimestamp)) {
			ev.stop, ev.stopped = rec, true
			evs = append(evs, ev)
			ev = skimEvent{maxTimestamp: NoTimestamp}
			continue
		}
		ev.maxTimestamp = max(ev.maxTimestamp, ts)
	}
}

// requireSkimMatches checks SkimWhile against Skim on batch: the same
// events, and the same error (message included) or none.
func requireSkimMatches(t *testing.T, batch []byte, c SkimCheck) []skimEvent {
	t.Helper()
	fast, ref := NewReader(ReaderOptions{SkipCRC: true, MaxDecompressedBytes: 1 << 20}), NewReader(ReaderOptions{SkipCRC: true, MaxDecompressedBytes: 1 << 20})
	if fast.Reset(batch) != nil {
		require.Error(t, ref.Reset(batch))
		return nil
	}
	require.NoError(t, ref.Reset(batch))
	got, want := skimAll(fast, c), skimAllRef(ref, c)
	require.Equal(t, want, got)
	if ref.Err() == nil {
		require.NoError(t, fast.Err())
	} else {
		require.EqualError(t, fast.Err(), ref.Err().Error())
	}
	return got
}

type skimRec struct {
	delta     int32
	ts        int64
	key, val  []byte
	headers   []Header
	rawLength int // >0: overwrite the record's length varint's first byte
}

func skimBatch(t *testing.T, h BatchHeader, recs []skimRec) []byte {
	t.Helper()
	var b Builder
	b.Reset(h, DefaultLevel)
	for _, r := range recs {
		require.NoError(t, b.AppendWithOffsetDelta(r.delta, r.ts, r.key, r.val, r.headers))
	}
	out, err := b.Build()
	require.NoError(t, err)
	return bytes.Clone(out)
}

func TestSkimWhile(t *testing.T) {
	const ts0 = int64(1_700_000_000_000)
	plain := func(n int, f func(i int, r *skimRec)) []skimRec {
		recs := make([]skimRec, n)
		for i := range recs {
			recs[i] = skimRec{delta: int32(i), ts: ts0 + int64(i%7), key: fmt.Appendf(nil, "k%d", i), val: bytes.Repeat([]byte{'v'}, 100)}
			if f != nil {
				f(i, &recs[i])
			}
		}
		return recs
	}
	window := SkimCheck{MinTimestamp: ts0, MaxTimestamp: ts0 + 5, KeyRequired: true}
	tests := []struct {
		name  string
		h     func(h *BatchHeader)
		recs  []skimRec
		check SkimCheck
		stops []int32 // indexes of the records SkimWhile stops at
	}{
		{name: "common records", recs: plain(1000, nil), check: OpenSkimCheck()},
		{name: "keys required", recs: plain(100, nil), check: SkimCheck{MinTimestamp: math.MinInt64, MaxTimestamp: math.MaxInt64, KeyRequired: true}},
		{name: "null keys", recs: plain(10, func(i int, r *skimRec) {
			if i%4 == 1 {
				r.key = nil
			}
		}), check: window, stops: []int32{1, 5, 6, 9}},
		{name: "null keys allowed", recs: plain(10, func(i int, r *skimRec) { r.key = nil }), check: OpenSkimCheck()},
		{name: "null and empty values", recs: plain(10, func(i int, r *skimRec) {
			if i%2 == 0 {
				r.val = nil
			} else {
				r.val = []byte{}
			}
		}), check: OpenSkimCheck()},
		{name: "timestamps outside the window", recs: plain(20, nil), check: window, stops: []int32{6, 13}},
		{name: "no timestamps among others", recs: plain(20, func(i int, r *skimRec) {
			if i%3 == 0 {
				r.ts = NoTimestamp
			}
		}), check: window, stops: []int32{13}},
		{name: "offset deltas not 0..n-1", recs: plain(8, func(i int, r *skimRec) { r.delta = int32(i * 2) }), check: OpenSkimCheck(), stops: []int32{1, 2, 3, 4, 5, 6, 7}},
		{name: "headers", recs: plain(30, func(i int, r *skimRec) {
			if i%3 == 0 {
				r.headers = []Header{{Key: []byte("h"), Value: []byte("v")}}
			}
		}), check: OpenSkimCheck()},
		{name: "three-byte varints", recs: plain(20000, func(i int, r *skimRec) {
			r.ts = ts0 + int64(i)*100
			if i%1000 == 0 {
				r.val = bytes.Repeat([]byte{'w'}, 20000)
			}
		}), check: OpenSkimCheck()},
		{name: "five-byte varints", recs: plain(5, func(i int, r *skimRec) {
			r.ts = ts0 + int64(i)<<30
		}), check: OpenSkimCheck()},
		{name: "log append time", h: func(h *BatchHeader) { h.Attributes = h.Attributes.WithTimestampType(LogAppendTime) },
			recs: plain(10, nil), check: SkimCheck{MinTimestamp: 5, MaxTimestamp: 10}, stops: []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := producerHeader()
			if tc.h != nil {
				tc.h(&h)
			}
			batch := skimBatch(t, h, tc.recs)
			evs := requireSkimMatches(t, batch, tc.check)
			var stops []int32
			for _, ev := range evs {
				if ev.stopped {
					stops = append(stops, ev.stop.Index)
				}
			}
			require.Equal(t, tc.stops, stops)
			// Every damage of one byte, as the log may meet it.
			if len(batch) < 5000 {
				for i := BatchHeaderLen; i < len(batch); i++ {
					for _, v := range []byte{0, 1, 0x7f, 0x80, 0xff, batch[i] + 1} {
						bad := bytes.Clone(batch)
						bad[i] = v
						requireSkimMatches(t, bad, tc.check)
					}
				}
			}
		})
	}
}

// FuzzSkimWhile: SkimWhile is Skim record by record. Invariants: no panic;
// the same records stopped at, with the same fields, in the same calls;
// the same largest timestamps in between; the same error, message and
// all, or none (and, by FuzzDecode, Skim accepts exactly what Next
// accepts, so SkimWhile does too).
func FuzzSkimWhile(f *testing.F) {
	seedBatches(f)
	h := producerHeader()
	var b Builder
	for _, n := range []int{1, 3, 200} {
		b.Reset(h, DefaultLevel)
		for i := range n {
			var hdrs []Header
			if i%50 == 7 {
				hdrs = []Header{{Key: []byte("h"), Value: nil}}
			}
			var key []byte
			if i%9 != 4 {
				key = fmt.Appendf(nil, "key-%d", i)
			}
			if err := b.Append(1_700_000_000_000+int64(i*i), key, bytes.Repeat([]byte{'x'}, i%130), hdrs); err != nil {
				f.Fatal(err)
			}
		}
		out, err := b.Build()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(bytes.Clone(out))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < BatchHeaderLen {
			return
		}
		// The check's parameters come from the CRC field, which SkipCRC
		// leaves unread: mutations pick them without breaking the batch.
		sel := data[17:21]
		c := OpenSkimCheck()
		c.KeyRequired = sel[0]&1 != 0
		if sel[0]&2 != 0 {
			h, err := ParseHeader(data)
			if err == nil {
				c.MinTimestamp = h.BaseTimestamp + int64(int8(sel[1]))
				c.MaxTimestamp = c.MinTimestamp + int64(sel[2])
			}
		}
		requireSkimMatches(t, data, c)
	})
}

// skipToRef is SkipTo without its inline fast path: the general decoders
// only, its specification.
func skipToRef(r *Reader, offset int64) bool {
	if r.err != nil || r.data == nil {
		return false
	}
	for r.n < r.hdr.RecordsCount && r.pos < len(r.data) {
		bodyLen, p, ok := readVarint(r.data, r.pos)
		if !ok || bodyLen < 1 || int(bodyLen) > len(r.data)-p {
			r.err = recordsErr(r.hdr.BaseOffset, r.pos, ErrBadRecord, "record length while skipping")
			return false
		}
		end := p + int(bodyLen)
		_, q, ok := readVarlong(r.data[:end], p+1)
		var delta int32
		if ok {
			delta, _, ok = readVarint(r.data[:end], q)
		}
		if !ok {
			r.err = recordsErr(r.hdr.BaseOffset, p, ErrVarint, "record header while skipping")
			return false
		}
		if r.hdr.BaseOffset+int64(delta) >= offset {
			return true
		}
		r.pos = end
		r.n++
	}
	return r.n < r.hdr.RecordsCount
}

// FuzzSkipTo: SkipTo, with its inline decoding of the common encodings,
// stops where the general decoders stop, with the same result and error;
// and on a batch that decodes, SkipTo then Next gives the first record at
// or after the target. Invariant: no panic.
func FuzzSkipTo(f *testing.F) {
	for i, b := range testdataBatches(f) {
		f.Add(b, uint16(i%5))
	}
	f.Fuzz(func(t *testing.T, data []byte, target uint16) {
		r := NewReader(ReaderOptions{SkipCRC: true, MaxDecompressedBytes: 1 << 20})
		ref := NewReader(ReaderOptions{SkipCRC: true, MaxDecompressedBytes: 1 << 20})
		if r.Reset(data) != nil {
			return
		}
		require.NoError(t, ref.Reset(data))
		off := r.Header().BaseOffset + int64(target)
		got, want := r.SkipTo(off), skipToRef(ref, off)
		require.Equal(t, want, got)
		require.Equal(t, ref.pos, r.pos)
		require.Equal(t, ref.n, r.n)
		require.Equal(t, fmt.Sprint(ref.Err()), fmt.Sprint(r.Err()))
		_, recs, err := decodeFuzz(NewReader(ReaderOptions{SkipCRC: true, MaxDecompressedBytes: 1 << 20}), data)
		if err != nil || !got {
			return
		}
		require.True(t, r.Next(), "%v", r.Err())
		for _, rec := range recs {
			if rec.Offset >= off {
				require.True(t, rec.Equal(r.Record()))
				return
			}
		}
		t.Fatalf("SkipTo found offset %d, decoding did not", r.Record().Offset)
	})
}
