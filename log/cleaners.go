package log

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/compaction"
)

// This file is the Dir's cleaner goroutines (Kafka's LogCleaner and its
// CleanerThreads): their start with the Dir, their restart when a dynamic
// broker setting changes the cleaner's settings (Kafka's
// LogCleaner.reconfigure), and their stop with the Dir.

// cleanerDynamicProps are the broker properties that reconfigure Kafka
// 4.4's log cleaner (its LogCleaner's reconfigurable configs) and that
// kafkalite's cleaner uses. Kafka's list also has message.max.bytes, up to
// which its cleaner grows its buffers; kafkalite's reads whole batches
// whatever their size, so a change of message.max.bytes is checked as
// Kafka checks a cleaner reconfiguration (cleanerReconfigurationProps)
// and restarts nothing.
var cleanerDynamicProps = []string{
	"log.cleaner.threads",
	"log.cleaner.dedupe.buffer.size",
	"log.cleaner.io.buffer.load.factor",
	"log.cleaner.io.buffer.size",
	"log.cleaner.io.max.bytes.per.second",
	"log.cleaner.backoff.ms",
}

// cleanerReconfigurationProps are Kafka's LogCleaner reconfigurable
// configs: a change of any of them is checked by
// checkCleanerReconfiguration.
var cleanerReconfigurationProps = append([]string{"message.max.bytes"}, cleanerDynamicProps...)

// cleanerSettings are what the cleaner goroutines are started with: a
// change of one restarts them.
type cleanerSettings struct {
	threads          int
	dedupeBufferSize int64
	loadFactor       float64
	ioBufferSize     int
	backoff          time.Duration
}

func cleanerSettingsOf(c Config) cleanerSettings {
	return cleanerSettings{threads: c.CleanerThreads, dedupeBufferSize: c.CleanerDedupeBufferSize,
		loadFactor: c.CleanerIOBufferLoadFactor, ioBufferSize: c.CleanerIOBufferSize, backoff: c.CleanerBackoff}
}

// compactionConfig is one cleaner's configuration under s: an equal share
// of log.cleaner.dedupe.buffer.size with the other goroutines and
// [Dir.CleanNow], and the Dir's throttler.
func (d *Dir) compactionConfig(s cleanerSettings) compaction.Config {
	return compaction.Config{
		DedupeBufferBytes: s.dedupeBufferSize / int64(s.threads+1),
		LoadFactor:        s.loadFactor,
		IOBufferBytes:     s.ioBufferSize,
		Throttler:         d.cleaner.throttler,
	}
}

// cleanerPool holds the running cleaner goroutines, and restarts them
// with the settings of the Dir's configuration when those change.
type cleanerPool struct {
	mu sync.Mutex // protects the fields below
	// gen is the goroutines started last; nil without
	// log.cleaner.enable.
	gen *cleanerGen
	// restarting is true while a restartCleaners goroutine runs, and
	// again says whether a reconfiguration came since that goroutine
	// read the configuration.
	restarting, again bool
}

// cleanerGen is one start of the cleaner goroutines, all with settings:
// each stops when quit closes, once the round it is in has ended.
type cleanerGen struct {
	settings cleanerSettings
	quit     chan struct{}
	wg       sync.WaitGroup
}

// startCleaner starts the cleaner goroutines (log.cleaner.threads of them,
// none if log.cleaner.enable is false) with the Dir's configuration, its
// dynamic broker settings applied; Close stops them.
func (d *Dir) startCleaner() {
	cfg := d.Config()
	d.cleaner.ctx, d.cleaner.cancel = context.WithCancel(context.Background())
	d.cleaner.throttler = compaction.NewThrottler(cfg.CleanerIOMaxBytesPerSecond, nil, nil)
	d.cleaner.inProgress = map[*Log]bool{}
	d.cleaner.uncleanable = map[*Log]error{}
	if !d.cfg.CleanerEnable {
		return
	}
	d.cleaner.pool.gen = d.startCleanerGen(cleanerSettingsOf(cfg))
}

// startCleanerGen starts s.threads cleaner goroutines with settings s.
func (d *Dir) startCleanerGen(s cleanerSettings) *cleanerGen {
	g := &cleanerGen{settings: s, quit: make(chan struct{})}
	for range s.threads {
		c, err := compaction.NewCleaner(d.compactionConfig(s))
		if err != nil {
			// Config.Validate keeps each share of the dedupe buffer
			// large enough; this is not expected.
			d.logger.Error("not starting a log cleaner", "err", err)
			break
		}
		d.bg.Add(1)
		g.wg.Add(1)
		go d.cleanerLoop(g, c)
	}
	return g
}

// reconfigureCleaner applies cfg, the Dir's new configuration, to the
// cleaner: the I/O rate at once; other changed settings by a restart of
// the goroutines, which a goroutine of its own (restartCleaners) does,
// so that the caller does not wait for the rounds in progress to end.
//
// REQUIRES: d.mu is held and the Dir is not closed (so that Close waits
// for the goroutine started here).
func (d *Dir) reconfigureCleaner(cfg Config) {
	d.cleaner.throttler.SetRate(cfg.CleanerIOMaxBytesPerSecond)
	p := &d.cleaner.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.gen == nil:
		// log.cleaner.enable is false: nothing runs.
	case p.restarting:
		p.again = true
	case p.gen.settings != cleanerSettingsOf(cfg):
		p.restarting = true
		d.bg.Add(1)
		go d.restartCleaners()
	}
}

// restartCleaners stops the running cleaner goroutines, each after its
// round, and starts new ones with the settings of the Dir's configuration
// (Kafka's LogCleaner.reconfigure: shutdownCleaners, then startup), until
// no reconfiguration came meanwhile, or the Dir closes.
func (d *Dir) restartCleaners() {
	defer d.bg.Done()
	p := &d.cleaner.pool
	for {
		p.mu.Lock()
		old := p.gen
		p.again = false
		p.mu.Unlock()
		s := cleanerSettingsOf(d.Config())
		if s != old.settings {
			close(old.quit)
			old.wg.Wait()
			select {
			case <-d.stop:
				return
			default:
			}
			g := d.startCleanerGen(s)
			d.logger.Info("restarted the log cleaner with new settings", "threads", s.threads,
				"dedupeBufferSize", s.dedupeBufferSize, "ioBufferSize", s.ioBufferSize, "loadFactor", s.loadFactor, "backoff", s.backoff)
			p.mu.Lock()
			p.gen = g
			p.mu.Unlock()
		}
		p.mu.Lock()
		if !p.again {
			p.restarting = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
}

// stopCleaner cancels the rounds in progress and waits for them.
func (d *Dir) stopCleaner() {
	d.cleaner.mu.Lock()
	d.cleaner.closed = true
	d.cleaner.mu.Unlock()
	d.cleaner.cancel()
	d.cleaner.rounds.Wait()
}

// enterRound registers a cleaning round, unless the cleaner is closed; the
// round calls rounds.Done when it ends.
func (c *cleanerState) enterRound() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.rounds.Add(1)
	return true
}

// cleanerLoop cleans the filthiest log, again and again, and sleeps
// log.cleaner.backoff.ms when none needs it or a round failed (as Kafka's
// CleanerThread pauses when tryCleanFilthiestLog returns false). A failed
// round marks its log uncleanable, so the next pick skips it; an aborted
// round (the log changed under it) is followed at once by the next pick.
// It returns when the Dir closes (which aborts the round in progress) or
// when g is stopped (after the round in progress).
func (d *Dir) cleanerLoop(g *cleanerGen, c *compaction.Cleaner) {
	defer d.bg.Done()
	defer g.wg.Done()
	for {
		l, _, err := d.cleanFilthiest(d.cleaner.ctx, c, nil)
		if l != nil && (err == nil || errors.Is(err, compaction.ErrAborted)) {
			select {
			case <-d.stop:
				return
			case <-g.quit:
				return
			default:
				continue
			}
		}
		t := time.NewTimer(g.settings.backoff)
		select {
		case <-d.stop:
			t.Stop()
			return
		case <-g.quit:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// mergeDynamic returns the dynamic broker settings in effect: the
// cluster's defaults with this broker's over them.
func mergeDynamic(def, broker map[string]string) map[string]string {
	m := maps.Clone(def)
	maps.Copy(m, broker)
	return m
}

// checkCleanerReconfiguration refuses, as Kafka's
// LogCleaner.validateReconfiguration does, a change of the dynamic
// settings in effect (from oldDyn to newDyn) that touches one of Kafka's
// cleaner reconfigurable configs and leaves log.cleaner.threads (next's)
// below 1, below half cur's (integer half, as Kafka's) or above double.
// Without log.cleaner.enable there is no cleaner to reconfigure, and so
// no check, as in Kafka.
func (d *Dir) checkCleanerReconfiguration(cur, next Config, oldDyn, newDyn map[string]string) error {
	if !d.cfg.CleanerEnable {
		return nil
	}
	changed := false
	for _, name := range cleanerReconfigurationProps {
		ov, oldSet := oldDyn[name]
		nv, newSet := newDyn[name]
		changed = changed || oldSet != newSet || ov != nv
	}
	if !changed {
		return nil
	}
	n, now := next.CleanerThreads, cur.CleanerThreads
	var reason string
	switch {
	case n < 1:
		reason = "Log cleaner threads should be at least 1"
	case n < now/2:
		reason = fmt.Sprintf("Log cleaner threads cannot be reduced to less than half the current value %d", now)
	case n > now*2:
		reason = fmt.Sprintf("Log cleaner threads cannot be increased to more than double the current value %d", now)
	default:
		return nil
	}
	return newConfigError("log.cleaner.threads", fmt.Sprint(n), reason, nil)
}
