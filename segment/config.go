package segment

import "time"

// Config holds the topic settings a segment applies itself. Rolling by size
// and time is decided with [Segment.ShouldRoll], whose thresholds the log
// passes in.
type Config struct {
	// IndexIntervalBytes mirrors index.interval.bytes (Kafka's default
	// 4096): an offset and a time index entry are added once more than this
	// many bytes were appended since the last entry.
	IndexIntervalBytes int
	// MaxIndexBytes mirrors segment.index.bytes (default 10485760): the size
	// the active segment's index files are preallocated to.
	MaxIndexBytes int
	// Preallocate mirrors preallocate (default false): the .log of a new
	// segment is created at SegmentBytes and trimmed when sealed or closed.
	Preallocate bool
	// SegmentBytes mirrors segment.bytes (default 1 GiB); used only to
	// preallocate.
	SegmentBytes int64
	// RecoveryBufferBytes is the read size of the recovery scan (not a Kafka
	// property); 0 means 1 MiB.
	RecoveryBufferBytes int
	// Now returns the current time; nil means time.Now. Tests inject a clock.
	Now func() time.Time
	// OnIndexRebuild, if set, is called after an inactive segment rebuilt
	// its .index and .timeindex from its .log because they failed their
	// checks (cause says which) or the .index was missing; the log logs
	// and counts it. It runs on the goroutine that found the damage, with
	// no lock of the segment held.
	OnIndexRebuild func(logFile string, cause error)
	// OnLogDamage, if set, is called when a sealed segment finds its .log
	// damaged (see "Damage" in [Segment]'s doc): err is the [*Error] that
	// reads past the readable part of the .log return from then on. Same
	// conditions as OnIndexRebuild.
	OnLogDamage func(err error)
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		IndexIntervalBytes: 4096,
		MaxIndexBytes:      10 << 20,
		SegmentBytes:       1 << 30,
	}
}

func (c *Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Config) recoveryBuffer() int {
	if c.RecoveryBufferBytes > 0 {
		return max(c.RecoveryBufferBytes, 4096)
	}
	return 1 << 20
}

// recoveryWindow is the window of a scan over size bytes of a .log: the
// recovery buffer, or less for a smaller file (no read reaches past its
// end), so that the recovery of many small segments does not make and
// clear a 1 MiB buffer for each.
func (c *Config) recoveryWindow(size int64) int {
	return int(min(int64(c.recoveryBuffer()), max(size, 4096)))
}
