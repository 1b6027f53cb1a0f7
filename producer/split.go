package producer

import (
	"errors"
	"fmt"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// batchPart is the outcome of one part of a batch the sender split: the
// records from the previous part's end up to end.
type batchPart struct {
	end           int // one past the part's last record
	baseOffset    int64
	logAppendTime int64
	err           error
}

// appendSplit appends, in parts, a sealed batch of several records that
// its log refused as too large (its segment.bytes or max.message.bytes is
// below the batch), as Kafka's producer splits a batch the broker refuses
// with MESSAGE_TOO_LARGE. A part the log refuses again is halved, until it
// fits or holds one record (which then fails with the log's error). Each
// part is a batch of its own, stamped with the producer's next sequence.
// After a part fails otherwise (a storage error, a fenced producer), the
// parts after it are not appended and fail with that error. It returns the
// parts in record order, or an error for the whole batch when its records
// could not be read back (nothing was appended).
func (p *Producer) appendSplit(b *producerBatch, sealed []byte) ([]batchPart, error) {
	rd := record.NewReader(record.ReaderOptions{})
	if err := rd.Reset(sealed); err != nil {
		return nil, err
	}
	h := rd.Header()
	recs := make([]record.Record, 0, len(b.recs))
	for rd.Next() {
		recs = append(recs, rd.Record().Clone())
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if len(recs) != len(b.recs) {
		return nil, fmt.Errorf("producer: a sealed batch of %d records read back as %d", len(b.recs), len(recs))
	}
	// The parts keep the batch's codec, timestamp type and transactional
	// flag; the producer fields are stamped per part.
	h = record.BatchHeader{PartitionLeaderEpoch: -1, Attributes: h.Attributes, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	var (
		parts []batchPart
		stop  error
		bld   record.Builder
	)
	var appendPart func(lo, hi int)
	appendPart = func(lo, hi int) {
		if stop != nil {
			parts = append(parts, batchPart{end: hi, baseOffset: -1, logAppendTime: -1, err: stop})
			return
		}
		bld.Reset(h, p.acc.level)
		var res log.AppendResult
		var err error
		for i := lo; i < hi && err == nil; i++ {
			r := &recs[i]
			err = bld.Append(r.Timestamp, r.Key, r.Value, r.Headers)
		}
		if err == nil && p.idem != nil {
			err = p.idem.stamp(&bld, b.log)
		}
		var batch []byte
		if err == nil {
			batch, err = bld.Build()
		}
		if err == nil {
			res, err = b.log.Append(batch)
			if errors.Is(err, log.ErrRecordTooLarge) && hi-lo > 1 {
				mid := lo + (hi-lo)/2
				appendPart(lo, mid)
				appendPart(mid, hi)
				return
			}
			if p.idem != nil {
				err = p.idem.appended(b.log, hi-lo, err)
			}
		}
		part := batchPart{end: hi, baseOffset: -1, logAppendTime: -1, err: err}
		if err == nil {
			part.baseOffset, part.logAppendTime = res.BaseOffset, res.LogAppendTime
		} else if !errors.Is(err, log.ErrRecordTooLarge) {
			stop = err
		}
		parts = append(parts, part)
	}
	appendPart(0, len(recs))
	p.stats.splits.Add(1)
	return parts, nil
}

// part returns the part of a split batch that holds record i, and the
// index of its first record. REQUIRES: b.parts is not empty.
func (b *producerBatch) part(i int) (batchPart, int) {
	start := 0
	for _, pt := range b.parts {
		if i < pt.end {
			return pt, start
		}
		start = pt.end
	}
	return b.parts[len(b.parts)-1], start
}
