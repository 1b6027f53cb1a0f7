package producer

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// run is the sender goroutine: Kafka's Sender. It drains ready batches,
// seals them, appends them to their partitions' logs and completes their
// records, until the producer closes and nothing is left.
func (p *Producer) run() {
	defer close(p.senderDone)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := p.now()
		ready, next := p.acc.drain(now)
		if len(ready) > 0 {
			p.send(ready)
			continue // more may have become ready meanwhile
		}
		select {
		case <-p.stop:
			return
		default:
		}
		wait := time.Hour
		if !next.IsZero() {
			wait = max(next.Sub(now), 0)
		}
		timer.Reset(wait)
		select {
		case <-p.acc.wake:
		case <-timer.C:
		case <-p.stop:
			return
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// send appends a round of ready batches and completes them. With acks=all
// the batches are appended first and each partition touched is then
// synced once, so that the round shares fsyncs (group commit).
func (p *Producer) send(batches []*producerBatch) {
	now := p.now()
	for _, b := range batches {
		if age := now.Sub(b.created); age > p.cfg.DeliveryTimeout {
			b.err = fmt.Errorf("%w: batch for %s-%d waited %v", ErrDeliveryTimeout, b.topic, b.partition, age)
		}
	}
	p.compress(batches)
	switch p.cfg.Acks {
	case AcksNone:
		// The producer does not wait for the append: records complete
		// with offset -1 as soon as they are handed over, then the batch is
		// appended; an append error is logged and counted.
		for _, b := range batches {
			sealed, err := p.seal(b)
			failed := b.err
			p.complete(b)
			if failed == nil && err == nil {
				_, err = b.log.Append(sealed)
				if errors.Is(err, log.ErrRecordTooLarge) && len(b.recs) > 1 {
					// The records completed already: parts are
					// counted and logged, not reported.
					var parts []batchPart
					if parts, err = p.appendSplit(b, sealed); err == nil {
						n, first := failedInParts(parts)
						p.stats.errors.Add(int64(n))
						err = first
					}
				} else if err != nil {
					p.stats.errors.Add(int64(len(b.recs)))
				}
			}
			p.release(b)
			if err != nil {
				p.logger.Warn("append with acks=0 failed", "topic", b.topic, "partition", b.partition, "err", err)
			}
		}
	default:
		if p.idem != nil {
			// A transaction's partitions are registered with the
			// coordinator before its first batch there is appended.
			if err := p.idem.addPartitions(context.Background(), batches); err != nil {
				for _, b := range batches {
					if b.err == nil {
						b.err = err
					}
				}
			}
		}
		var synced []*log.Log
		for _, b := range batches {
			if b.err != nil {
				continue
			}
			if p.idem != nil {
				if err := p.idem.stamp(&b.builder, b.log); err != nil {
					b.err = err // fenced or broken: append nothing more
					continue
				}
			}
			sealed, err := p.seal(b)
			if err == nil {
				var res log.AppendResult
				res, err = b.log.Append(sealed)
				if errors.Is(err, log.ErrRecordTooLarge) && len(b.recs) > 1 {
					if b.parts, err = p.appendSplit(b, sealed); err == nil && p.cfg.Acks == AcksAll &&
						!containsLog(synced, b.log) && slices.ContainsFunc(b.parts, func(pt batchPart) bool { return pt.err == nil }) {
						synced = append(synced, b.log)
					}
					b.err = err
					continue
				}
				if p.idem != nil {
					err = p.idem.appended(b.log, len(b.recs), err)
				}
				if err == nil {
					b.baseOffset, b.logAppendTime = res.BaseOffset, res.LogAppendTime
					if p.cfg.Acks == AcksAll && !containsLog(synced, b.log) {
						synced = append(synced, b.log)
					}
				}
			}
			b.err = err
		}
		for _, l := range synced {
			if err := l.Sync(context.Background(), l.LogEndOffset()); err != nil {
				for _, b := range batches {
					if b.log == l && b.err == nil {
						b.err = err
					}
				}
			}
		}
		for _, b := range batches {
			p.complete(b)
			p.release(b)
		}
	}
	p.acc.completed(len(batches))
	if p.cfg.PartitionerAdaptive && p.cfg.Partitioner == nil {
		p.updateLoadStats(batches)
	}
}

// updateLoadStats tells the adaptive sticky partitioner how many batches
// wait per partition of the topics just sent to, as Kafka's sender does
// after each drain.
func (p *Producer) updateLoadStats(batches []*producerBatch) {
	var done []string
	for _, b := range batches {
		if slices.Contains(done, b.topic) {
			continue
		}
		done = append(done, b.topic)
		v, ok := p.topics.Load(b.topic)
		if !ok {
			continue
		}
		n := int32(len(v.(*topicInfo).partitions))
		p.loadStats = p.acc.queueSizes(b.topic, n, p.loadStats)
		p.part.Sticky().UpdatePartitionLoadStats(b.topic, p.loadStats)
	}
}

func containsLog(ls []*log.Log, l *log.Log) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

// compress compresses a round's batches on up to GOMAXPROCS goroutines,
// which end before it returns; seal then only writes each header, in
// order, after the producer fields are stamped. One batch, or batches
// without a codec, are left to seal. An error is left to seal too: Build
// meets it again and reports it as for a batch compressed there.
func (p *Producer) compress(batches []*producerBatch) {
	if p.cfg.CompressionType == record.None || len(batches) < 2 {
		return
	}
	workers := min(runtime.GOMAXPROCS(0), len(batches))
	if workers < 2 {
		return
	}
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= len(batches) {
				return
			}
			if b := batches[i]; b.err == nil {
				_ = b.builder.Compress() // an error is Build's to report
			}
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// seal builds the batch's bytes.
func (p *Producer) seal(b *producerBatch) ([]byte, error) {
	b.bytes = b.builder.Size()
	sealed, err := b.builder.Build()
	if err != nil {
		return nil, err
	}
	p.stats.batches.Add(1)
	p.stats.batchBytes.Add(int64(len(sealed)))
	p.stats.uncompressedBytes.Add(int64(b.bytes))
	p.stats.records.Add(int64(len(b.recs)))
	return sealed, nil
}

// release gives the batch's buffer back to the pool.
func (p *Producer) release(b *producerBatch) {
	if buf := b.builder.Buffer(); buf != nil {
		p.pool.Deallocate(buf)
	}
	b.builder = record.Builder{}
}

// complete runs the interceptors and callbacks of a batch's records in
// order and closes its done channel.
func (p *Producer) complete(b *producerBatch) {
	failed, first := len(b.recs), b.err
	if b.err != nil {
		b.err = producerError(b.err)
	} else {
		for i := range b.parts {
			b.parts[i].err = producerError(b.parts[i].err)
		}
		failed, first = failedInParts(b.parts)
	}
	if first != nil {
		p.stats.errors.Add(int64(failed))
		if p.idem != nil {
			p.idem.batchFailed(first)
		}
		if errors.Is(first, log.ErrTopicDeleted) || errors.Is(first, log.ErrUnknownTopicOrPartition) {
			p.forgetTopic(b.topic)
		}
	}
	// As Kafka does, callbacks run before the future completes.
	for i := range b.recs {
		md, err := b.metadata(i)
		for _, ic := range p.cfg.Interceptors {
			p.safely("interceptor", func() { ic.OnAcknowledgement(md, err) })
		}
		if cb := b.recs[i].cb; cb != nil {
			p.safely("callback", func() { cb(md, err) })
		}
	}
	close(b.done)
}

// producerError makes the log's ErrRecordTooLarge the producer's too, and
// a closed Dir's error ErrClosed (dirClosed).
func producerError(err error) error {
	if errors.Is(err, log.ErrRecordTooLarge) && !errors.Is(err, ErrRecordTooLarge) {
		return errors.Join(err, ErrRecordTooLarge)
	}
	return dirClosed(err)
}

// failedInParts returns how many records of a split batch's parts failed,
// and the first error.
func failedInParts(parts []batchPart) (int, error) {
	n, start := 0, 0
	var first error
	for _, pt := range parts {
		if pt.err != nil {
			n += pt.end - start
			if first == nil {
				first = pt.err
			}
		}
		start = pt.end
	}
	return n, first
}

// safely runs user code, recovering a panic so that the sender survives.
func (p *Producer) safely(what string, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			p.stats.callbackPanics.Add(1)
			p.logger.Error("recovered a panic in user code", "in", what, "panic", r)
		}
	}()
	fn()
}
