package consumer

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/kafkalite/kafkalite/internal/props"
)

// AcknowledgementMode mirrors share.acknowledgement.mode: how a
// [ShareConsumer]'s records are acknowledged.
type AcknowledgementMode int8

// The share.acknowledgement.mode values.
const (
	// AcknowledgeImplicit ("implicit", Kafka's default): every record a
	// Poll returned is accepted by the next Poll, CommitSync or
	// CommitAsync; Acknowledge is refused.
	AcknowledgeImplicit AcknowledgementMode = iota
	// AcknowledgeExplicit ("explicit"): the application acknowledges each
	// record with Acknowledge, all of them before the next Poll.
	AcknowledgeExplicit
)

// String returns the property value: "implicit" or "explicit".
func (m AcknowledgementMode) String() string {
	switch m {
	case AcknowledgeImplicit:
		return "implicit"
	case AcknowledgeExplicit:
		return "explicit"
	}
	return fmt.Sprintf("acknowledgement_mode(%d)", int8(m))
}

// ShareConfig holds a [ShareConsumer]'s settings: the properties of Kafka's
// share consumer (ShareConsumerConfig, which is ConsumerConfig without the
// properties share groups do not take) plus Go hooks. Start from
// [DefaultShareConfig]. The heartbeat interval and session timeout are the
// share group's (group.share.heartbeat.interval.ms and
// group.share.session.timeout.ms of the directory), as in Kafka.
type ShareConfig struct {
	// GroupID mirrors group.id (required): the share group.
	GroupID string
	// ClientID mirrors client.id (default ""): the name in log lines and
	// the group's description. Empty means "consumer-<group.id>-N", N
	// counting consumers created in this process, as Kafka names them.
	ClientID string
	// ClientRack mirrors client.rack (default ""): sent to the group
	// coordinator and shown in the group's description.
	ClientRack string
	// AcknowledgementMode mirrors share.acknowledgement.mode (default
	// AcknowledgeImplicit).
	AcknowledgementMode AcknowledgementMode
	// MaxPollRecords mirrors max.poll.records (default 500): the most
	// records one Poll returns. Acquisition takes whole batches, as
	// Kafka's share.acquire.mode=batch_optimized does: records acquired
	// beyond it are kept, still acquired, for the next Poll. 1 to
	// 2147483647.
	MaxPollRecords int
	// FetchMaxBytes mirrors fetch.max.bytes (default 52428800, 50 MiB): the
	// bytes one Poll reads across partitions; soft, the first batch is
	// read whatever its size. 0 to 2147483647.
	FetchMaxBytes int
	// MaxPartitionFetchBytes mirrors max.partition.fetch.bytes (default
	// 1048576, 1 MiB): the bytes one Poll reads from one partition; soft,
	// as FetchMaxBytes. 0 to 2147483647.
	MaxPartitionFetchBytes int
	// CheckCRCs mirrors check.crcs (default true): verify the CRC-32C of
	// every batch read.
	CheckCRCs bool
	// Logger receives the consumer's log lines; nil means slog.Default()
	// at level Warn and above.
	Logger *slog.Logger
}

// DefaultShareConfig returns Kafka 4.4's share consumer defaults.
func DefaultShareConfig() ShareConfig {
	return ShareConfig{
		AcknowledgementMode:    AcknowledgeImplicit,
		MaxPollRecords:         500,
		FetchMaxBytes:          50 << 20,
		MaxPartitionFetchBytes: 1 << 20,
		CheckCRCs:              true,
	}
}

// Validate applies Kafka's ranges: a group.id, max.poll.records at least
// 1, sizes not negative, a known acknowledgement mode. It returns nil or
// one [*ConfigError] per bad property, joined in name order.
func (c ShareConfig) Validate() error {
	v := props.Validator{New: newConfigError, Key: configErrorProperty}
	if c.GroupID == "" {
		// ShareConsumerImpl: "You must provide a valid group.id".
		v.Add("group.id", "", "a share consumer needs a group.id")
	}
	switch c.AcknowledgementMode {
	case AcknowledgeImplicit, AcknowledgeExplicit:
	default:
		v.Add("share.acknowledgement.mode", c.AcknowledgementMode.String(), "must be one of implicit, explicit")
	}
	v.IntRange("max.poll.records", c.MaxPollRecords, 1)
	v.IntRange("fetch.max.bytes", c.FetchMaxBytes, 0)
	v.IntRange("max.partition.fetch.bytes", c.MaxPartitionFetchBytes, 0)
	return v.Err()
}

// ParseShareConfig returns [DefaultShareConfig] with props, Kafka share
// consumer property names and values, applied and validated.
//
// As Kafka's ShareConsumerConfig, it refuses the consumer properties that
// share groups do not take: auto.offset.reset, enable.auto.commit,
// group.instance.id, isolation.level, partition.assignment.strategy,
// interceptor.classes, session.timeout.ms, heartbeat.interval.ms,
// group.protocol and group.remote.assignor are [*ConfigError]s when
// present, whatever their values (a share group's offset reset and
// isolation level are group configurations: share.auto.offset.reset,
// share.isolation.level). share.acquire.mode must be batch_optimized
// (Kafka's default); record_limit matches [ErrNotSupported]. The other
// properties Kafka's consumer defines and a share consumer does not use
// (networking, security, metrics, fetch.min.bytes and the like) are
// accepted and returned, sorted, in unused. Names Kafka does not define
// match [ErrUnknownProperty].
func ParseShareConfig(m map[string]string) (ShareConfig, []string, error) {
	c := DefaultShareConfig()
	ignored := func(name string) (func(string) error, bool) {
		if _, ok := shareUnsupportedProps[name]; ok {
			return nil, false
		}
		if _, ok := consumerProps[name]; ok {
			return nil, true
		}
		if name == "share.acknowledgement.mode" {
			return nil, false
		}
		return props.InClient(ignoredConsumerProps)(name)
	}
	unknown := func(name, value string) error {
		if _, ok := shareUnsupportedProps[name]; ok {
			// ShareConsumerConfig.checkUnsupportedConfigsPreProcess.
			return newConfigError(name, value, "not supported by share consumers", nil)
		}
		return unknownProperty(name, value)
	}
	invalid := func(name, value string, err error) error {
		if errors.Is(err, ErrNotSupported) {
			return newConfigError(name, value, err.Error(), ErrNotSupported)
		}
		return propError(name, value, err)
	}
	unused, errs := props.Sift(m, shareProps, ignored, unknown, invalid)
	errs = append(errs, props.Apply(&c, m, shareProps, props.SortedKeys(shareProps), invalid)...)
	return props.Parsed(c, unused, errs, configErrorProperty, c.Validate)
}

// Properties prints the settings as Kafka share consumer properties, so
// that ParseShareConfig(c.Properties()) returns c for a valid c without a
// Logger. group.id, client.id and client.rack are printed only when set.
func (c ShareConfig) Properties() map[string]string { return props.Print(&c, shareProps) }

// String returns the properties as sorted "name=value" lines.
func (c ShareConfig) String() string { return props.String(c.Properties()) }

// errRecordLimit: share.acquire.mode=record_limit, which the
// share-partition manager does not offer (it acquires whole batches).
var errRecordLimit = fmt.Errorf("record_limit is %w (acquisition takes whole batches)", ErrNotSupported)

// shareUnsupportedProps: Kafka's ShareConsumerConfig refuses these.
var shareUnsupportedProps = map[string]struct{}{
	"auto.offset.reset": {}, "enable.auto.commit": {}, "group.instance.id": {}, "isolation.level": {},
	"partition.assignment.strategy": {}, "interceptor.classes": {}, "session.timeout.ms": {},
	"heartbeat.interval.ms": {}, "group.protocol": {}, "group.remote.assignor": {},
}

// shareProps: the share consumer properties kafkalite uses.
var shareProps = map[string]props.Prop[ShareConfig]{
	"group.id": {
		Set: func(c *ShareConfig, v string) error {
			if c.GroupID = props.Trim(v); c.GroupID == "" {
				return errors.New("should not be an empty string or whitespace")
			}
			return nil
		},
		Get: func(c *ShareConfig) (string, bool) { return c.GroupID, c.GroupID != "" }},
	"client.id": {
		Set: func(c *ShareConfig, v string) error { c.ClientID = props.Trim(v); return nil },
		Get: func(c *ShareConfig) (string, bool) { return c.ClientID, c.ClientID != "" }},
	"client.rack": {
		Set: func(c *ShareConfig, v string) error { c.ClientRack = props.Trim(v); return nil },
		Get: func(c *ShareConfig) (string, bool) { return c.ClientRack, c.ClientRack != "" }},
	"share.acknowledgement.mode": {
		Set: func(c *ShareConfig, v string) error {
			// ShareAcknowledgementMode.fromString: lower case only.
			switch props.Trim(v) {
			case "implicit":
				c.AcknowledgementMode = AcknowledgeImplicit
			case "explicit":
				c.AcknowledgementMode = AcknowledgeExplicit
			default:
				return errors.New("must be one of implicit, explicit")
			}
			return nil
		},
		Get: func(c *ShareConfig) (string, bool) { return c.AcknowledgementMode.String(), true }},
	"share.acquire.mode": {
		Set: func(c *ShareConfig, v string) error {
			switch props.Trim(v) {
			case "batch_optimized":
				return nil
			case "record_limit":
				return errRecordLimit
			}
			return errors.New("must be one of batch_optimized, record_limit")
		}},
	"max.poll.records":          props.IntProp(func(c *ShareConfig) *int { return &c.MaxPollRecords }),
	"fetch.max.bytes":           props.IntProp(func(c *ShareConfig) *int { return &c.FetchMaxBytes }),
	"max.partition.fetch.bytes": props.IntProp(func(c *ShareConfig) *int { return &c.MaxPartitionFetchBytes }),
	"check.crcs":                props.BoolProp(func(c *ShareConfig) *bool { return &c.CheckCRCs }),
}
