package consumer

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/internal/props"
	"github.com/kafkalite/kafkalite/log"
)

// Configuration of a consumer ([Config]), mirroring Kafka's consumer
// properties (ConsumerConfig.java, AutoOffsetResetStrategy.java and
// ClassicKafkaConsumer.java of Apache Kafka 4.x). A Config is a plain struct
// started from Kafka's defaults ([DefaultConfig]), parsed from and printed
// to Kafka property maps ([ParseConfig], [Config.Properties]) so that a
// Kafka consumer configuration round-trips.
//
// # Values
//
// Values are parsed as Kafka's ConfigDef parses them: surrounding whitespace
// (every character up to U+0020) is ignored; ints are decimal with an
// optional sign; booleans are "true" or "false" in any case; lists are comma
// separated. auto.offset.reset and isolation.level are case sensitive, as in
// Kafka; group.protocol is not. Every millisecond property of the consumer
// is an int in Kafka, so at most 2147483647 ms (about 24.8 days).
//
// # Where kafkalite differs from Kafka
//
//   - allow.auto.create.topics defaults to false (Kafka: true), so that a
//     typo in a topic name fails instead of creating a topic.
//   - session.timeout.ms and heartbeat.interval.ms must be at least 1 ms
//     (Kafka's client accepts any int and leaves the range of the session
//     timeout to the broker's group.min.session.timeout.ms and
//     group.max.session.timeout.ms).
//   - A [Config] holds no null: an empty GroupID is Kafka's absent (null)
//     group.id. Kafka turns enable.auto.commit off when group.id is absent;
//     here EnableAutoCommit simply has no effect without a GroupID (see the
//     field). From a property map the checks are Kafka's: an empty group.id,
//     and enable.auto.commit=true without a group.id, are errors.
//   - group.instance.id: the group coordinator treats a member that
//     joins again under its instance id without a member id (a Kafka
//     client restarted, over the wire) as Kafka treats a static member,
//     but an in-process consumer names its own member id, so it never
//     takes a static member's place; see [Config.GroupInstanceID].
//   - Deserializers and interceptors are Go code: key.deserializer and
//     value.deserializer are accepted and ignored, and interceptor.classes
//     must be empty. partition.assignment.strategy resolves Kafka's four
//     built-in assignor classes (and kafkalite's protocol names); other
//     assignors are set in code.

// ErrNotSupported is matched by errors for features kafkalite does not
// have yet; the error names the feature (for configuration, a
// [*ConfigError] whose Err is ErrNotSupported).
var ErrNotSupported = errors.New("consumer: not supported")

// ErrInvalidConfig is matched by every configuration error ([*ConfigError]):
// [log.ErrInvalidConfig], one sentinel for every kafkalite configuration.
var ErrInvalidConfig = log.ErrInvalidConfig

// ErrUnknownProperty is matched by the [*ConfigError] for a property name
// Kafka's consumer does not define ([log.ErrUnknownProperty]). It also matches
// [ErrInvalidConfig].
var ErrUnknownProperty = log.ErrUnknownProperty

// ConfigError names the property that is wrong, its value and why: a
// [log.ConfigError] whose Component is "consumer". It matches
// [ErrInvalidConfig], and its Err ([ErrUnknownProperty], or
// [ErrNotSupported] for a feature kafkalite does not have).
type ConfigError = log.ConfigError

// newConfigError makes a *ConfigError for props; a nil sentinel means
// ErrInvalidConfig.
func newConfigError(prop, value, reason string, sentinel error) error {
	return &ConfigError{Component: "consumer", Property: prop, Value: value, Reason: reason, Err: sentinel}
}

// unknownProperty is the error for a name Kafka's consumer does not define.
var unknownProperty = props.Unknown(newConfigError, ErrUnknownProperty)

// configErrorProperty is the key errors are sorted by: their property.
func configErrorProperty(err error) string { return err.(*ConfigError).Property }

// OffsetReset mirrors auto.offset.reset: where the consumer starts in a
// partition that has no committed offset, or whose offset is out of range
// (no longer, or not yet, in the log).
type OffsetReset int8

// The auto.offset.reset strategies.
const (
	// OffsetResetLatest ("latest", Kafka's default): the log end offset;
	// only records written from now on are read.
	OffsetResetLatest OffsetReset = iota
	// OffsetResetEarliest ("earliest"): the log start offset.
	OffsetResetEarliest
	// OffsetResetNone ("none"): no reset; the consumer fails with
	// [ErrNoOffset].
	OffsetResetNone
	// OffsetResetByDuration ("by_duration:<ISO-8601 duration>", Kafka 4.0,
	// KIP-1106): the first offset whose timestamp is at or after now minus
	// [Config.AutoOffsetResetDuration], as an offsets-for-times lookup
	// finds it.
	OffsetResetByDuration
)

// String returns Kafka's name of the strategy: "latest", "earliest",
// "none" or "by_duration" (the property value of the last adds the
// duration: see [Config.Properties]).
func (r OffsetReset) String() string {
	switch r {
	case OffsetResetLatest:
		return "latest"
	case OffsetResetEarliest:
		return "earliest"
	case OffsetResetNone:
		return "none"
	case OffsetResetByDuration:
		return "by_duration"
	}
	return fmt.Sprintf("offset_reset(%d)", int8(r))
}

func (r OffsetReset) valid() bool { return r >= OffsetResetLatest && r <= OffsetResetByDuration }

const offsetResetValues = "latest, earliest, none, by_duration:<ISO-8601 duration such as PT1H>"

// parseOffsetReset parses an auto.offset.reset value as Kafka's
// AutoOffsetResetStrategy.fromString does: the names are case sensitive,
// and by_duration takes a non-negative java.time.Duration after a colon.
func parseOffsetReset(v string) (OffsetReset, time.Duration, error) {
	switch s := props.Trim(v); s {
	case "latest":
		return OffsetResetLatest, 0, nil
	case "earliest":
		return OffsetResetEarliest, 0, nil
	case "none":
		return OffsetResetNone, 0, nil
	case "by_duration":
		return 0, 0, errors.New("by_duration needs a duration: by_duration:<ISO-8601 duration such as PT1H>")
	default:
		iso, ok := strings.CutPrefix(s, "by_duration:")
		if !ok {
			return 0, 0, errors.New("must be one of " + offsetResetValues)
		}
		d, err := parseJavaDuration(iso)
		if err != nil {
			return 0, 0, fmt.Errorf("by_duration: %w", err)
		}
		return OffsetResetByDuration, d, nil
	}
}

// formatOffsetReset prints auto.offset.reset's value.
func formatOffsetReset(r OffsetReset, d time.Duration) string {
	if r == OffsetResetByDuration {
		return "by_duration:" + formatJavaDuration(d)
	}
	return r.String()
}

// javaDuration is the grammar of java.time.Duration.parse (ISO-8601
// PnDTnHnMn.nS, letters in either case, a sign allowed before P and before
// each number, at most nine fraction digits after '.' or ',').
var javaDuration = regexp.MustCompile(`^([-+]?)[Pp](?:([-+]?[0-9]+)[Dd])?` +
	`([Tt](?:([-+]?[0-9]+)[Hh])?(?:([-+]?[0-9]+)[Mm])?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?[Ss])?)?$`)

// parseJavaDuration parses a duration as java.time.Duration.parse does and
// applies Kafka's rule that it must not be negative. Durations beyond a
// time.Duration's range (about 292 years) clamp to the largest one.
func parseJavaDuration(s string) (time.Duration, error) {
	m := javaDuration.FindStringSubmatch(s)
	if m == nil || (m[2] == "" && m[4] == "" && m[5] == "" && m[6] == "") || strings.EqualFold(m[3], "T") {
		return 0, fmt.Errorf("%q is not an ISO-8601 duration (PnDTnHnMn.nS)", s)
	}
	errRange := fmt.Errorf("%q is out of range", s)
	var secs int64
	for _, part := range []struct {
		digits string
		unit   int64
	}{{m[2], 86400}, {m[4], 3600}, {m[5], 60}, {m[6], 1}} {
		if part.digits == "" {
			continue
		}
		n, err := strconv.ParseInt(part.digits, 10, 64)
		if err != nil || n > math.MaxInt64/part.unit || n < math.MinInt64/part.unit {
			return 0, errRange
		}
		var ok bool
		if secs, ok = addExact(secs, n*part.unit); !ok {
			return 0, errRange
		}
	}
	var nanos int64
	if m[7] != "" {
		nanos, _ = strconv.ParseInt((m[7] + "00000000")[:9], 10, 64)
		if strings.HasPrefix(m[6], "-") {
			nanos = -nanos
		}
	}
	if m[1] == "-" {
		if secs == math.MinInt64 {
			return 0, errRange
		}
		secs, nanos = -secs, -nanos
	}
	if secs < 0 || (secs == 0 && nanos < 0) {
		return 0, fmt.Errorf("%q is negative", s)
	}
	const maxSecs = math.MaxInt64 / int64(time.Second)
	if secs > maxSecs || (secs == maxSecs && nanos > math.MaxInt64%int64(time.Second)) {
		return time.Duration(math.MaxInt64), nil
	}
	return time.Duration(secs)*time.Second + time.Duration(nanos), nil
}

func addExact(a, b int64) (int64, bool) {
	c := a + b
	return c, (a >= 0) != (b >= 0) || (c >= 0) == (a >= 0)
}

// formatJavaDuration prints d as java.time.Duration.toString does for a
// non-negative duration: hours, minutes and seconds with the fraction's
// trailing zeros dropped, zero parts left out; "PT0S" for zero.
func formatJavaDuration(d time.Duration) string {
	if d < 0 { // not valid; printed so that it parses back as negative
		return "-" + formatJavaDurationNanos(uint64(-(d+1))+1)
	}
	return formatJavaDurationNanos(uint64(d))
}

func formatJavaDurationNanos(n uint64) string {
	if n == 0 {
		return "PT0S"
	}
	const sec = uint64(time.Second)
	hours, minutes, secs, nanos := n/(3600*sec), n/(60*sec)%60, n/sec%60, n%sec
	b := []byte("PT")
	if hours != 0 {
		b = append(strconv.AppendUint(b, hours, 10), 'H')
	}
	if minutes != 0 {
		b = append(strconv.AppendUint(b, minutes, 10), 'M')
	}
	if secs != 0 || nanos != 0 {
		b = strconv.AppendUint(b, secs, 10)
		if nanos != 0 {
			frac := strconv.FormatUint(nanos+sec, 10)[1:] // nine digits
			b = append(append(b, '.'), strings.TrimRight(frac, "0")...)
		}
		b = append(b, 'S')
	}
	return string(b)
}

// IsolationLevel mirrors isolation.level: whether the consumer reads
// records of transactions that are open or aborted. Control batches
// (transaction markers) are never returned at either level. It is
// [log.IsolationLevel], the level a consumer's reads of the log take.
type IsolationLevel = log.IsolationLevel

// The isolation.level values.
const (
	// ReadUncommitted ("read_uncommitted", Kafka's default): every data
	// record up to the high watermark, including those of open and aborted
	// transactions.
	ReadUncommitted = log.ReadUncommitted
	// ReadCommitted ("read_committed"): the records of committed
	// transactions and of non-transactional producers, up to the last
	// stable offset (the first offset of the earliest open transaction);
	// records of aborted transactions are skipped. The end of a partition
	// (EndOffsets, SeekToEnd, Lag, auto.offset.reset=latest) is the last
	// stable offset.
	ReadCommitted = log.ReadCommitted
)

// parseIsolationLevel accepts Kafka's two values, case sensitive.
func parseIsolationLevel(v string) (IsolationLevel, error) {
	switch props.Trim(v) {
	case "read_uncommitted":
		return ReadUncommitted, nil
	case "read_committed":
		return ReadCommitted, nil
	}
	return 0, errors.New("must be one of read_committed, read_uncommitted")
}

// The group.protocol values (Kafka compares them ignoring case).
const (
	groupProtocolClassic  = "classic"
	groupProtocolConsumer = "consumer"
)

// Config holds a consumer's settings: Kafka's consumer properties
// (ConsumerConfig.java) plus hooks that are Go values (Logger, Now). Start
// from [DefaultConfig]: the zero value is not valid (a zero MaxPollRecords
// or an empty GroupProtocol is an error). A Config is a value; methods only
// read it. A copy shares the assignors of PartitionAssignmentStrategy.
type Config struct {
	// GroupID mirrors group.id (default unset, ""): the consumer group
	// whose members share the partitions of their subscriptions and whose
	// committed offsets are kept in __consumer_offsets. Empty means no
	// group, Kafka's null: only Assign works, and offsets cannot be
	// committed to a group. (In a property map, a group.id that is present
	// but empty is an error, as in Kafka 4.x.)
	GroupID string
	// GroupInstanceID mirrors group.instance.id (default unset, ""): a
	// static member's id, unique in its group. When set it must be at most
	// 249 characters of ASCII letters, digits, '.', '_' and '-', and not
	// "." or "..", as Kafka checks. It is sent with every join, named in
	// the client id, shown by DescribeGroup and used by the assignors that
	// order static members by it. The group coordinator treats a member
	// that joins again under the id without a member id (a Kafka client
	// restarted, over the wire) as Kafka treats a static member: it takes
	// the old member's place and partitions without a rebalance, and the
	// old member id is fenced. A consumer here names its own member id, so
	// it does not take such a place: while a member with its instance id
	// is in the group, its Poll fails with the coordinator's fenced
	// instance error. Unlike Kafka's consumer, Close leaves the group, so a
	// consumer started again with the same id joins as a new member, with
	// a rebalance; in-process members are not kept across a reopening of
	// the directory. [Consumer.GroupMetadata] carries it.
	GroupInstanceID string
	// ClientID mirrors client.id (default ""): the name in log lines and
	// errors. Empty means the consumer names itself "consumer-<group.id>-N",
	// N counting consumers created in this process from 1, as Kafka does
	// (Kafka puts group.instance.id in place of N when it is set).
	ClientID string
	// ClientRack mirrors client.rack (default ""): the rack of the
	// consumer, for rack-aware assignment (KIP-881) by assignors that
	// consider it. In process every partition has one replica, local to
	// every consumer.
	ClientRack string
	// AutoOffsetReset mirrors auto.offset.reset (default
	// OffsetResetLatest): where to start in a partition without a committed
	// offset or whose offset is out of range.
	AutoOffsetReset OffsetReset
	// AutoOffsetResetDuration is the duration of auto.offset.reset
	// "by_duration:<ISO-8601 duration>" (for example by_duration:PT1H
	// starts an hour back): at least 0, and 0 unless AutoOffsetReset is
	// OffsetResetByDuration. It prints as Java's Duration.toString does
	// (PT24H for P1D). Durations beyond about 292 years parse as the
	// largest time.Duration.
	AutoOffsetResetDuration time.Duration
	// EnableAutoCommit mirrors enable.auto.commit (default true): commit
	// the positions of the records returned by Poll every
	// AutoCommitInterval, from Poll, and on Close. It has effect only with
	// a GroupID, as in Kafka (which turns the default off without a
	// group.id, and rejects an explicit true).
	EnableAutoCommit bool
	// AutoCommitInterval mirrors auto.commit.interval.ms (default 5000, 5
	// s): how often positions are auto-committed. 0 to 2147483647 ms.
	AutoCommitInterval time.Duration
	// MaxPollRecords mirrors max.poll.records (default 500): the most
	// records one Poll returns (it does not change how much is fetched).
	// 1 to 2147483647.
	MaxPollRecords int
	// FetchMaxBytes mirrors fetch.max.bytes (default 52428800, 50 MiB): the
	// bytes one fetch returns across partitions. A soft limit: the first
	// batch is returned even if larger, so that the consumer makes
	// progress. 0 to 2147483647.
	FetchMaxBytes int
	// MaxPartitionFetchBytes mirrors max.partition.fetch.bytes (default
	// 1048576, 1 MiB): the bytes one fetch returns from one partition;
	// soft, as FetchMaxBytes. 0 to 2147483647.
	MaxPartitionFetchBytes int
	// FetchMinBytes mirrors fetch.min.bytes (default 1): a fetch waits
	// until this many bytes are available, or FetchMaxWait passes. 0 to
	// 2147483647.
	FetchMinBytes int
	// FetchMaxWait mirrors fetch.max.wait.ms (default 500 ms): the longest
	// a fetch waits for FetchMinBytes. 0 to 2147483647 ms.
	FetchMaxWait time.Duration
	// IsolationLevel mirrors isolation.level (default ReadUncommitted):
	// ReadUncommitted returns every data record up to the high watermark;
	// ReadCommitted returns only committed transactions' records and
	// non-transactional ones, never past the last stable offset, and
	// measures ends and lag from the last stable offset.
	IsolationLevel IsolationLevel
	// SessionTimeout mirrors session.timeout.ms (default 45000, 45 s): a
	// group member that sends no heartbeat for this long is removed from
	// the group, and its partitions are reassigned. 1 to 2147483647 ms.
	SessionTimeout time.Duration
	// HeartbeatInterval mirrors heartbeat.interval.ms (default 3000, 3 s):
	// how often a group member heartbeats. 1 to 2147483647 ms, and with a
	// GroupID below SessionTimeout, as Kafka checks.
	HeartbeatInterval time.Duration
	// MaxPollInterval mirrors max.poll.interval.ms (default 300000, 5
	// minutes): a group member that does not call Poll for this long leaves
	// the group. It is also the rebalance timeout: how long the group waits
	// for its members to rejoin. 1 to 2147483647 ms.
	MaxPollInterval time.Duration
	// PartitionAssignmentStrategy mirrors partition.assignment.strategy
	// (default [assignor.Range] then [assignor.CooperativeSticky], as
	// Kafka's RangeAssignor, CooperativeStickyAssignor): the assignors this
	// member supports, preferred first; the group uses the first one every
	// member supports. No nil entries and no two with one Name, and with a
	// GroupID they must share a rebalance protocol
	// ([assignor.RebalanceProtocol]), as Kafka checks. An empty list is
	// valid, as in Kafka, where Subscribe then fails ("Must configure at
	// least one partition assigner"); Assign works. From a property map,
	// each entry is a Java class name ([assignor.ByClassName]) or a
	// protocol name ([assignor.ByName]), comma separated; nil and empty are
	// the same.
	PartitionAssignmentStrategy []assignor.Assignor
	// CheckCRCs mirrors check.crcs (default true): verify the CRC-32C of
	// every batch read.
	CheckCRCs bool
	// AllowAutoCreateTopics mirrors allow.auto.create.topics. Kafka's
	// default is true; kafkalite's is false: topics are created
	// deliberately. With true, and a log directory whose
	// log.Config.AutoCreateTopics (auto.create.topics.enable) is set,
	// subscribing to a topic that does not exist creates it with the
	// directory's defaults, as a broker does when both allow it.
	AllowAutoCreateTopics bool
	// ExcludeInternalTopics mirrors exclude.internal.topics (default true):
	// a pattern subscription does not match internal topics such as
	// __consumer_offsets. Subscribing to one by name always works.
	ExcludeInternalTopics bool
	// GroupProtocol mirrors group.protocol (default "classic", compared
	// ignoring case): the group membership protocol. "consumer" is
	// KIP-848's: the coordinator assigns (PartitionAssignmentStrategy,
	// SessionTimeout and HeartbeatInterval are then unused: the group's
	// are group.consumer.* of the directory), the member reconciles
	// partition by partition, and the listener hears of revoked and
	// assigned partitions as Kafka's consumer tells it.
	GroupProtocol string
	// GroupRemoteAssignor mirrors group.remote.assignor (default unset):
	// the server assignor a member of group.protocol=consumer asks for
	// ("uniform" or "range"; unset, the group's default). It must be
	// unset with group.protocol=classic.
	GroupRemoteAssignor string
	// Logger receives the consumer's log lines; nil means slog.Default()
	// at level Warn and above (a member dropped from its group warns).
	Logger *slog.Logger
	// Now is the clock for auto-commit, heartbeats, timeouts and
	// by_duration resets; nil means time.Now. Tests inject one.
	Now func() time.Time
}

// DefaultConfig returns Kafka 4.x's consumer defaults (ConsumerConfig.java),
// with kafkalite's difference (AllowAutoCreateTopics false) as documented
// on the fields. Each call returns new assignors.
func DefaultConfig() Config {
	return Config{
		AutoOffsetReset:             OffsetResetLatest,
		EnableAutoCommit:            true,
		AutoCommitInterval:          5 * time.Second,
		MaxPollRecords:              500,
		FetchMaxBytes:               50 << 20,
		MaxPartitionFetchBytes:      1 << 20,
		FetchMinBytes:               1,
		FetchMaxWait:                500 * time.Millisecond,
		IsolationLevel:              ReadUncommitted,
		SessionTimeout:              45 * time.Second,
		HeartbeatInterval:           3 * time.Second,
		MaxPollInterval:             5 * time.Minute,
		PartitionAssignmentStrategy: []assignor.Assignor{assignor.Range(), assignor.CooperativeSticky()},
		CheckCRCs:                   true,
		AllowAutoCreateTopics:       false,
		ExcludeInternalTopics:       true,
		GroupProtocol:               groupProtocolClassic,
	}
}

// Validate applies Kafka's ranges and cross-checks (ConsumerConfig.java,
// AutoOffsetResetStrategy.java, the classic consumer's Heartbeat and
// JoinGroupRequest checks) and kafkalite's limits. It returns nil or one
// [*ConfigError] per bad property, joined in name order;
// group.protocol=consumer matches [ErrNotSupported] as well.
func (c Config) Validate() error {
	v := props.Validator{New: newConfigError, Key: configErrorProperty}
	if c.GroupInstanceID != "" {
		if reason := groupInstanceIDProblem(c.GroupInstanceID); reason != "" {
			v.Add("group.instance.id", c.GroupInstanceID, reason)
		}
	}
	switch {
	case !c.AutoOffsetReset.valid():
		v.Add("auto.offset.reset", c.AutoOffsetReset.String(), "must be one of "+offsetResetValues)
	case c.AutoOffsetResetDuration < 0:
		v.Add("auto.offset.reset", formatOffsetReset(c.AutoOffsetReset, c.AutoOffsetResetDuration),
			"the duration must not be negative")
	case c.AutoOffsetResetDuration != 0 && c.AutoOffsetReset != OffsetResetByDuration:
		v.Add("auto.offset.reset", c.AutoOffsetReset.String(), fmt.Sprintf(
			"AutoOffsetResetDuration (%s) is set, but only by_duration takes a duration", c.AutoOffsetResetDuration))
	}
	v.IntMillis("auto.commit.interval.ms", c.AutoCommitInterval, 0)
	v.IntRange("max.poll.records", c.MaxPollRecords, 1)
	v.IntRange("fetch.max.bytes", c.FetchMaxBytes, 0)
	v.IntRange("max.partition.fetch.bytes", c.MaxPartitionFetchBytes, 0)
	v.IntRange("fetch.min.bytes", c.FetchMinBytes, 0)
	v.IntMillis("fetch.max.wait.ms", c.FetchMaxWait, 0)
	switch c.IsolationLevel {
	case ReadUncommitted, ReadCommitted:
	default:
		v.Add("isolation.level", c.IsolationLevel.String(), "must be one of read_committed, read_uncommitted")
	}
	sessionOK := v.IntMillis("session.timeout.ms", c.SessionTimeout, 1)
	heartbeatOK := v.IntMillis("heartbeat.interval.ms", c.HeartbeatInterval, 1)
	if c.GroupID != "" && sessionOK && heartbeatOK && c.HeartbeatInterval >= c.SessionTimeout {
		// Kafka's Heartbeat: "Heartbeat must be set lower than the session timeout".
		v.Add("heartbeat.interval.ms", props.FormatMillis(c.HeartbeatInterval, false),
			fmt.Sprintf("must be lower than session.timeout.ms (%s)", props.FormatMillis(c.SessionTimeout, false)))
	}
	v.IntMillis("max.poll.interval.ms", c.MaxPollInterval, 1)
	if reason := assignorsProblem(c.PartitionAssignmentStrategy, c.GroupID != ""); reason != "" {
		v.Add("partition.assignment.strategy", formatAssignors(c.PartitionAssignmentStrategy), reason)
	}
	switch {
	case strings.EqualFold(c.GroupProtocol, groupProtocolClassic):
		if c.GroupRemoteAssignor != "" {
			v.Add("group.remote.assignor", c.GroupRemoteAssignor, "cannot be set when group.protocol=classic")
		}
	case strings.EqualFold(c.GroupProtocol, groupProtocolConsumer):
	default:
		v.Add("group.protocol", c.GroupProtocol, "must be one of classic, consumer")
	}
	return v.Err()
}

// groupInstanceIDProblem applies Kafka's JoinGroupRequest.validateGroupInstanceId
// to a non-empty id; "" means valid.
func groupInstanceIDProblem(id string) string {
	switch {
	case id == "." || id == "..":
		return `must not be "." or ".."`
	case len(id) > 249:
		return "must be at most 249 characters"
	case strings.IndexFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	}) >= 0:
		return "may contain only ASCII letters, digits, '.', '_' and '-'"
	}
	return ""
}

// assignorsProblem checks partition.assignment.strategy as Kafka's
// ConsumerPartitionAssignor.getAssignorInstances (names) and, with a group,
// ConsumerCoordinator (a common rebalance protocol) do; "" means valid.
func assignorsProblem(as []assignor.Assignor, group bool) string {
	seen := make(map[string]bool, len(as))
	for _, a := range as {
		if a == nil {
			return "must not contain a nil assignor"
		}
		if seen[a.Name()] {
			return fmt.Sprintf("two assignors are named %q", a.Name())
		}
		seen[a.Name()] = true
	}
	if group && len(as) > 0 {
		if _, err := assignor.RebalanceProtocol(as); err != nil {
			return fmt.Sprintf("the assignors have no rebalance protocol in common (%v)", err)
		}
	}
	return ""
}

// ParseConfig returns [DefaultConfig] with props, Kafka consumer property
// names and values, applied and validated.
//
// Properties Kafka's consumer defines that kafkalite does not use
// (networking, security, metrics, request timeouts, deserializers: see the
// list below) are accepted and returned, sorted, in unused; a few have
// their values checked as Kafka would. Names Kafka does not define are
// errors matching [ErrUnknownProperty]; a value that does not parse, or a
// result that does not validate, is a [*ConfigError]. Errors for several
// properties are joined, in name order.
//
// As in Kafka: a group.id that is present must not be empty;
// enable.auto.commit=true without a group.id is an error (absent, it has no
// effect without a group); group.protocol ignores case;
// partition.assignment.strategy lists Java class names, resolved by
// [assignor.ByClassName] to kafkalite's equivalents (kafkalite also accepts
// protocol names, by [assignor.ByName]) and must not repeat one;
// group.remote.assignor must be unset with group.protocol=classic, and
// partition.assignment.strategy, heartbeat.interval.ms and
// session.timeout.ms must be with group.protocol=consumer (the
// coordinator owns them); share.acknowledgement.mode and share.acquire.mode
// must be unset (they are a share consumer's: [ParseShareConfig]).
// interceptor.classes must be empty: Java classes cannot be loaded. key.deserializer and value.deserializer
// are accepted and ignored: deserializers are Go code. Any ssl.* or sasl.*
// name is accepted as a security setting, which has no meaning in-process.
//
// Accepted and unused (Apache Kafka 4.x ConsumerConfig.java):
// bootstrap.servers, client.dns.lookup, config.providers,
// connections.max.idle.ms, default.api.timeout.ms, enable.metrics.push,
// interceptor.classes (must be
// empty), internal.leave.group.on.close,
// internal.throw.on.fetch.stable.offset.unsupported, key.deserializer,
// metadata.max.age.ms, metadata.recovery.rebootstrap.trigger.ms,
// metadata.recovery.strategy, metric.reporters, metrics.num.samples,
// metrics.recording.level, metrics.sample.window.ms, receive.buffer.bytes,
// reconnect.backoff.max.ms, reconnect.backoff.ms, request.timeout.ms,
// retry.backoff.max.ms, retry.backoff.ms, security.protocol,
// security.providers, send.buffer.bytes, share.acknowledgement.mode (must
// be unset), socket.connection.setup.timeout.max.ms,
// share.acquire.mode (must be unset), socket.connection.setup.timeout.ms,
// value.deserializer, and ssl.*,
// sasl.*.
func ParseConfig(props map[string]string) (Config, []string, error) { return parseConfig(props) }

// parseConfig is ParseConfig, with props (the package) in scope.
func parseConfig(m map[string]string) (Config, []string, error) {
	c := DefaultConfig()
	unused, errs := props.Sift(m, consumerProps, props.InClient(ignoredConsumerProps), unknownProperty, propError)
	errs = append(errs, props.Apply(&c, m, consumerProps, props.SortedKeys(consumerProps), propError)...)
	if strings.EqualFold(c.GroupProtocol, groupProtocolConsumer) {
		// ConsumerConfig's check: the coordinator owns these with
		// KIP-848's protocol.
		for _, k := range []string{"partition.assignment.strategy", "heartbeat.interval.ms", "session.timeout.ms"} {
			if v, ok := m[k]; ok {
				errs = append(errs, &ConfigError{Component: "consumer", Property: k, Value: v,
					Reason: "cannot be set when group.protocol=consumer"})
			}
		}
	}
	_, hasGroup := m["group.id"]
	if v, ok := m["enable.auto.commit"]; ok && !hasGroup && c.EnableAutoCommit {
		// ConsumerConfig.maybeOverrideEnableAutoCommit.
		errs = append(errs, &ConfigError{Component: "consumer", Property: "enable.auto.commit", Value: v,
			Reason: "cannot be true when group.id is not set"})
	}
	return props.Parsed(c, unused, errs, configErrorProperty, c.Validate)
}

// propError makes err, from parsing property k's value v, a *ConfigError
// with err as the reason.
var propError = props.Invalid(newConfigError)

// Properties prints the settings as Kafka consumer properties, so that
// ParseConfig(c.Properties()) returns c for a valid c whose hooks (Logger,
// Now) are nil, whose PartitionAssignmentStrategy holds built-in assignors
// or assignors [assignor.ByName] finds, and (for a nil strategy) not an
// empty slice instead. It prints group.id, group.instance.id, client.id
// and client.rack only when set, because Kafka treats an empty group.id as
// an error and an empty client.id as "no name", not "generate one".
// enable.auto.commit=true is not printed without a group.id, where Kafka
// rejects it (and it has no effect). partition.assignment.strategy prints
// Kafka's Java class names for the built-in assignors and the protocol
// name for any other.
func (c Config) Properties() map[string]string { return props.Print(&c, consumerProps) }

// String returns the properties as sorted "name=value" lines.
func (c Config) String() string { return props.String(c.Properties()) }

// consumerProp parses a consumer property into a Config and prints it
// back; Get's false means "not printed".
type consumerProp = props.Prop[Config]

// consumerProps: the consumer properties kafkalite uses. Verified against
// Apache Kafka 4.x ConsumerConfig.java.
var consumerProps = map[string]consumerProp{
	"group.id": {
		Set: func(c *Config, v string) error {
			// ClassicKafkaConsumer: InvalidGroupIdException.
			if c.GroupID = props.Trim(v); c.GroupID == "" {
				return errors.New("should not be an empty string or whitespace (leave group.id out for no group)")
			}
			return nil
		},
		Get: func(c *Config) (string, bool) { return c.GroupID, c.GroupID != "" }},
	"group.instance.id": {
		Set: func(c *Config, v string) error {
			// Kafka's NonEmptyString validator: set means non-empty.
			if c.GroupInstanceID = props.Trim(v); c.GroupInstanceID == "" {
				return errors.New("must be non-empty when set")
			}
			return nil
		},
		Get: func(c *Config) (string, bool) { return c.GroupInstanceID, c.GroupInstanceID != "" }},
	"client.id": {
		Set: func(c *Config, v string) error { c.ClientID = props.Trim(v); return nil },
		Get: func(c *Config) (string, bool) { return c.ClientID, c.ClientID != "" }},
	"client.rack": {
		Set: func(c *Config, v string) error { c.ClientRack = props.Trim(v); return nil },
		Get: func(c *Config) (string, bool) { return c.ClientRack, c.ClientRack != "" }},
	"auto.offset.reset": {
		Set: func(c *Config, v string) (err error) {
			c.AutoOffsetReset, c.AutoOffsetResetDuration, err = parseOffsetReset(v)
			return err
		},
		Get: func(c *Config) (string, bool) {
			return formatOffsetReset(c.AutoOffsetReset, c.AutoOffsetResetDuration), true
		}},
	"enable.auto.commit": {
		Set: func(c *Config, v string) (err error) { c.EnableAutoCommit, err = props.Bool(v); return },
		Get: func(c *Config) (string, bool) {
			return strconv.FormatBool(c.EnableAutoCommit), c.GroupID != "" || !c.EnableAutoCommit
		}},
	"auto.commit.interval.ms":   props.MillisProp(func(c *Config) *time.Duration { return &c.AutoCommitInterval }, true),
	"max.poll.records":          props.IntProp(func(c *Config) *int { return &c.MaxPollRecords }),
	"fetch.max.bytes":           props.IntProp(func(c *Config) *int { return &c.FetchMaxBytes }),
	"max.partition.fetch.bytes": props.IntProp(func(c *Config) *int { return &c.MaxPartitionFetchBytes }),
	"fetch.min.bytes":           props.IntProp(func(c *Config) *int { return &c.FetchMinBytes }),
	"fetch.max.wait.ms":         props.MillisProp(func(c *Config) *time.Duration { return &c.FetchMaxWait }, true),
	"isolation.level": {
		Set: func(c *Config, v string) (err error) { c.IsolationLevel, err = parseIsolationLevel(v); return },
		Get: func(c *Config) (string, bool) { return c.IsolationLevel.String(), true }},
	"session.timeout.ms":    props.MillisProp(func(c *Config) *time.Duration { return &c.SessionTimeout }, true),
	"heartbeat.interval.ms": props.MillisProp(func(c *Config) *time.Duration { return &c.HeartbeatInterval }, true),
	"max.poll.interval.ms":  props.MillisProp(func(c *Config) *time.Duration { return &c.MaxPollInterval }, true),
	"partition.assignment.strategy": {
		Set: func(c *Config, v string) (err error) { c.PartitionAssignmentStrategy, err = parseAssignors(v); return },
		Get: func(c *Config) (string, bool) { return formatAssignors(c.PartitionAssignmentStrategy), true }},
	"check.crcs":               props.BoolProp(func(c *Config) *bool { return &c.CheckCRCs }),
	"allow.auto.create.topics": props.BoolProp(func(c *Config) *bool { return &c.AllowAutoCreateTopics }),
	"exclude.internal.topics":  props.BoolProp(func(c *Config) *bool { return &c.ExcludeInternalTopics }),
	"group.protocol": {
		Set: func(c *Config, v string) error { c.GroupProtocol = props.Trim(v); return nil },
		Get: func(c *Config) (string, bool) { return c.GroupProtocol, true }},
	"group.remote.assignor": {
		Set: func(c *Config, v string) error { c.GroupRemoteAssignor = props.Trim(v); return nil },
		Get: func(c *Config) (string, bool) { return c.GroupRemoteAssignor, c.GroupRemoteAssignor != "" }},
}

// builtinAssignorClasses: Kafka's assignor classes, which resolve to
// kafkalite's built-in assignors.
var builtinAssignorClasses = []string{
	assignor.RangeClass, assignor.RoundRobinClass, assignor.StickyClass, assignor.CooperativeStickyClass,
}

// parseAssignors resolves a partition.assignment.strategy list: Java class
// names, or protocol names; no entry twice (Kafka's ValidList).
func parseAssignors(v string) ([]assignor.Assignor, error) {
	names := props.List(v)
	var as []assignor.Assignor
	for i, name := range names {
		if name == "" {
			return nil, errors.New("empty entry in the list")
		}
		if slices.Contains(names[:i], name) {
			return nil, fmt.Errorf("%q is listed twice", name)
		}
		a, err := assignor.ByClassName(name)
		if err != nil {
			if a, err = assignor.ByName(name); err != nil {
				return nil, fmt.Errorf("unknown assignor %q: not one of %s, nor a protocol name (%s, %s, %s, %s)",
					name, strings.Join(builtinAssignorClasses, ", "), assignor.RangeName, assignor.RoundRobinName,
					assignor.StickyName, assignor.CooperativeStickyName)
			}
		}
		as = append(as, a)
	}
	return as, nil
}

// formatAssignors prints a partition.assignment.strategy list: the Java
// class name of a built-in assignor, else its protocol name.
func formatAssignors(as []assignor.Assignor) string {
	names := make([]string, len(as))
	for i, a := range as {
		switch class, ok := assignorClassName(a); {
		case ok:
			names[i] = class
		case a == nil:
			names[i] = "<nil>"
		default:
			names[i] = a.Name()
		}
	}
	return strings.Join(names, ",")
}

// assignorClassName returns the Java class name of a built-in assignor:
// one of the type and name of the assignor [assignor.ByClassName] returns
// for that class.
func assignorClassName(a assignor.Assignor) (string, bool) {
	if a == nil {
		return "", false
	}
	for _, class := range builtinAssignorClasses {
		if ref, err := assignor.ByClassName(class); err == nil &&
			reflect.TypeOf(a) == reflect.TypeOf(ref) && a.Name() == ref.Name() {
			return class, true
		}
	}
	return "", false
}

// ignoredConsumerProps: consumer properties of Kafka 4.x that kafkalite
// accepts and ignores; a non-nil func checks the value as Kafka would.
// Verified against ConsumerConfig.java and CommonClientConfigs.java.
var ignoredConsumerProps = map[string]func(string) error{
	// Networking and metadata.
	"bootstrap.servers": nil, "client.dns.lookup": nil, "connections.max.idle.ms": nil,
	"metadata.max.age.ms": nil, "metadata.recovery.strategy": nil,
	"metadata.recovery.rebootstrap.trigger.ms": nil, "receive.buffer.bytes": nil, "send.buffer.bytes": nil,
	"reconnect.backoff.ms": nil, "reconnect.backoff.max.ms": nil, "socket.connection.setup.timeout.ms": nil,
	"socket.connection.setup.timeout.max.ms": nil,
	// Requests and retries: in-process calls neither time out nor retry.
	"request.timeout.ms":     props.CheckAtLeast(0, true),
	"default.api.timeout.ms": props.CheckAtLeast(0, true),
	"retry.backoff.ms":       nil,
	"retry.backoff.max.ms":   nil,
	// Deserializers and interceptors are Go code.
	"key.deserializer": nil, "value.deserializer": nil, "interceptor.classes": checkNoInterceptors,
	// Metrics.
	"enable.metrics.push": props.CheckBool, "metric.reporters": nil, "metrics.num.samples": nil,
	"metrics.recording.level": nil, "metrics.sample.window.ms": nil,
	// Security and plugins (ssl.* and sasl.* too: see props.InClient).
	"security.protocol": nil, "security.providers": nil, "config.providers": nil,
	// Settings of group.protocol=consumer and of share groups: Kafka
	// rejects them with group.protocol=classic.
	"share.acknowledgement.mode": checkUnsetWithClassic,
	"share.acquire.mode":         checkUnsetWithClassic,
	// Kafka's internal settings.
	"internal.leave.group.on.close":                     props.CheckBool,
	"internal.throw.on.fetch.stable.offset.unsupported": props.CheckBool,
}

func checkNoInterceptors(v string) error {
	if len(props.List(v)) > 0 {
		return errors.New("cannot load Java interceptor classes")
	}
	return nil
}

// checkUnsetWithClassic is ConsumerConfig's check of share consumers'
// settings, which a Consumer does not take: they are [ShareConfig]'s
// ([ParseShareConfig]).
func checkUnsetWithClassic(v string) error {
	if props.Trim(v) != "" {
		return errors.New("a share consumer's setting (see ParseShareConfig); it must be unset")
	}
	return nil
}
