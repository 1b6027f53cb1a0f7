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

	// Set by the sender before done is closed. A batch the sender split
	// has parts, each with its own outcome; err, when set, is every
	// record's.
	done          chan struct{}
	baseOffset    int64
	logAppendTime int64
	err           error
	parts         []batchPart
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
	base, appendTime, err, first := b.baseOffset, b.logAppendTime, b.err, 0
	if len(b.parts) > 0 && err == nil {
		var pt batchPart
		pt, first = b.part(i)
		base, appendTime, err = pt.baseOffset, pt.logAppendTime, pt.err
	}
	ts := r.timestamp
	if appendTime >= 0 {
		ts = appendTime
	}
	md.Timestamp = time.UnixMilli(ts)
	if err != nil {
		return md, err
	}
	if base >= 0 {
		md.Offset = base + int64(i-first)
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
