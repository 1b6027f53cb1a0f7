package log

import (
	"context"
	"time"
)

// startBackground starts the Dir's goroutines; Close stops them and waits.
//
//   - retention: every log.retention.check.interval.ms, EnforceRetention on
//     every partition, and removal of segments deleted file.delete.delay.ms
//     ago;
//   - flusher: every log.flush.scheduler.interval.ms (or, if that is
//     unlimited, every second), flushes partitions whose flush.ms has passed,
//     and writes the checkpoints every log.flush.offset.checkpoint.interval.ms
//     and log.flush.start.offset.checkpoint.interval.ms;
//   - producer expiry: every producer.id.expiration.check.interval.ms,
//     ExpireProducers on every partition;
//   - log.cleaner.threads cleaners (if log.cleaner.enable): each cleans the
//     filthiest compacted log, or sleeps log.cleaner.backoff.ms;
//   - tiered storage (if remote.log.storage.system.enable): every
//     remote.log.manager.task.interval.ms, a pass of Dir.TierNow.
func (d *Dir) startBackground() {
	d.startCleaner()
	d.bg.Add(3)
	go d.loop(d.cfg.RetentionCheckInterval, d.retentionPass)
	go d.loop(d.flushTick(), d.flushPass())
	go d.loop(d.cfg.ProducerIDExpirationCheckInterval, d.expireProducers)
	if d.tier != nil {
		// The pass's context ends when the Dir closes, so that a copy in
		// progress stops (and is cleaned up by the next Open's first pass).
		ctx, cancel := context.WithCancel(context.Background())
		d.bg.Add(2)
		go func() {
			defer d.bg.Done()
			<-d.stop
			cancel()
		}()
		go d.loop(d.cfg.RemoteLogManagerTaskInterval, func() {
			if res, err := d.tier.pass(ctx); err != nil && ctx.Err() == nil {
				d.logger.Warn("tiered storage: a pass failed", "copied", res.Copied, "deleted", res.Deleted, "err", err)
			}
		})
	}
}

// loop calls fn every interval until the Dir closes.
func (d *Dir) loop(interval time.Duration, fn func()) {
	defer d.bg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			fn()
		}
	}
}

func (d *Dir) flushTick() time.Duration {
	if d.cfg.FlushSchedulerInterval > 0 {
		return d.cfg.FlushSchedulerInterval
	}
	return time.Second
}

// retentionPass applies retention to every partition.
func (d *Dir) retentionPass() {
	for _, l := range d.allLogs() {
		if _, err := l.EnforceRetention(); err != nil {
			d.logger.Warn("retention failed", "partition", l.tp, "err", err)
		}
		if err := l.RemoveDeleted(false); err != nil {
			d.logger.Warn("removing deleted segments failed", "partition", l.tp, "err", err)
		}
	}
}

// expireProducers drops expired producer ids from every partition.
func (d *Dir) expireProducers() {
	for _, l := range d.allLogs() {
		if n := l.ExpireProducers(); n > 0 {
			d.logger.Debug("expired producer ids", "partition", l.tp, "count", n)
		}
	}
}

// flushPass returns the flusher's tick function, which remembers when it
// last wrote the checkpoints.
func (d *Dir) flushPass() func() {
	lastCheckpoint := d.now()
	return func() {
		now := d.now()
		for _, l := range d.allLogs() {
			interval := l.Config().FlushInterval
			if interval < 0 || l.LogEndOffset() <= l.RecoveryPoint() {
				continue
			}
			if now.Sub(time.UnixMilli(l.local.lastFlush.Load())) >= interval {
				if err := l.Flush(context.Background()); err != nil {
					d.logger.Warn("scheduled flush failed", "partition", l.tp, "err", err)
				}
			}
		}
		every := min(d.cfg.FlushOffsetCheckpointInterval, d.cfg.FlushStartOffsetCheckpointInterval)
		if now.Sub(lastCheckpoint) >= every {
			lastCheckpoint = now
			if err := d.writeCheckpoints(false); err != nil {
				d.logger.Warn("writing checkpoints failed", "err", err)
			}
		}
	}
}
