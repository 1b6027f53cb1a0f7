package log

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
)

// producerIDBlockSize is how many ids one durable write reserves: Kafka's
// controller hands brokers blocks of 1000 (ProducerIdsBlock).
const producerIDBlockSize = 1000

// producerIDs allocates producer ids from blocks reserved durably before
// use, so a restarted process never hands out an id it handed out before
// and that a partition's snapshot may still remember.
type producerIDs struct {
	next, end int64 // the current block is [next, end)
}

// AllocateProducerID returns a producer id never returned before in this
// directory: Kafka's InitProducerId for an idempotent producer without a
// transactional.id. Ids are reserved in blocks of 1000 in the file
// kafkalite-producer-ids, written durably before an id of a new block is
// returned; they also start above every producer id a partition of the
// directory remembers (a directory written by Kafka, or a lost file).
//
// A done ctx returns its error at once, allocating nothing.
func (d *Dir) AllocateProducerID(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	d.pidMu.Lock()
	defer d.pidMu.Unlock()
	d.mu.RLock()
	closed := d.closed
	d.mu.RUnlock()
	if closed {
		return 0, ErrClosed
	}
	if d.pids.next >= d.pids.end {
		path := filepath.Join(d.path, checkpoint.ProducerIDsFile)
		start, err := checkpoint.ReadNextProducerID(d.fsys, path)
		if isNotExist(err) {
			start, err = 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrStorage, err)
		}
		for _, l := range d.allLogs() {
			if ps := l.Producers(); len(ps) > 0 { // by producer id
				start = max(start, ps[len(ps)-1].ProducerID+1)
			}
		}
		if err := checkpoint.WriteNextProducerID(d.fsys, path, start+producerIDBlockSize); err != nil {
			return 0, fmt.Errorf("%w: reserving producer ids: %w", ErrStorage, err)
		}
		d.pids = producerIDs{next: start, end: start + producerIDBlockSize}
	}
	id := d.pids.next
	d.pids.next++
	return id, nil
}
