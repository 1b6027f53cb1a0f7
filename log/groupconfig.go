package log

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kafkalite/kafkalite/internal/props"
)

// Group configurations: Kafka's per-group dynamic configuration (config
// resource type GROUP, KIP-848 and KIP-932; Kafka's GroupConfig), set with
// IncrementalAlterConfigs and kafka-configs.sh --entity-type groups. A
// group's override of a property takes the place of the broker's setting
// of it (the group.* properties of [Config]) for that group alone.
//
// Of the properties Kafka 4.4 defines, kafkalite
//   - serves those [GroupConfig] has a field for;
//   - accepts and keeps, checked as Kafka checks them but without effect,
//     consumer.assignment.interval.ms and share.assignment.interval.ms
//     (its assignors run at every heartbeat; Kafka's bounds, 0 to 15000,
//     apply), and consumer.assignor.offload.enable and
//     share.assignor.offload.enable (Kafka's internal switches of its
//     assignor threads, which kafkalite does not have);
//   - refuses the streams.* properties (kafkalite serves no streams
//     groups) and errors.deadletterqueue.* (it has no dead-letter queue
//     for share groups), with a [*ConfigError] matching [ErrNotSupported].
//
// A name Kafka does not define is a [*ConfigError] matching
// [ErrUnknownProperty]; a value Kafka would refuse, one matching
// [ErrInvalidConfig] (INVALID_CONFIG on the wire).

// GroupConfig is a group's effective configuration: the broker's settings
// ([Config]) with the group's overrides applied. [Dir.GroupConfig] returns
// it.
type GroupConfig struct {
	// ConsumerSessionTimeout mirrors consumer.session.timeout.ms; default
	// Config.ConsumerGroupSessionTimeout (group.consumer.session.timeout.ms,
	// 45000). An override lies within ConsumerGroupMinSessionTimeout and
	// ConsumerGroupMaxSessionTimeout (45000 to 60000 by default).
	ConsumerSessionTimeout time.Duration
	// ConsumerHeartbeatInterval mirrors consumer.heartbeat.interval.ms;
	// default Config.ConsumerGroupHeartbeatInterval
	// (group.consumer.heartbeat.interval.ms, 5000). An override lies within
	// ConsumerGroupMin/MaxHeartbeatInterval (5000 to 15000), below the
	// session timeout.
	ConsumerHeartbeatInterval time.Duration
	// ShareSessionTimeout mirrors share.session.timeout.ms; default
	// Config.ShareSessionTimeout (group.share.session.timeout.ms, 45000),
	// an override within ShareMin/MaxSessionTimeout (45000 to 60000).
	ShareSessionTimeout time.Duration
	// ShareHeartbeatInterval mirrors share.heartbeat.interval.ms; default
	// Config.ShareHeartbeatInterval (group.share.heartbeat.interval.ms,
	// 5000), an override within ShareMin/MaxHeartbeatInterval (5000 to
	// 15000), below the session timeout.
	ShareHeartbeatInterval time.Duration
	// ShareRecordLockDuration mirrors share.record.lock.duration.ms;
	// default Config.ShareRecordLockDuration
	// (group.share.record.lock.duration.ms, 30000), an override within
	// ShareMin/MaxRecordLockDuration (15000 to 60000).
	ShareRecordLockDuration time.Duration
	// ShareDeliveryCountLimit mirrors share.delivery.count.limit; default
	// Config.ShareDeliveryCountLimit (group.share.delivery.count.limit, 5),
	// an override within ShareMin/MaxDeliveryCountLimit (2 to 10).
	ShareDeliveryCountLimit int
	// SharePartitionMaxRecordLocks mirrors
	// share.partition.max.record.locks; default
	// Config.SharePartitionMaxRecordLocks
	// (group.share.partition.max.record.locks, 2000), an override within
	// ShareMin/MaxPartitionMaxRecordLocks (100 to 4000).
	SharePartitionMaxRecordLocks int
	// ShareAutoOffsetReset mirrors share.auto.offset.reset (no broker
	// setting; default latest): where a share partition starts when the
	// group has no state for it.
	ShareAutoOffsetReset ShareAutoOffsetReset
	// ShareIsolationLevel mirrors share.isolation.level (no broker
	// setting; default read_uncommitted): which transactional records the
	// group's members get.
	ShareIsolationLevel IsolationLevel
	// ShareRenewAcknowledgeEnable mirrors share.renew.acknowledge.enable
	// (no broker setting; default true): whether members may acknowledge
	// records with RENEW, extending their locks.
	ShareRenewAcknowledgeEnable bool
}

// ShareAutoOffsetResetKind is the strategy of a [ShareAutoOffsetReset].
type ShareAutoOffsetResetKind int8

const (
	// ShareResetLatest ("latest", the default) starts at the log end.
	ShareResetLatest ShareAutoOffsetResetKind = iota
	// ShareResetEarliest ("earliest") starts at the log start.
	ShareResetEarliest
	// ShareResetByDuration ("by_duration:<ISO-8601 duration>") starts at
	// the first record whose timestamp is at most Duration before now.
	ShareResetByDuration
)

// ShareAutoOffsetReset is a value of share.auto.offset.reset: "latest",
// "earliest" or "by_duration:" followed by an ISO-8601 duration as Java's
// Duration.parse reads it (PnDTnHnMn.nS, letters in either case, signed
// parts, a fraction of up to 9 digits on the seconds), not negative in
// all. A duration beyond time.Duration's range (292 years) is kept as the
// largest one, which reaches back as far.
type ShareAutoOffsetReset struct {
	Kind     ShareAutoOffsetResetKind
	Duration time.Duration // ShareResetByDuration's; 0 otherwise
}

// isoDuration is Java's Duration.parse grammar.
var isoDuration = regexp.MustCompile(`(?i)^([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?$`)

// ParseShareAutoOffsetReset parses a share.auto.offset.reset value as Kafka
// does (surrounding spaces ignored); an invalid one is a [*ConfigError].
func ParseShareAutoOffsetReset(v string) (ShareAutoOffsetReset, error) {
	v = strings.TrimSpace(v)
	switch v {
	case "latest":
		return ShareAutoOffsetReset{Kind: ShareResetLatest}, nil
	case "earliest":
		return ShareAutoOffsetReset{Kind: ShareResetEarliest}, nil
	}
	invalid := newConfigError(shareAutoOffsetResetProp, v, "must be latest, earliest or by_duration:<ISO-8601 duration PnDTnHnMn.nS, not negative>", nil)
	iso, ok := strings.CutPrefix(v, "by_duration:")
	if !ok {
		return ShareAutoOffsetReset{}, invalid
	}
	m := isoDuration.FindStringSubmatch(iso)
	if m == nil || (m[3] != "" && m[4] == "" && m[5] == "" && m[6] == "") || (m[2] == "" && m[3] == "") {
		return ShareAutoOffsetReset{}, invalid // "PT" and "P" alone are not durations
	}
	// Whole seconds and nanoseconds, in big enough integers: Java's
	// Duration holds a long of seconds; its parse refuses beyond that.
	var secs, nanos float64
	for i, unit := range map[int]float64{2: 86400, 4: 3600, 5: 60, 6: 1} {
		if m[i] == "" {
			continue
		}
		n, err := strconv.ParseInt(m[i], 10, 64)
		if err != nil {
			return ShareAutoOffsetReset{}, invalid
		}
		secs += float64(n) * unit
		if i == 6 && m[7] != "" {
			f, _ := strconv.ParseInt((m[7] + "000000000")[:9], 10, 64)
			if strings.HasPrefix(m[6], "-") {
				f = -f
			}
			nanos = float64(f)
		}
	}
	if m[1] == "-" {
		secs, nanos = -secs, -nanos
	}
	total := secs + nanos/1e9
	if total < 0 || math.Abs(secs) > math.MaxInt64 {
		return ShareAutoOffsetReset{}, invalid
	}
	d := time.Duration(math.MaxInt64)
	if total < float64(math.MaxInt64)/1e9 {
		// Exact below 2^53 ns (104 days); beyond, float rounding of a
		// nanosecond or so does not matter for a reset point.
		d = time.Duration(secs)*time.Second + time.Duration(nanos)
	}
	return ShareAutoOffsetReset{Kind: ShareResetByDuration, Duration: d}, nil
}

// String returns the value as share.auto.offset.reset spells it
// (by_duration in seconds: by_duration:PT3600S).
func (r ShareAutoOffsetReset) String() string {
	switch r.Kind {
	case ShareResetEarliest:
		return "earliest"
	case ShareResetByDuration:
		s := strconv.FormatFloat(r.Duration.Seconds(), 'f', -1, 64)
		if r.Duration%time.Second == 0 {
			s = strconv.FormatInt(int64(r.Duration/time.Second), 10)
		}
		return "by_duration:PT" + s + "S"
	}
	return "latest"
}

// Timestamp resolves the strategy to what ListOffsets (and [Log.OffsetForTimestamp]'s
// callers) take: [EarliestTimestamp], [LatestTimestamp], or for
// by_duration the millisecond timestamp Duration before now. A partition
// with no record at or after that timestamp starts at its log end, as in
// Kafka.
func (r ShareAutoOffsetReset) Timestamp(now time.Time) int64 {
	switch r.Kind {
	case ShareResetEarliest:
		return EarliestTimestamp
	case ShareResetByDuration:
		ms := now.UnixMilli() - r.Duration.Milliseconds()
		if ms < 0 {
			return 0 // before the epoch: every record qualifies
		}
		return ms
	}
	return LatestTimestamp
}

// Group property names.
const (
	shareAutoOffsetResetProp = "share.auto.offset.reset"
	shareIsolationLevelProp  = "share.isolation.level"
)

// groupProp describes one group property kafkalite accepts.
type groupProp struct {
	// typ is Kafka's ConfigDef type: "INT", "BOOLEAN" or "STRING".
	typ string
	// parse checks a value (trimmed, as Kafka's ConfigDef trims) against
	// Kafka's rules and the broker's bounds, and returns it as Kafka prints
	// it; reason is why it is invalid.
	parse func(c Config, v string) (canonical, reason string)
	// set applies a canonical value; nil for properties kept without
	// effect.
	set func(g *GroupConfig, v string)
	// broker prints the broker's default; non-nil for the properties Kafka
	// lists for every group (those with a broker synonym).
	broker func(c Config) string
}

// groupIntProp is an int property of at least floor (Kafka's ConfigDef
// validator) within bounds (the broker's, nil for none).
func groupIntProp(floor int64, bounds func(Config) (lo, hi int64), set func(*GroupConfig, int64), broker func(Config) int64) groupProp {
	p := groupProp{typ: "INT"}
	p.parse = func(c Config, v string) (string, string) {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return "", "not a number of type INT"
		}
		if n < floor {
			return "", fmt.Sprintf("must be at least %d", floor)
		}
		if bounds != nil {
			if lo, hi := bounds(c); n < lo || n > hi {
				return "", fmt.Sprintf("must be in the range %d to %d inclusive", lo, hi)
			}
		}
		return strconv.FormatInt(n, 10), ""
	}
	if set != nil {
		p.set = func(g *GroupConfig, v string) {
			n, _ := strconv.ParseInt(v, 10, 64)
			set(g, n)
		}
	}
	if broker != nil {
		p.broker = func(c Config) string { return strconv.FormatInt(broker(c), 10) }
	}
	return p
}

func millisBounds(lo, hi func(Config) time.Duration) func(Config) (int64, int64) {
	return func(c Config) (int64, int64) { return lo(c).Milliseconds(), hi(c).Milliseconds() }
}

func intBounds(lo, hi func(Config) int) func(Config) (int64, int64) {
	return func(c Config) (int64, int64) { return int64(lo(c)), int64(hi(c)) }
}

func groupBoolProp(set func(*GroupConfig, bool)) groupProp {
	p := groupProp{typ: "BOOLEAN"}
	p.parse = func(_ Config, v string) (string, string) {
		switch strings.ToLower(v) {
		case "true", "false":
			return strings.ToLower(v), ""
		}
		return "", "expected value to be either true or false"
	}
	if set != nil {
		p.set = func(g *GroupConfig, v string) { set(g, v == "true") }
	}
	return p
}

// Kafka's default bounds of the assignment intervals
// (group.consumer/share.min/max.assignment.interval.ms), which kafkalite
// does not make settings: its assignors do not run on an interval.
const minAssignmentIntervalMs, maxAssignmentIntervalMs = 0, 15000

func constBounds(lo, hi int64) func(Config) (int64, int64) {
	return func(Config) (int64, int64) { return lo, hi }
}

// groupProps are the group properties kafkalite accepts.
var groupProps = map[string]groupProp{
	"consumer.session.timeout.ms": groupIntProp(1,
		millisBounds(func(c Config) time.Duration { return c.ConsumerGroupMinSessionTimeout }, func(c Config) time.Duration { return c.ConsumerGroupMaxSessionTimeout }),
		func(g *GroupConfig, n int64) { g.ConsumerSessionTimeout = time.Duration(n) * time.Millisecond },
		func(c Config) int64 { return c.ConsumerGroupSessionTimeout.Milliseconds() }),
	"consumer.heartbeat.interval.ms": groupIntProp(1,
		millisBounds(func(c Config) time.Duration { return c.ConsumerGroupMinHeartbeatInterval }, func(c Config) time.Duration { return c.ConsumerGroupMaxHeartbeatInterval }),
		func(g *GroupConfig, n int64) { g.ConsumerHeartbeatInterval = time.Duration(n) * time.Millisecond },
		func(c Config) int64 { return c.ConsumerGroupHeartbeatInterval.Milliseconds() }),
	"consumer.assignment.interval.ms": groupIntProp(0, constBounds(minAssignmentIntervalMs, maxAssignmentIntervalMs), nil,
		func(Config) int64 { return 1000 }),
	"consumer.assignor.offload.enable": groupBoolProp(nil),
	"share.session.timeout.ms": groupIntProp(1,
		millisBounds(func(c Config) time.Duration { return c.ShareMinSessionTimeout }, func(c Config) time.Duration { return c.ShareMaxSessionTimeout }),
		func(g *GroupConfig, n int64) { g.ShareSessionTimeout = time.Duration(n) * time.Millisecond },
		func(c Config) int64 { return c.ShareSessionTimeout.Milliseconds() }),
	"share.heartbeat.interval.ms": groupIntProp(1,
		millisBounds(func(c Config) time.Duration { return c.ShareMinHeartbeatInterval }, func(c Config) time.Duration { return c.ShareMaxHeartbeatInterval }),
		func(g *GroupConfig, n int64) { g.ShareHeartbeatInterval = time.Duration(n) * time.Millisecond },
		func(c Config) int64 { return c.ShareHeartbeatInterval.Milliseconds() }),
	"share.record.lock.duration.ms": groupIntProp(1000,
		millisBounds(func(c Config) time.Duration { return c.ShareMinRecordLockDuration }, func(c Config) time.Duration { return c.ShareMaxRecordLockDuration }),
		func(g *GroupConfig, n int64) { g.ShareRecordLockDuration = time.Duration(n) * time.Millisecond },
		func(c Config) int64 { return c.ShareRecordLockDuration.Milliseconds() }),
	"share.delivery.count.limit": groupIntProp(2,
		intBounds(func(c Config) int { return c.ShareMinDeliveryCountLimit }, func(c Config) int { return c.ShareMaxDeliveryCountLimit }),
		func(g *GroupConfig, n int64) { g.ShareDeliveryCountLimit = int(n) },
		func(c Config) int64 { return int64(c.ShareDeliveryCountLimit) }),
	"share.partition.max.record.locks": groupIntProp(100,
		intBounds(func(c Config) int { return c.ShareMinPartitionMaxRecordLocks }, func(c Config) int { return c.ShareMaxPartitionMaxRecordLocks }),
		func(g *GroupConfig, n int64) { g.SharePartitionMaxRecordLocks = int(n) },
		func(c Config) int64 { return int64(c.SharePartitionMaxRecordLocks) }),
	"share.assignment.interval.ms": groupIntProp(0, constBounds(minAssignmentIntervalMs, maxAssignmentIntervalMs), nil,
		func(Config) int64 { return 1000 }),
	"share.assignor.offload.enable":  groupBoolProp(nil),
	"share.renew.acknowledge.enable": groupBoolProp(func(g *GroupConfig, b bool) { g.ShareRenewAcknowledgeEnable = b }),
	shareAutoOffsetResetProp: {
		typ: "STRING",
		parse: func(_ Config, v string) (string, string) {
			if _, err := ParseShareAutoOffsetReset(v); err != nil {
				return "", err.(*ConfigError).Reason
			}
			return v, ""
		},
		set: func(g *GroupConfig, v string) { g.ShareAutoOffsetReset, _ = ParseShareAutoOffsetReset(v) },
	},
	shareIsolationLevelProp: {
		typ: "STRING",
		parse: func(_ Config, v string) (string, string) {
			if v != "read_committed" && v != "read_uncommitted" {
				return "", "must be read_committed or read_uncommitted"
			}
			return v, ""
		},
		set: func(g *GroupConfig, v string) {
			g.ShareIsolationLevel = ReadUncommitted
			if v == "read_committed" {
				g.ShareIsolationLevel = ReadCommitted
			}
		},
	},
}

// unservedGroupProps are the group properties of Kafka 4.4 kafkalite
// refuses, and why.
var unservedGroupProps = map[string]string{
	"streams.session.timeout.ms":                "kafkalite serves no streams groups",
	"streams.heartbeat.interval.ms":             "kafkalite serves no streams groups",
	"streams.num.standby.replicas":              "kafkalite serves no streams groups",
	"streams.initial.rebalance.delay.ms":        "kafkalite serves no streams groups",
	"streams.assignment.interval.ms":            "kafkalite serves no streams groups",
	"streams.rack.aware.assignment.tags":        "kafkalite serves no streams groups",
	"streams.assignor.offload.enable":           "kafkalite serves no streams groups",
	"streams.task.offset.interval.ms":           "kafkalite serves no streams groups",
	"streams.num.warmup.replicas":               "kafkalite serves no streams groups",
	"streams.acceptable.recovery.lag":           "kafkalite serves no streams groups",
	"streams.assignor.name":                     "kafkalite serves no streams groups",
	"errors.deadletterqueue.topic.name":         "kafkalite has no dead-letter queue for share groups",
	"errors.deadletterqueue.copy.record.enable": "kafkalite has no dead-letter queue for share groups",
}

// The session timeouts that must exceed heartbeat intervals, as Kafka's
// GroupConfig checks them.
var groupSessionHeartbeat = [][2]string{
	{"consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"},
	{"share.session.timeout.ms", "share.heartbeat.interval.ms"},
}

// defaultGroupConfig is a group's configuration without overrides.
func defaultGroupConfig(c Config) GroupConfig {
	return GroupConfig{
		ConsumerSessionTimeout:       c.ConsumerGroupSessionTimeout,
		ConsumerHeartbeatInterval:    c.ConsumerGroupHeartbeatInterval,
		ShareSessionTimeout:          c.ShareSessionTimeout,
		ShareHeartbeatInterval:       c.ShareHeartbeatInterval,
		ShareRecordLockDuration:      c.ShareRecordLockDuration,
		ShareDeliveryCountLimit:      c.ShareDeliveryCountLimit,
		SharePartitionMaxRecordLocks: c.SharePartitionMaxRecordLocks,
		ShareIsolationLevel:          ReadUncommitted,
		ShareRenewAcknowledgeEnable:  true,
	}
}

// checkGroupProps checks a group's overrides against c as Kafka's
// GroupConfig.validate does, and returns them as Kafka prints them
// (trimmed; numbers and booleans in their canonical form). With bounds
// false only the values' syntax and Kafka's fixed floors are checked (a
// stored override keeps its value when the broker's bounds change).
func checkGroupProps(c Config, m map[string]string, bounds bool) (map[string]string, error) {
	v := props.Validator{New: newConfigError, Key: error.Error}
	out := make(map[string]string, len(m))
	for _, name := range props.SortedKeys(m) {
		value := strings.TrimSpace(m[name])
		p, ok := groupProps[name]
		if !ok {
			if why, unserved := unservedGroupProps[name]; unserved {
				v.AddErr(name, value, why, ErrNotSupported)
			} else {
				v.AddErr(name, value, "not a group configuration Kafka defines", ErrUnknownProperty)
			}
			continue
		}
		cc := c
		if !bounds {
			cc = unboundedGroupConfig(c)
		}
		canonical, reason := p.parse(cc, value)
		if reason != "" {
			v.Add(name, value, reason)
			continue
		}
		out[name] = canonical
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if bounds {
		eff := groupConfigWith(c, out)
		for _, sh := range groupSessionHeartbeat {
			_, s := out[sh[0]]
			_, h := out[sh[1]]
			if !s && !h {
				continue
			}
			session, heartbeat := effectiveMillis(eff, sh[0]), effectiveMillis(eff, sh[1])
			if session <= heartbeat {
				v.Add(sh[0], strconv.FormatInt(session, 10), fmt.Sprintf("must be greater than %s (%d)", sh[1], heartbeat))
			}
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func effectiveMillis(g GroupConfig, name string) int64 {
	switch name {
	case "consumer.session.timeout.ms":
		return g.ConsumerSessionTimeout.Milliseconds()
	case "consumer.heartbeat.interval.ms":
		return g.ConsumerHeartbeatInterval.Milliseconds()
	case "share.session.timeout.ms":
		return g.ShareSessionTimeout.Milliseconds()
	}
	return g.ShareHeartbeatInterval.Milliseconds()
}

// unboundedGroupConfig is c with the group bounds opened to their widest.
func unboundedGroupConfig(c Config) Config {
	wide := time.Duration(math.MaxInt32) * time.Millisecond
	c.ConsumerGroupMinSessionTimeout, c.ConsumerGroupMaxSessionTimeout = 0, wide
	c.ConsumerGroupMinHeartbeatInterval, c.ConsumerGroupMaxHeartbeatInterval = 0, wide
	c.ShareMinSessionTimeout, c.ShareMaxSessionTimeout = 0, wide
	c.ShareMinHeartbeatInterval, c.ShareMaxHeartbeatInterval = 0, wide
	c.ShareMinRecordLockDuration, c.ShareMaxRecordLockDuration = 0, wide
	c.ShareMinDeliveryCountLimit, c.ShareMaxDeliveryCountLimit = 0, math.MaxInt32
	c.ShareMinPartitionMaxRecordLocks, c.ShareMaxPartitionMaxRecordLocks = 0, math.MaxInt32
	return c
}

// GroupConfigWith returns the configuration of a group with overrides
// (Kafka group property names and values), checked as
// [Dir.AlterGroupConfig] checks them against c's bounds; nothing is
// stored. Use it to validate overrides without applying them.
func (c Config) GroupConfigWith(overrides map[string]string) (GroupConfig, error) {
	checked, err := checkGroupProps(c, overrides, true)
	if err != nil {
		return GroupConfig{}, err
	}
	return groupConfigWith(c, checked), nil
}

// groupConfigWith applies checked overrides to c's defaults.
func groupConfigWith(c Config, overrides map[string]string) GroupConfig {
	g := defaultGroupConfig(c)
	for name, value := range overrides {
		if p := groupProps[name]; p.set != nil {
			p.set(&g, value)
		}
	}
	return g
}

// GroupConfigEntry is one group property as Kafka's DescribeConfigs
// shows it ([Dir.DescribeGroupConfig]).
type GroupConfigEntry struct {
	Name  string
	Value string
	// Type is Kafka's ConfigDef type: "INT", "BOOLEAN" or "STRING".
	Type string
	// Override is true for a value set for the group (Kafka's source
	// GROUP_CONFIG), false for the broker's default (DEFAULT_CONFIG).
	Override bool
}

// describeGroupConfig lists, sorted by name, what Kafka 4.4's
// DescribeConfigs lists for a group: the properties with a broker setting,
// and the group's overrides.
func describeGroupConfig(c Config, overrides map[string]string) []GroupConfigEntry {
	names := make(map[string]bool, len(groupProps))
	for name, p := range groupProps {
		if p.broker != nil {
			names[name] = true
		}
	}
	for name := range overrides {
		names[name] = true
	}
	out := make([]GroupConfigEntry, 0, len(names))
	for _, name := range props.SortedKeys(names) {
		p := groupProps[name]
		e := GroupConfigEntry{Name: name, Type: p.typ}
		if v, ok := overrides[name]; ok {
			e.Value, e.Override = v, true
		} else {
			e.Value = p.broker(c)
		}
		out = append(out, e)
	}
	return out
}

// validateGroupBounds checks the broker's group settings and the bounds of
// groups' overrides (Kafka's GroupCoordinatorConfig and ShareGroupConfig
// ranges).
func (c Config) validateGroupBounds(v *props.Validator) {
	type bound struct {
		prop    string
		value   int64
		min     int64
		max     int64
		isMilli bool
		d       time.Duration
	}
	ms := func(prop string, d time.Duration, lo, hi int64) bound {
		return bound{prop: prop, value: d.Milliseconds(), min: lo, max: hi, isMilli: true, d: d}
	}
	n := func(prop string, x int, lo, hi int64) bound {
		return bound{prop: prop, value: int64(x), min: lo, max: hi}
	}
	for _, b := range []bound{
		ms("group.consumer.min.session.timeout.ms", c.ConsumerGroupMinSessionTimeout, 1, math.MaxInt32),
		ms("group.consumer.max.session.timeout.ms", c.ConsumerGroupMaxSessionTimeout, 1, math.MaxInt32),
		ms("group.consumer.min.heartbeat.interval.ms", c.ConsumerGroupMinHeartbeatInterval, 1, math.MaxInt32),
		ms("group.consumer.max.heartbeat.interval.ms", c.ConsumerGroupMaxHeartbeatInterval, 1, math.MaxInt32),
		ms("group.share.session.timeout.ms", c.ShareSessionTimeout, 1, math.MaxInt32),
		ms("group.share.min.session.timeout.ms", c.ShareMinSessionTimeout, 1, math.MaxInt32),
		ms("group.share.max.session.timeout.ms", c.ShareMaxSessionTimeout, 1, math.MaxInt32),
		ms("group.share.heartbeat.interval.ms", c.ShareHeartbeatInterval, 1, math.MaxInt32),
		ms("group.share.min.heartbeat.interval.ms", c.ShareMinHeartbeatInterval, 1, math.MaxInt32),
		ms("group.share.max.heartbeat.interval.ms", c.ShareMaxHeartbeatInterval, 1, math.MaxInt32),
		ms("group.share.record.lock.duration.ms", c.ShareRecordLockDuration, 1, 3600000),
		ms("group.share.min.record.lock.duration.ms", c.ShareMinRecordLockDuration, 1000, 30000),
		ms("group.share.max.record.lock.duration.ms", c.ShareMaxRecordLockDuration, 30000, 3600000),
		n("group.share.delivery.count.limit", c.ShareDeliveryCountLimit, 2, 10),
		n("group.share.min.delivery.count.limit", c.ShareMinDeliveryCountLimit, 2, 5),
		n("group.share.max.delivery.count.limit", c.ShareMaxDeliveryCountLimit, 5, 25),
		n("group.share.partition.max.record.locks", c.SharePartitionMaxRecordLocks, 100, 10000),
		n("group.share.min.partition.max.record.locks", c.ShareMinPartitionMaxRecordLocks, 100, 2000),
		n("group.share.max.partition.max.record.locks", c.ShareMaxPartitionMaxRecordLocks, 2000, 10000),
		n("group.share.max.size", c.ShareGroupMaxSize, 1, 1000),
		n("group.share.max.share.sessions", c.ShareMaxSessions, 1, math.MaxInt32),
	} {
		if b.isMilli && b.d%time.Millisecond != 0 {
			v.Add(b.prop, b.d.String(), "not a whole number of milliseconds")
			continue
		}
		v.Check(b.value >= b.min && b.value <= b.max, b.prop, b.value, fmt.Sprintf("must be between %d and %d", b.min, b.max))
	}
	v.Check(c.ShareHeartbeatInterval < c.ShareSessionTimeout, "group.share.heartbeat.interval.ms",
		c.ShareHeartbeatInterval.Milliseconds(), "must be below group.share.session.timeout.ms")
	for _, p := range [][2]any{
		{"group.consumer.min.session.timeout.ms", c.ConsumerGroupMinSessionTimeout <= c.ConsumerGroupMaxSessionTimeout},
		{"group.consumer.min.heartbeat.interval.ms", c.ConsumerGroupMinHeartbeatInterval <= c.ConsumerGroupMaxHeartbeatInterval},
		{"group.share.min.session.timeout.ms", c.ShareMinSessionTimeout <= c.ShareMaxSessionTimeout},
		{"group.share.min.heartbeat.interval.ms", c.ShareMinHeartbeatInterval <= c.ShareMaxHeartbeatInterval},
		{"group.share.min.record.lock.duration.ms", c.ShareMinRecordLockDuration <= c.ShareMaxRecordLockDuration},
	} {
		v.Check(p[1].(bool), p[0].(string), "", "must not exceed its max counterpart")
	}
	v.Check(c.ShareMinDeliveryCountLimit <= c.ShareDeliveryCountLimit && c.ShareDeliveryCountLimit <= c.ShareMaxDeliveryCountLimit,
		"group.share.delivery.count.limit", c.ShareDeliveryCountLimit, "must be within group.share.min/max.delivery.count.limit")
	v.Check(c.ShareMinPartitionMaxRecordLocks <= c.SharePartitionMaxRecordLocks && c.SharePartitionMaxRecordLocks <= c.ShareMaxPartitionMaxRecordLocks,
		"group.share.partition.max.record.locks", c.SharePartitionMaxRecordLocks, "must be within group.share.min/max.partition.max.record.locks")
}
