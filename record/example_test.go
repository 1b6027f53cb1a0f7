package record_test

import (
	"errors"
	"fmt"

	"github.com/kafkalite/kafkalite/record"
)

// A producer seals records into a batch; a consumer iterates them back.
func Example() {
	var b record.Builder
	b.Reset(record.BatchHeader{
		PartitionLeaderEpoch: record.NoPartitionLeaderEpoch,
		Attributes:           record.Attributes(0).WithCompression(record.LZ4),
		ProducerID:           record.NoProducerID,
		ProducerEpoch:        record.NoProducerEpoch,
		BaseSequence:         record.NoSequence,
	}, record.DefaultLevel)
	_ = b.Append(1700000000000, []byte("user-1"), []byte(`{"clicks":3}`), nil)
	_ = b.Append(1700000000100, []byte("user-2"), nil, []record.Header{{Key: []byte("op"), Value: []byte("delete")}})
	batch, err := b.Build()
	if err != nil {
		panic(err)
	}

	// The log assigns offsets by rewriting the base offset in place.
	_ = record.SetBaseOffset(batch, 41)

	r := record.NewReader(record.ReaderOptions{})
	if err := r.Reset(batch); err != nil {
		panic(err)
	}
	h := r.Header()
	fmt.Println(h.Attributes.Compression(), h.RecordsCount, "records, offsets", h.BaseOffset, "to", h.LastOffset())
	for r.Next() {
		rec := r.Record()
		fmt.Printf("offset %d key %s value %q (null %v) headers %d\n", rec.Offset, rec.Key, rec.Value, rec.Value == nil, len(rec.Headers))
	}
	if err := r.Err(); err != nil {
		panic(err)
	}
	// Output:
	// lz4 2 records, offsets 41 to 42
	// offset 41 key user-1 value "{\"clicks\":3}" (null false) headers 0
	// offset 42 key user-2 value "" (null true) headers 1
}

// Damage is reported as a typed error, never a panic.
func ExampleValidate() {
	var b record.Builder
	b.Reset(record.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	_ = b.Append(1700000000000, []byte("k"), []byte("v"), nil)
	batch, _ := b.Build()

	batch[len(batch)-1] ^= 0xff // flip bits in the last record
	_, err := record.Validate(batch)
	fmt.Println(errors.Is(err, record.ErrCRC), errors.Is(err, record.ErrCorrupt))

	_, err = record.Validate(batch[:30]) // a torn write
	fmt.Println(errors.Is(err, record.ErrTruncated), errors.Is(err, record.ErrCorrupt))
	// Output:
	// true true
	// true false
}

// The log's end-transaction markers are control batches.
func ExampleAppendEndTxnMarkerBatch() {
	batch, _ := record.AppendEndTxnMarkerBatch(nil, 0, 0, 4000, 1, 1700000000000,
		record.EndTxnMarker{Type: record.ControlCommit, CoordinatorEpoch: 3})
	r := record.NewReader(record.ReaderOptions{})
	_ = r.Reset(batch)
	r.Next()
	m, _ := record.ParseEndTxnMarker(r.Record().Key, r.Record().Value)
	fmt.Println(len(batch), r.Header().Attributes, m.Type, m.CoordinatorEpoch)
	// Output: 78 CreateTime|transactional|control COMMIT 3
}
