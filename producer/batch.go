package producer

import (
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// producerBatch is Kafka's ProducerBatch: records for one partition
// collected in a buffer from the BufferPool until the sender appends them.
type producerBatch struct {
	topic     string
	partition int32
	log       *log.Log
	builder   record.Builder
	created   time.Time
	recs      []recordInfo
	full      bool // no more records go into it
	bytes     int  // uncompressed size at sealing, for the stats

	// Set by the sender before done is closed.
	done          chan struct{}
	baseOffset    int64
	logAppendTime int64
	err           error
}

// recordInfo is what a batch keeps per record to complete it.
type recordInfo struct {
	cb        Callback
	timestamp int64
	keySize   int32
	valueSize int32
}

// metadata returns record i's outcome. REQUIRES: done is closed.
func (b *producerBatch) metadata(i int) (RecordMetadata, error) {
	r := b.recs[i]
	md := RecordMetadata{Topic: b.topic, Partition: b.partition, Offset: -1,
		SerializedKeySize: int(r.keySize), SerializedValueSize: int(r.valueSize)}
	ts := r.timestamp
	if b.logAppendTime >= 0 {
		ts = b.logAppendTime
	}
	md.Timestamp = time.UnixMilli(ts)
	if b.err != nil {
		return md, b.err
	}
	if b.baseOffset >= 0 {
		md.Offset = b.baseOffset + int64(i)
	}
	return md, nil
}

// hasRoomFor reports whether a record of the given estimated size fits
// without growing the batch's buffer, and within batch.size unless the
// batch is empty (an oversized record gets a batch of its own).
func (b *producerBatch) hasRoomFor(estimate, batchSize int) bool {
	if b.full {
		return false
	}
	size := b.builder.Size() + estimate
	return size <= b.builder.Cap() && (b.builder.Len() == 0 || size <= max(batchSize, record.BatchHeaderLen))
}

func sizeOf(b []byte) int32 {
	if b == nil {
		return -1
	}
	return int32(len(b))
}
