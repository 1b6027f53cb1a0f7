package record

import (
	"fmt"
	"strings"
)

// Attributes is a batch's attributes field (Kafka's DefaultRecordBatch).
// Only the low byte is defined; Kafka reads the field as (byte) short, so
// bits 8–15 are ignored by every accessor.
//
//	bit  0–2  compression codec (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)
//	bit  3    timestamp type (0 CreateTime, 1 LogAppendTime)
//	bit  4    transactional
//	bit  5    control batch
//	bit  6    baseTimestamp holds the delete horizon (set by the cleaner)
type Attributes int16

// Attribute bits. Part of the wire format; must not be changed.
const (
	codecMask            Attributes = 0x07
	attrLogAppendTime    Attributes = 0x08
	attrTransactional    Attributes = 0x10
	attrControl          Attributes = 0x20
	attrHasDeleteHorizon Attributes = 0x40
)

// Compression returns the codec in bits 0–2.
func (a Attributes) Compression() Compression { return Compression(a & codecMask) }

// TimestampType returns CreateTime or LogAppendTime.
func (a Attributes) TimestampType() TimestampType {
	if a&attrLogAppendTime != 0 {
		return LogAppendTime
	}
	return CreateTime
}

// IsTransactional reports bit 4.
func (a Attributes) IsTransactional() bool { return a&attrTransactional != 0 }

// IsControl reports bit 5. A control batch need not be transactional (KRaft's
// control batches are not).
func (a Attributes) IsControl() bool { return a&attrControl != 0 }

// HasDeleteHorizon reports bit 6: baseTimestamp holds the delete horizon.
func (a Attributes) HasDeleteHorizon() bool { return a&attrHasDeleteHorizon != 0 }

// WithCompression returns a with its codec replaced.
func (a Attributes) WithCompression(c Compression) Attributes {
	return a&^codecMask | Attributes(c)&codecMask
}

// WithTimestampType returns a with its timestamp type replaced.
func (a Attributes) WithTimestampType(t TimestampType) Attributes {
	return a.with(attrLogAppendTime, t == LogAppendTime)
}

// WithTransactional returns a with bit 4 set or cleared.
func (a Attributes) WithTransactional(on bool) Attributes { return a.with(attrTransactional, on) }

// WithControl returns a with bit 5 set or cleared.
func (a Attributes) WithControl(on bool) Attributes { return a.with(attrControl, on) }

// WithDeleteHorizon returns a with bit 6 set or cleared.
func (a Attributes) WithDeleteHorizon(on bool) Attributes { return a.with(attrHasDeleteHorizon, on) }

func (a Attributes) with(bit Attributes, on bool) Attributes {
	if on {
		return a | bit
	}
	return a &^ bit
}

// String lists the flags, e.g. "CreateTime|transactional".
func (a Attributes) String() string {
	parts := []string{a.TimestampType().String()}
	if a.IsTransactional() {
		parts = append(parts, "transactional")
	}
	if a.IsControl() {
		parts = append(parts, "control")
	}
	if a.HasDeleteHorizon() {
		parts = append(parts, "deleteHorizon")
	}
	return strings.Join(parts, "|")
}

// TimestampType says what a batch's timestamps mean.
type TimestampType int8

const (
	// CreateTime: records carry the producer's timestamps.
	CreateTime TimestampType = 0
	// LogAppendTime: every record's timestamp is the time the log appended
	// the batch, stored as the batch's MaxTimestamp.
	LogAppendTime TimestampType = 1
)

func (t TimestampType) String() string {
	if t == LogAppendTime {
		return "LogAppendTime"
	}
	return "CreateTime"
}

// Compression is a batch compression codec, numbered as on the wire.
type Compression int8

// Codecs. Part of the wire format; must not be changed.
const (
	None   Compression = 0
	Gzip   Compression = 1
	Snappy Compression = 2
	LZ4    Compression = 3
	Zstd   Compression = 4
)

var codecNames = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

// Valid reports whether c is one of the five codecs.
func (c Compression) Valid() bool { return c >= None && c <= Zstd }

// String returns Kafka's name for the codec (compression.type values).
func (c Compression) String() string {
	if c.Valid() {
		return codecNames[c]
	}
	return fmt.Sprintf("codec(%d)", int8(c))
}

// ParseCompression parses Kafka's compression.type names: none, gzip,
// snappy, lz4, zstd. ("uncompressed" and "producer" are topic-level values
// that the log package handles.)
func ParseCompression(name string) (Compression, error) {
	for i, n := range codecNames {
		if n == name {
			return Compression(i), nil
		}
	}
	return None, fmt.Errorf("%w: %q", ErrUnknownCodec, name)
}
