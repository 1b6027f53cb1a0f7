package record

import (
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/golden"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden from the encoder")

// readHex reads a hex file: '#' starts a comment, white space is ignored.
func readHex(t *testing.T, path string) []byte {
	t.Helper()
	return golden.ReadFile(t, path)
}

// writeHex writes b as a hex file, 16 bytes a line, under a comment.
func writeHex(t *testing.T, path, comment string, b []byte) {
	t.Helper()
	var sb strings.Builder
	for _, c := range strings.Split(comment, "\n") {
		sb.WriteString("# " + c + "\n")
	}
	for i := 0; i < len(b); i += 16 {
		line := b[i:min(i+16, len(b))]
		parts := make([]string, len(line))
		for j, c := range line {
			parts[j] = hex.EncodeToString([]byte{c})
		}
		sb.WriteString(strings.Join(parts, " ") + "\n")
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(sb.String()), 0o644))
}

func producerHeader() BatchHeader {
	return BatchHeader{PartitionLeaderEpoch: NoPartitionLeaderEpoch, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence}
}

func TestWorkedExample(t *testing.T) {
	want := readHex(t, "testdata/worked_example.hex")
	require.Len(t, want, 70)

	var b Builder
	b.Reset(producerHeader(), DefaultLevel)
	require.NoError(t, b.Append(1700000000000, []byte("k"), []byte("v"), nil))
	got, err := b.Build()
	require.NoError(t, err)
	require.Equal(t, want, got, "encoder output differs from the hand-computed worked example")

	h, err := Validate(want)
	require.NoError(t, err)
	require.Equal(t, uint32(0xE99B8DD8), h.CRC)
	require.Equal(t, int32(58), h.BatchLength)

	r := NewReader(ReaderOptions{})
	require.NoError(t, r.Reset(want))
	require.True(t, r.Next())
	rec := r.Record()
	require.Equal(t, int64(0), rec.Offset)
	require.Equal(t, int64(1700000000000), rec.Timestamp)
	require.Equal(t, []byte("k"), rec.Key)
	require.Equal(t, []byte("v"), rec.Value)
	require.Nil(t, rec.Headers)
	require.False(t, r.Next())
	require.NoError(t, r.Err())
}

// goldenCase is a batch whose bytes are pinned in testdata/golden.
type goldenCase struct {
	name    string
	comment string
	build   func(t *testing.T) []byte
	want    []Record // the records it decodes to
	exact   bool     // compare bytes (uncompressed) or only decoded records
}

func goldenCases() []goldenCase {
	hdrs := []Record{
		{Offset: 0, Timestamp: 1700000000000, Key: []byte("order-1"), Value: []byte(`{"id":1,"total":"9.99"}`), Headers: []Header{
			{Key: []byte("content-type"), Value: []byte("application/json")},
			{Key: []byte("trace"), Value: nil},
		}},
		{Offset: 1, OffsetDelta: 1, Timestamp: 1700000000250, Key: []byte("order-2"), Value: []byte(`{"id":2}`)},
	}
	nulls := []Record{
		{Offset: 0, Timestamp: 1700000000000, Key: nil, Value: []byte("null key")},
		{Offset: 1, OffsetDelta: 1, Timestamp: 1700000000001, Key: []byte("deleted"), Value: nil},
		{Offset: 2, OffsetDelta: 2, Timestamp: 1700000000002, Key: []byte{}, Value: []byte{}},
		{Offset: 3, OffsetDelta: 3, Timestamp: NoTimestamp, Key: nil, Value: nil},
	}
	plain := func(recs []Record, h BatchHeader) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			b, err := AppendBatch(nil, h, DefaultLevel, recs)
			require.NoError(t, err)
			return b
		}
	}
	idem := BatchHeader{BaseOffset: 0, PartitionLeaderEpoch: -1, ProducerID: 1000, ProducerEpoch: 2, BaseSequence: 17,
		Attributes: Attributes(0).WithTransactional(true)}
	cases := []goldenCase{
		{name: "headers", comment: "two records, headers (one with a null value), CreateTime", build: plain(hdrs, producerHeader()), want: hdrs, exact: true},
		{name: "null-key-value", comment: "null key, null value (tombstone), empty key and value, no timestamp", build: plain(nulls, producerHeader()), want: nulls, exact: true},
		{name: "transactional", comment: "transactional batch of an idempotent producer: producerId 1000, epoch 2, baseSequence 17", build: plain(hdrs, idem), want: hdrs, exact: true},
		{name: "control-commit", comment: "COMMIT marker: producerId 1000, epoch 2, coordinatorEpoch 5", build: func(t *testing.T) []byte {
			b, err := AppendEndTxnMarkerBatch(nil, 0, -1, 1000, 2, 1700000000300, EndTxnMarker{Type: ControlCommit, CoordinatorEpoch: 5})
			require.NoError(t, err)
			return b
		}, want: []Record{{Timestamp: 1700000000300, Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 5}}}, exact: true},
		{name: "control-abort", comment: "ABORT marker: producerId 1000, epoch 2, coordinatorEpoch 5", build: func(t *testing.T) []byte {
			b, err := AppendEndTxnMarkerBatch(nil, 0, -1, 1000, 2, 1700000000300, EndTxnMarker{Type: ControlAbort, CoordinatorEpoch: 5})
			require.NoError(t, err)
			return b
		}, want: []Record{{Timestamp: 1700000000300, Key: []byte{0, 0, 0, 0}, Value: []byte{0, 0, 0, 0, 0, 5}}}, exact: true},
		{name: "empty", comment: "empty batch as the cleaner leaves it: base offset 40, last offset 49, producer 1000", build: func(t *testing.T) []byte {
			return AppendEmptyBatch(nil, BatchHeader{BaseOffset: 40, LastOffsetDelta: 9, PartitionLeaderEpoch: 3, MaxTimestamp: 1700000000000,
				ProducerID: 1000, ProducerEpoch: 2, BaseSequence: 5})
		}, exact: true},
	}
	json := []Record{}
	for i := range 200 {
		json = append(json, Record{Offset: int64(i), OffsetDelta: int32(i), Timestamp: 1700000000000 + int64(i),
			Key: fmt.Appendf(nil, "user-%d", i%17), Value: fmt.Appendf(nil, `{"user":"user-%d","event":"page_view","path":"/products/%d","ms":%d}`, i%17, i%40, i*3)})
	}
	for _, c := range []Compression{Gzip, Snappy, LZ4, Zstd} {
		h := producerHeader()
		h.Attributes = h.Attributes.WithCompression(c)
		cases = append(cases, goldenCase{name: c.String(), comment: "200 JSON records, " + c.String() + ", written by kafkalite's encoder", build: plain(json, h), want: json})
	}
	return cases
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("testdata", "golden", tc.name+".hex")
			built := tc.build(t)
			if *update {
				writeHex(t, path, tc.comment+"\nGenerated by `go test ./record -run TestGolden -update`.", built)
			}
			pinned := readHex(t, path)
			if tc.exact {
				require.Equal(t, pinned, built, "encoder output changed")
			}
			for _, b := range [][]byte{pinned, built} {
				_, got := decodeAll(t, b)
				requireSameRecords(t, tc.want, got)
			}
		})
	}
}
