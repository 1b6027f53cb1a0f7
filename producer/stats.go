package producer

import (
	"sync/atomic"

	"github.com/kafkalite/kafkalite/record"
)

// batchOverhead is a batch's header, which every record's batch carries.
const batchOverhead = record.BatchHeaderLen

func estimateRecord(r *Record) int { return record.EstimateRecordSize(r.Key, r.Value, r.Headers) }

// counters are the producer's running totals.
type counters struct {
	records           atomic.Int64 // records appended (sealed in a batch)
	batches           atomic.Int64
	batchBytes        atomic.Int64 // sealed (compressed) bytes
	uncompressedBytes atomic.Int64
	errors            atomic.Int64
	callbackPanics    atomic.Int64
	splits            atomic.Int64
}

// Stats are Kafka's main producer metrics, computed since New.
type Stats struct {
	// RecordSendRate is records sent per second (record-send-rate).
	RecordSendRate float64
	// Records and Batches sent; Errors is records that failed
	// (record-error-total); CallbackPanics recovered; Splits is batches
	// the log refused as too large and the sender split
	// (batch-split-total).
	Records, Batches, Errors, CallbackPanics, Splits int64
	// BatchSizeAvg is the average sealed batch size in bytes
	// (batch-size-avg); RecordsPerBatch the average records per batch
	// (records-per-request-avg).
	BatchSizeAvg, RecordsPerBatch float64
	// CompressionRate is sealed bytes over uncompressed bytes
	// (compression-rate-avg; 1 without compression).
	CompressionRate float64
	// BufferAvailableBytes is the pool's free memory
	// (buffer-available-bytes); BufferTotalBytes is buffer.memory.
	BufferAvailableBytes, BufferTotalBytes int64
	// WaitingSenders is how many Send calls wait for memory
	// (waiting-threads).
	WaitingSenders int
}

// Stats returns the producer's metrics.
func (p *Producer) Stats() Stats {
	s := Stats{Records: p.stats.records.Load(), Batches: p.stats.batches.Load(), Errors: p.stats.errors.Load(),
		CallbackPanics: p.stats.callbackPanics.Load(), Splits: p.stats.splits.Load(), BufferAvailableBytes: p.pool.AvailableMemory(),
		BufferTotalBytes: p.pool.TotalMemory(), WaitingSenders: p.pool.Waiters()}
	if el := p.now().Sub(p.started).Seconds(); el > 0 {
		s.RecordSendRate = float64(s.Records) / el
	}
	if s.Batches > 0 {
		s.BatchSizeAvg = float64(p.stats.batchBytes.Load()) / float64(s.Batches)
		s.RecordsPerBatch = float64(s.Records) / float64(s.Batches)
	}
	if u := p.stats.uncompressedBytes.Load(); u > 0 {
		s.CompressionRate = float64(p.stats.batchBytes.Load()) / float64(u)
	}
	return s
}
