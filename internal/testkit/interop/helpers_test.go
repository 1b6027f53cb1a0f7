package interop

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testHeader and testRecord are the test's own description of a record,
// independent of both implementations. nil is null, []byte{} is empty.
type testHeader struct {
	Key   string
	Value []byte
}

type testRecord struct {
	OffsetDelta int32
	Timestamp   int64
	Key         []byte
	Value       []byte
	Headers     []testHeader
}

func (r testRecord) recordHeaders() []record.Header {
	if r.Headers == nil {
		return nil
	}
	hs := make([]record.Header, len(r.Headers))
	for i, h := range r.Headers {
		hs[i] = record.Header{Key: []byte(h.Key), Value: h.Value}
	}
	return hs
}

// batchSpec holds the header fields of a batch as the test means them.
type batchSpec struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// Attribute bits and codec ids, written out from Kafka's DefaultRecordBatch
// rather than taken from the record package.
const (
	attrGzip          int16 = 1
	attrSnappy        int16 = 2
	attrLZ4           int16 = 3
	attrZstd          int16 = 4
	attrLogAppendTime int16 = 0x08
	attrTransactional int16 = 0x10
	attrControl       int16 = 0x20
	attrDeleteHorizon int16 = 0x40
)

const (
	// ts0 is the timestamp most records start from (2023-11-14T22:13:20Z).
	ts0 = int64(1700000000000)
	// logAppendTime is the broker time stamped on LogAppendTime batches.
	logAppendTime = int64(1700000123456)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// specFor derives the header a producer writes for recs (Kafka's
// MemoryRecordsBuilder): baseTimestamp the first record's, maxTimestamp the
// largest, lastOffsetDelta the last record's.
func specFor(base batchSpec, recs []testRecord) batchSpec {
	s := base
	s.NumRecords = int32(len(recs))
	if s.Attributes&attrDeleteHorizon == 0 {
		s.BaseTimestamp = -1
		if len(recs) > 0 {
			s.BaseTimestamp = recs[0].Timestamp
		}
	}
	if s.Attributes&attrLogAppendTime == 0 {
		s.MaxTimestamp = -1
		for _, r := range recs {
			s.MaxTimestamp = max(s.MaxTimestamp, r.Timestamp)
		}
	}
	if len(recs) > 0 {
		s.LastOffsetDelta = max(s.LastOffsetDelta, recs[len(recs)-1].OffsetDelta)
	}
	return s
}

// kmsgRecord appends r encoded by kmsg.Record.AppendTo, with its length
// computed by encoding once without it.
func kmsgRecord(dst []byte, r testRecord, baseTimestamp int64) []byte {
	kr := kmsg.Record{
		TimestampDelta64: r.Timestamp - baseTimestamp,
		TimestampDelta:   int32(r.Timestamp - baseTimestamp),
		OffsetDelta:      r.OffsetDelta,
		Key:              r.Key,
		Value:            r.Value,
	}
	for _, h := range r.Headers {
		kr.Headers = append(kr.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
	}
	body := kr.AppendTo(nil) // Length 0 takes one byte
	kr.Length = int32(len(body) - 1)
	return kr.AppendTo(dst)
}

// kmsgRecords encodes recs back to back: an uncompressed records section.
func kmsgRecords(recs []testRecord, baseTimestamp int64) []byte {
	var b []byte
	for _, r := range recs {
		b = kmsgRecord(b, r, baseTimestamp)
	}
	return b
}

// kmsgBatch encodes a batch with kmsg.RecordBatch.AppendTo around section
// (already compressed if the attributes say so), with batchLength and the
// CRC-32C computed here.
func kmsgBatch(s batchSpec, section []byte) []byte {
	kb := kmsg.RecordBatch{
		FirstOffset:          s.BaseOffset,
		Length:               int32(49 + len(section)),
		PartitionLeaderEpoch: s.PartitionLeaderEpoch,
		Magic:                2,
		Attributes:           s.Attributes,
		LastOffsetDelta:      s.LastOffsetDelta,
		FirstTimestamp:       s.BaseTimestamp,
		MaxTimestamp:         s.MaxTimestamp,
		ProducerID:           s.ProducerID,
		ProducerEpoch:        s.ProducerEpoch,
		FirstSequence:        s.BaseSequence,
		NumRecords:           s.NumRecords,
		Records:              section,
	}
	b := kb.AppendTo(nil)
	kb.CRC = int32(crc32.Checksum(b[21:], castagnoli))
	return kb.AppendTo(b[:0])
}

// requireKmsgHeader decodes b with kmsg.RecordBatch.ReadFrom, checks every
// header field against want and the CRC independently, and returns the
// batch.
func requireKmsgHeader(t *testing.T, b []byte, want batchSpec) kmsg.RecordBatch {
	t.Helper()
	var kb kmsg.RecordBatch
	require.NoError(t, kb.ReadFrom(b))
	require.Equal(t, len(b), 12+int(kb.Length), "batchLength must cover the batch exactly")
	require.Equal(t, want.BaseOffset, kb.FirstOffset, "baseOffset")
	require.Equal(t, want.PartitionLeaderEpoch, kb.PartitionLeaderEpoch, "partitionLeaderEpoch")
	require.Equal(t, int8(2), kb.Magic, "magic")
	require.Equal(t, crc32.Checksum(b[21:], castagnoli), uint32(kb.CRC), "CRC-32C over bytes 21..end")
	require.Equal(t, want.Attributes, kb.Attributes, "attributes %#04x vs %#04x", want.Attributes, kb.Attributes)
	require.Equal(t, want.LastOffsetDelta, kb.LastOffsetDelta, "lastOffsetDelta")
	require.Equal(t, want.BaseTimestamp, kb.FirstTimestamp, "baseTimestamp")
	require.Equal(t, want.MaxTimestamp, kb.MaxTimestamp, "maxTimestamp")
	require.Equal(t, want.ProducerID, kb.ProducerID, "producerId")
	require.Equal(t, want.ProducerEpoch, kb.ProducerEpoch, "producerEpoch")
	require.Equal(t, want.BaseSequence, kb.FirstSequence, "baseSequence")
	require.Equal(t, want.NumRecords, kb.NumRecords, "recordsCount")
	return kb
}

// requireKmsgRecords parses an uncompressed records section with
// kmsg.Record.ReadFrom and compares each record to want, null distinct from
// empty. kmsg reads one record from a slice and does not say how much it
// consumed, so the section is split on the records' length varints, and each
// record is re-encoded with kmsg.Record.AppendTo and must give back exactly
// its bytes.
func requireKmsgRecords(t *testing.T, section []byte, baseTimestamp int64, want []testRecord) {
	t.Helper()
	rest := section
	for i, w := range want {
		n, m := binary.Varint(rest) // zig-zag LEB128, as Kafka's varint
		require.Greater(t, m, 0, "record %d: length varint", i)
		require.True(t, n >= 0 && n <= int64(len(rest)-m), "record %d: length %d with %d bytes left", i, n, len(rest)-m)
		raw := rest[:m+int(n)]
		rest = rest[m+int(n):]

		var kr kmsg.Record
		require.NoError(t, kr.ReadFrom(raw), "record %d", i)
		require.Equal(t, raw, kr.AppendTo(nil), "record %d: kmsg re-encoding differs", i)
		require.Equal(t, int8(0), kr.Attributes, "record %d: attributes", i)
		require.Equal(t, w.Timestamp-baseTimestamp, kr.TimestampDelta64, "record %d: timestampDelta", i)
		require.Equal(t, w.OffsetDelta, kr.OffsetDelta, "record %d: offsetDelta", i)
		requireNullable(t, w.Key, kr.Key, "record %d: key", i)
		requireNullable(t, w.Value, kr.Value, "record %d: value", i)
		require.Len(t, kr.Headers, len(w.Headers), "record %d: headers", i)
		for j, h := range w.Headers {
			require.Equal(t, h.Key, kr.Headers[j].Key, "record %d header %d: key", i, j)
			requireNullable(t, h.Value, kr.Headers[j].Value, "record %d header %d: value", i, j)
		}
	}
	require.Empty(t, rest, "bytes after recordsCount records")
}

// requireNullable checks bytes and nullness: nil (null) and []byte{} (empty)
// differ.
func requireNullable(t *testing.T, want, got []byte, msgAndArgs ...any) {
	t.Helper()
	what := fmt.Sprintf(msgAndArgs[0].(string), msgAndArgs[1:]...)
	require.Equal(t, want == nil, got == nil, "%s: null vs non-null (want nil=%v)", what, want == nil)
	require.True(t, bytes.Equal(want, got), "%s: %q vs %q", what, abbrev(want), abbrev(got))
}

func abbrev(b []byte) []byte {
	if len(b) > 64 {
		return append(b[:60:60], "..."...)
	}
	return b
}

// requireOurRecords decodes b with record.Reader and compares its header and
// records with want.
func requireOurRecords(t *testing.T, b []byte, spec batchSpec, want []testRecord) {
	t.Helper()
	h, err := record.Validate(b)
	require.NoError(t, err)
	require.Equal(t, spec.BaseOffset, h.BaseOffset)
	require.Equal(t, spec.PartitionLeaderEpoch, h.PartitionLeaderEpoch)
	require.Equal(t, spec.Attributes, int16(h.Attributes))
	require.Equal(t, spec.LastOffsetDelta, h.LastOffsetDelta)
	require.Equal(t, spec.BaseTimestamp, h.BaseTimestamp)
	require.Equal(t, spec.MaxTimestamp, h.MaxTimestamp)
	require.Equal(t, spec.ProducerID, h.ProducerID)
	require.Equal(t, spec.ProducerEpoch, h.ProducerEpoch)
	require.Equal(t, spec.BaseSequence, h.BaseSequence)
	require.Equal(t, spec.NumRecords, h.RecordsCount)

	r := record.NewReader(record.ReaderOptions{})
	require.NoError(t, r.Reset(b))
	for i, w := range want {
		require.True(t, r.Next(), "record %d: %v", i, r.Err())
		got := r.Record()
		wantTS := w.Timestamp
		if spec.Attributes&attrLogAppendTime != 0 {
			wantTS = spec.MaxTimestamp
		}
		require.Equal(t, spec.BaseOffset+int64(w.OffsetDelta), got.Offset, "record %d: offset", i)
		require.Equal(t, w.OffsetDelta, got.OffsetDelta, "record %d: offsetDelta", i)
		require.Equal(t, wantTS, got.Timestamp, "record %d: timestamp", i)
		require.Equal(t, w.Timestamp-spec.BaseTimestamp, got.TimestampDelta, "record %d: timestampDelta", i)
		require.Equal(t, int8(0), got.Attributes, "record %d: attributes", i)
		requireNullable(t, w.Key, got.Key, "record %d: key", i)
		requireNullable(t, w.Value, got.Value, "record %d: value", i)
		require.Len(t, got.Headers, len(w.Headers), "record %d: headers", i)
		for j, hd := range w.Headers {
			require.Equal(t, hd.Key, string(got.Headers[j].Key), "record %d header %d: key", i, j)
			requireNullable(t, hd.Value, got.Headers[j].Value, "record %d header %d: value", i, j)
		}
	}
	require.False(t, r.Next(), "more records than recordsCount")
	require.NoError(t, r.Err())
}

// ---- deterministic inputs

// rng is splitmix64: a fixed, tiny generator, so that the payloads (and the
// fixtures made from them) do not depend on math/rand's algorithms.
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9E3779B97F4A7C15
	z := uint64(*r)
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

func pseudoRandomBytes(seed uint64, n int) []byte {
	r := rng(seed)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.next())
	}
	return b
}

var (
	firstNames = []string{"Ada", "Grace", "Alan", "Barbara", "Edsger", "Frances", "Donald", "Margaret", "Ken", "Radia"}
	lastNames  = []string{"Lovelace", "Hopper", "Turing", "Liskov", "Dijkstra", "Allen", "Knuth", "Hamilton", "Thompson", "Perlman"}
	cities     = []string{"Lisbon", "Nairobi", "Osaka", "Montréal", "Wellington", "Tromsø", "Valparaíso", "Kraków"}
	products   = []string{"espresso-beans-1kg", "pour-over-kettle", "ceramic-dripper", "paper-filters-100", "burr-grinder", "travel-mug", "scale-0.1g", "cold-brew-jar"}
)

// jsonPayload returns an order event as a producer of a web shop would send
// it: about 250 bytes plus 120 per item. Hand-written JSON, so that the bytes
// do not depend on encoding/json.
func jsonPayload(seed uint64, items int) string {
	r := rng(seed)
	var sb strings.Builder
	first, last := firstNames[r.intn(len(firstNames))], lastNames[r.intn(len(lastNames))]
	fmt.Fprintf(&sb, `{"type":"order.created","order_id":"ord-%08d","created_at":"2023-11-14T22:%02d:%02d.%03dZ",`,
		r.intn(100000000), r.intn(60), r.intn(60), r.intn(1000))
	fmt.Fprintf(&sb, `"customer":{"id":%d,"name":"%s %s","email":"%s.%s@example.com","city":"%s","vip":%t},"items":[`,
		r.intn(1000000), first, last, strings.ToLower(first), strings.ToLower(last), cities[r.intn(len(cities))], r.intn(4) == 0)
	total := 0
	for i := range items {
		if i > 0 {
			sb.WriteByte(',')
		}
		qty, cents := 1+r.intn(5), 199+r.intn(9800)
		total += qty * cents
		fmt.Fprintf(&sb, `{"line":%d,"sku":"%s","qty":%d,"unit_price":{"amount":%d.%02d,"currency":"EUR"},"warehouse":"wh-%d","gift":%t}`,
			i+1, products[r.intn(len(products))], qty, cents/100, cents%100, r.intn(12), r.intn(7) == 0)
	}
	fmt.Fprintf(&sb, `],"total":{"amount":%d.%02d,"currency":"EUR"},"shipping":{"method":"%s","eta_days":%d},"notes":"%s"}`,
		total/100, total%100, []string{"standard", "express", "pickup"}[r.intn(3)], 1+r.intn(9),
		strings.Repeat("leave at the door; ", r.intn(4)))
	return sb.String()
}

// mixedRecords covers every shape a record can take: headers (empty key,
// empty value, null value), null key, null value, empty key and value,
// negative timestamp deltas (including a record without timestamp, -1),
// binary keys and a few KB of JSON.
func mixedRecords() []testRecord {
	binKey := make([]byte, 256)
	for i := range binKey {
		binKey[i] = byte(i)
	}
	return []testRecord{
		{OffsetDelta: 0, Timestamp: ts0, Key: []byte("user-42"), Value: []byte(`{"event":"login"}`), Headers: []testHeader{
			{Key: "trace-id", Value: []byte("4bf92f3577b34da6a3ce929d0e0e4736")},
			{Key: "empty-value", Value: []byte{}},
			{Key: "null-value", Value: nil},
			{Key: "", Value: []byte("empty key")},
		}},
		{OffsetDelta: 1, Timestamp: ts0 - 5000, Key: nil, Value: []byte("null key, timestamp 5 s before the base")},
		{OffsetDelta: 2, Timestamp: ts0 + 250, Key: []byte("user-42"), Value: nil}, // tombstone
		{OffsetDelta: 3, Timestamp: ts0 + 1, Key: []byte{}, Value: []byte{}, Headers: []testHeader{{Key: "h", Value: []byte{}}}},
		{OffsetDelta: 4, Timestamp: ts0 + 86400000, Key: binKey, Value: []byte(jsonPayload(7, 25)), Headers: []testHeader{
			{Key: "content-type", Value: []byte("application/json")},
			{Key: "schema-id", Value: []byte{0, 0, 0, 17}},
			{Key: "ünïcödé-key", Value: []byte("ünïcödé value")},
		}},
		{OffsetDelta: 5, Timestamp: -1, Key: nil, Value: nil}, // no timestamp: a large negative delta
		{OffsetDelta: 6, Timestamp: ts0 + 2, Key: []byte("k"), Value: []byte("v")},
	}
}

// largeRecords is about 70 KiB of JSON in 24 records: more than one 64 KiB
// LZ4 block and three 32 KiB xerial snappy chunks.
func largeRecords() []testRecord {
	recs := make([]testRecord, 24)
	for i := range recs {
		recs[i] = testRecord{
			OffsetDelta: int32(i),
			Timestamp:   ts0 + int64(i)*37,
			Key:         fmt.Appendf(nil, "ord-%05d", 1000+i),
			Value:       []byte(jsonPayload(uint64(100+i), 20+i%7)),
			Headers:     []testHeader{{Key: "source", Value: []byte("checkout-service")}},
		}
	}
	return recs
}

// sectionLen returns the size of recs encoded uncompressed.
func sectionLen(recs []testRecord) int {
	if len(recs) == 0 {
		return 0
	}
	return len(kmsgRecords(recs, recs[0].Timestamp))
}

func TestPayloadSizes(t *testing.T) {
	n := sectionLen(largeRecords())
	require.Greater(t, n, 64<<10, "the large case must span two LZ4 blocks")
	require.Greater(t, n, 2*32<<10, "the large case must span three xerial chunks")
	require.Less(t, n, 96<<10, "keep the fixtures small")
	p := jsonPayload(7, 25)
	require.Greater(t, len(p), 2000)
	require.Less(t, len(p), 6000)
}
