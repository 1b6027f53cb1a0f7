package log

import (
	"context"
	"maps"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/testkit/propstest"
	"github.com/kafkalite/kafkalite/log/vfs"
)

func TestGroupConfigBrokerDefaults(t *testing.T) {
	c := DefaultConfig()
	p := c.Properties()
	for name, want := range map[string]string{ // Kafka 4.4's defaults
		"group.consumer.min.session.timeout.ms":      "45000",
		"group.consumer.max.session.timeout.ms":      "60000",
		"group.consumer.min.heartbeat.interval.ms":   "5000",
		"group.consumer.max.heartbeat.interval.ms":   "15000",
		"group.share.session.timeout.ms":             "45000",
		"group.share.min.session.timeout.ms":         "45000",
		"group.share.max.session.timeout.ms":         "60000",
		"group.share.heartbeat.interval.ms":          "5000",
		"group.share.min.heartbeat.interval.ms":      "5000",
		"group.share.max.heartbeat.interval.ms":      "15000",
		"group.share.record.lock.duration.ms":        "30000",
		"group.share.min.record.lock.duration.ms":    "15000",
		"group.share.max.record.lock.duration.ms":    "60000",
		"group.share.delivery.count.limit":           "5",
		"group.share.min.delivery.count.limit":       "2",
		"group.share.max.delivery.count.limit":       "10",
		"group.share.partition.max.record.locks":     "2000",
		"group.share.min.partition.max.record.locks": "100",
		"group.share.max.partition.max.record.locks": "4000",
		"group.share.max.size":                       "200",
		"group.share.max.share.sessions":             "2000",
	} {
		require.Equal(t, want, p[name], name)
	}
	g := defaultGroupConfig(c)
	require.Equal(t, GroupConfig{
		ConsumerSessionTimeout: 45 * time.Second, ConsumerHeartbeatInterval: 5 * time.Second,
		ShareSessionTimeout: 45 * time.Second, ShareHeartbeatInterval: 5 * time.Second,
		ShareRecordLockDuration: 30 * time.Second, ShareDeliveryCountLimit: 5, SharePartitionMaxRecordLocks: 2000,
		ShareAutoOffsetReset: ShareAutoOffsetReset{Kind: ShareResetLatest}, ShareIsolationLevel: ReadUncommitted,
		ShareRenewAcknowledgeEnable: true,
	}, g)

	// The settings parse and print back.
	c.ShareRecordLockDuration = 20 * time.Second
	c.ShareMaxSessions = 7
	c.ConsumerGroupMaxSessionTimeout = 2 * time.Minute
	require.Equal(t, c, propstest.Parse(t, ParseConfig, c.Properties()))
}

func TestConfigValidateGroupBounds(t *testing.T) {
	tests := []struct {
		prop   string
		modify func(c *Config)
	}{
		{"group.share.delivery.count.limit", func(c *Config) { c.ShareDeliveryCountLimit = 11 }},
		{"group.share.delivery.count.limit", func(c *Config) { c.ShareMaxDeliveryCountLimit = 6; c.ShareDeliveryCountLimit = 7 }},
		{"group.share.min.delivery.count.limit", func(c *Config) { c.ShareMinDeliveryCountLimit = 1 }},
		{"group.share.max.delivery.count.limit", func(c *Config) { c.ShareMaxDeliveryCountLimit = 26 }},
		{"group.share.partition.max.record.locks", func(c *Config) { c.SharePartitionMaxRecordLocks = 99 }},
		{"group.share.partition.max.record.locks", func(c *Config) { c.SharePartitionMaxRecordLocks = 5000 }},
		{"group.share.min.record.lock.duration.ms", func(c *Config) { c.ShareMinRecordLockDuration = 999 * time.Millisecond }},
		{"group.share.max.record.lock.duration.ms", func(c *Config) { c.ShareMaxRecordLockDuration = time.Hour + time.Millisecond }},
		{"group.share.record.lock.duration.ms", func(c *Config) { c.ShareRecordLockDuration = 0 }},
		{"group.share.record.lock.duration.ms", func(c *Config) { c.ShareRecordLockDuration = 1500 * time.Microsecond }},
		{"group.share.max.size", func(c *Config) { c.ShareGroupMaxSize = 1001 }},
		{"group.share.max.size", func(c *Config) { c.ShareGroupMaxSize = 0 }},
		{"group.share.max.share.sessions", func(c *Config) { c.ShareMaxSessions = 0 }},
		{"group.share.heartbeat.interval.ms", func(c *Config) { c.ShareHeartbeatInterval = c.ShareSessionTimeout }},
		{"group.share.min.session.timeout.ms", func(c *Config) { c.ShareMinSessionTimeout = 2 * time.Minute }},
		{"group.consumer.min.session.timeout.ms", func(c *Config) { c.ConsumerGroupMinSessionTimeout = 2 * time.Minute }},
		{"group.consumer.min.heartbeat.interval.ms", func(c *Config) { c.ConsumerGroupMinHeartbeatInterval = 0 }},
	}
	for _, tc := range tests {
		c := DefaultConfig()
		tc.modify(&c)
		err := c.Validate()
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, tc.prop)
		require.Equal(t, tc.prop, ce.Property)
	}
	// Short locks and sessions are allowed for tests, as documented.
	c := DefaultConfig()
	c.ShareRecordLockDuration = 50 * time.Millisecond
	c.ShareSessionTimeout, c.ShareHeartbeatInterval = time.Second, 10*time.Millisecond
	require.NoError(t, c.Validate())
}

func TestParseShareAutoOffsetReset(t *testing.T) {
	valid := map[string]ShareAutoOffsetReset{ // each accepted by Kafka 4.4's GroupConfig.validate
		"latest":                                 {Kind: ShareResetLatest},
		" earliest ":                             {Kind: ShareResetEarliest},
		"by_duration:PT1H":                       {Kind: ShareResetByDuration, Duration: time.Hour},
		"by_duration:P1D":                        {Kind: ShareResetByDuration, Duration: 24 * time.Hour},
		"by_duration:pt1h":                       {Kind: ShareResetByDuration, Duration: time.Hour},
		"by_duration:PT0S":                       {Kind: ShareResetByDuration},
		"by_duration:P0D":                        {Kind: ShareResetByDuration},
		"by_duration:+PT1H":                      {Kind: ShareResetByDuration, Duration: time.Hour},
		"by_duration:P-1DT25H":                   {Kind: ShareResetByDuration, Duration: time.Hour},
		"by_duration:-P-1D":                      {Kind: ShareResetByDuration, Duration: 24 * time.Hour},
		"by_duration:P1DT2H3M4.5S":               {Kind: ShareResetByDuration, Duration: 26*time.Hour + 3*time.Minute + 4500*time.Millisecond},
		"by_duration:PT1.123456789S":             {Kind: ShareResetByDuration, Duration: 1123456789 * time.Nanosecond},
		"by_duration:PT1,5S":                     {Kind: ShareResetByDuration, Duration: 1500 * time.Millisecond},
		"by_duration:PT1.S":                      {Kind: ShareResetByDuration, Duration: time.Second},
		"by_duration:PT1H ":                      {Kind: ShareResetByDuration, Duration: time.Hour}, // trimmed as a whole
		"by_duration:PT10M":                      {Kind: ShareResetByDuration, Duration: 10 * time.Minute},
		"by_duration:P106751991167300D":          {Kind: ShareResetByDuration, Duration: math.MaxInt64},
		"by_duration:PT2562047H47M16.854775807S": {Kind: ShareResetByDuration, Duration: math.MaxInt64},
	}
	for v, want := range valid {
		got, err := ParseShareAutoOffsetReset(v)
		require.NoError(t, err, v)
		require.Equal(t, want, got, v)
		again, err := ParseShareAutoOffsetReset(got.String())
		require.NoError(t, err, got.String())
		if want.Duration < math.MaxInt64/2 {
			require.Equal(t, got, again, "%s prints as %s", v, got.String())
		}
	}
	for _, v := range []string{ // each refused by Kafka 4.4
		"", "EARLIEST", "Latest", "none", "by_duration:", "by_duration:-PT1H", "by_duration:PT-1H", "by_duration:PT-1S",
		"by_duration:P1Y", "by_duration:P1M", "by_duration: PT1H", "by_duration:PT", "by_duration:P", "by_duration:PT1.1234567891S",
		"by_duration:1H", "BY_DURATION:PT1H", "by_duration:P9223372036854775808D",
	} {
		_, err := ParseShareAutoOffsetReset(v)
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, v)
		require.ErrorIs(t, err, ErrInvalidConfig)
		require.Equal(t, "share.auto.offset.reset", ce.Property)
	}

	now := time.UnixMilli(1_800_000_000_000)
	require.Equal(t, EarliestTimestamp, ShareAutoOffsetReset{Kind: ShareResetEarliest}.Timestamp(now))
	require.Equal(t, LatestTimestamp, ShareAutoOffsetReset{}.Timestamp(now))
	require.Equal(t, int64(1_800_000_000_000-3_600_000), ShareAutoOffsetReset{Kind: ShareResetByDuration, Duration: time.Hour}.Timestamp(now))
	require.Equal(t, int64(0), ShareAutoOffsetReset{Kind: ShareResetByDuration, Duration: math.MaxInt64}.Timestamp(now))
}

// TestCheckGroupProps checks overrides as Kafka 4.4's GroupConfig.validate
// does with the broker's defaults (each case run against Kafka's own
// validate).
func TestCheckGroupProps(t *testing.T) {
	c := DefaultConfig()
	valid := []struct {
		in, want map[string]string
	}{
		{map[string]string{"share.auto.offset.reset": "earliest"}, nil},
		{map[string]string{"share.isolation.level": "read_committed"}, nil},
		{map[string]string{"share.record.lock.duration.ms": " 20000 "}, map[string]string{"share.record.lock.duration.ms": "20000"}},
		{map[string]string{"share.record.lock.duration.ms": "+20000"}, map[string]string{"share.record.lock.duration.ms": "20000"}},
		{map[string]string{"share.record.lock.duration.ms": "020000"}, map[string]string{"share.record.lock.duration.ms": "20000"}},
		{map[string]string{"share.record.lock.duration.ms": "15000"}, nil},
		{map[string]string{"share.record.lock.duration.ms": "60000"}, nil},
		{map[string]string{"share.delivery.count.limit": "10", "share.partition.max.record.locks": "100"}, nil},
		{map[string]string{"consumer.heartbeat.interval.ms": "15000"}, nil},
		{map[string]string{"consumer.session.timeout.ms": "60000"}, nil},
		{map[string]string{"share.heartbeat.interval.ms": "15000", "share.session.timeout.ms": "45000"}, nil},
		{map[string]string{"share.renew.acknowledge.enable": "TRUE"}, map[string]string{"share.renew.acknowledge.enable": "true"}},
		{map[string]string{"consumer.assignor.offload.enable": "false"}, nil},
		{map[string]string{"consumer.assignment.interval.ms": "0", "share.assignment.interval.ms": "15000"}, nil},
		{map[string]string{}, nil},
	}
	for _, tc := range valid {
		got, err := checkGroupProps(c, tc.in, true)
		require.NoError(t, err, tc.in)
		want := tc.want
		if want == nil {
			want = tc.in
		}
		require.Equal(t, want, got)
	}
	invalid := []struct {
		in       map[string]string
		prop     string
		sentinel error
	}{
		{map[string]string{"share.auto.offset.reset": "EARLIEST"}, "share.auto.offset.reset", ErrInvalidConfig},
		{map[string]string{"share.isolation.level": "READ_COMMITTED"}, "share.isolation.level", ErrInvalidConfig},
		{map[string]string{"share.isolation.level": ""}, "share.isolation.level", ErrInvalidConfig},
		{map[string]string{"share.record.lock.duration.ms": "14999"}, "share.record.lock.duration.ms", ErrInvalidConfig},
		{map[string]string{"share.record.lock.duration.ms": "60001"}, "share.record.lock.duration.ms", ErrInvalidConfig},
		{map[string]string{"share.record.lock.duration.ms": "abc"}, "share.record.lock.duration.ms", ErrInvalidConfig},
		{map[string]string{"share.record.lock.duration.ms": ""}, "share.record.lock.duration.ms", ErrInvalidConfig},
		{map[string]string{"share.record.lock.duration.ms": "2147483648"}, "share.record.lock.duration.ms", ErrInvalidConfig},
		{map[string]string{"share.delivery.count.limit": "11"}, "share.delivery.count.limit", ErrInvalidConfig},
		{map[string]string{"share.delivery.count.limit": "1"}, "share.delivery.count.limit", ErrInvalidConfig},
		{map[string]string{"share.partition.max.record.locks": "99"}, "share.partition.max.record.locks", ErrInvalidConfig},
		{map[string]string{"share.partition.max.record.locks": "4001"}, "share.partition.max.record.locks", ErrInvalidConfig},
		{map[string]string{"consumer.session.timeout.ms": "44999"}, "consumer.session.timeout.ms", ErrInvalidConfig},
		{map[string]string{"consumer.heartbeat.interval.ms": "15001"}, "consumer.heartbeat.interval.ms", ErrInvalidConfig},
		{map[string]string{"share.session.timeout.ms": "15000", "share.heartbeat.interval.ms": "15000"}, "share.session.timeout.ms", ErrInvalidConfig},
		{map[string]string{"consumer.assignment.interval.ms": "15001"}, "consumer.assignment.interval.ms", ErrInvalidConfig},
		{map[string]string{"share.renew.acknowledge.enable": "maybe"}, "share.renew.acknowledge.enable", ErrInvalidConfig},
		{map[string]string{"bogus": "1"}, "bogus", ErrUnknownProperty},
		{map[string]string{"": "1"}, "", ErrUnknownProperty},
		{map[string]string{"group.share.record.lock.duration.ms": "20000"}, "group.share.record.lock.duration.ms", ErrUnknownProperty},
		{map[string]string{"streams.num.standby.replicas": "1"}, "streams.num.standby.replicas", ErrNotSupported},
		{map[string]string{"errors.deadletterqueue.topic.name": "dlq"}, "errors.deadletterqueue.topic.name", ErrNotSupported},
	}
	for _, tc := range invalid {
		_, err := checkGroupProps(c, tc.in, true)
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, tc.in)
		require.Equal(t, tc.prop, ce.Property, tc.in)
		require.ErrorIs(t, err, tc.sentinel, tc.in)
		require.ErrorIs(t, err, ErrInvalidConfig, tc.in)
	}
	// Only a changed heartbeat or session is compared: the broker's own
	// settings may be outside the bounds (short test sessions).
	c.ShareSessionTimeout, c.ShareHeartbeatInterval = time.Second, 100*time.Millisecond
	_, err := checkGroupProps(c, map[string]string{"share.heartbeat.interval.ms": "5000"}, true)
	require.ErrorIs(t, err, ErrInvalidConfig)
	_, err = checkGroupProps(c, map[string]string{"share.record.lock.duration.ms": "20000"}, true)
	require.NoError(t, err)
}

// groupConfigFS runs f on a Dir over the memory filesystem and over the
// OS's.
func groupConfigFS(t *testing.T, f func(t *testing.T, cfg Config, path string)) {
	t.Run("mem", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.FS = vfs.NewMem()
		f(t, cfg, "/data")
	})
	t.Run("os", func(t *testing.T) { f(t, DefaultConfig(), filepath.Join(t.TempDir(), "data")) })
}

func TestAlterGroupConfig(t *testing.T) {
	groupConfigFS(t, func(t *testing.T, cfg Config, path string) {
		ctx := context.Background()
		d, err := Open(ctx, path, cfg)
		require.NoError(t, err)
		require.Equal(t, defaultGroupConfig(cfg), d.GroupConfig("g"))
		require.Nil(t, d.GroupConfigOverrides("g"))

		got, err := d.AlterGroupConfig(ctx, "g", map[string]string{
			"share.auto.offset.reset": "by_duration:PT10M", "share.record.lock.duration.ms": "20000",
			"share.isolation.level": "read_committed", "share.delivery.count.limit": "3",
		})
		require.NoError(t, err)
		want := defaultGroupConfig(cfg)
		want.ShareAutoOffsetReset = ShareAutoOffsetReset{Kind: ShareResetByDuration, Duration: 10 * time.Minute}
		want.ShareRecordLockDuration, want.ShareIsolationLevel, want.ShareDeliveryCountLimit = 20*time.Second, ReadCommitted, 3
		require.Equal(t, want, got)
		require.Equal(t, want, d.GroupConfig("g"))
		require.Equal(t, defaultGroupConfig(cfg), d.GroupConfig("other"), "other groups keep the defaults")

		// Invalid: nothing changes.
		_, err = d.AlterGroupConfig(ctx, "g", map[string]string{"share.auto.offset.reset": "earliest", "share.delivery.count.limit": "11"})
		require.ErrorIs(t, err, ErrInvalidConfig)
		_, err = d.AlterGroupConfig(ctx, "g", map[string]string{"streams.session.timeout.ms": "50000"})
		require.ErrorIs(t, err, ErrNotSupported)
		_, err = d.AlterGroupConfig(ctx, "", map[string]string{"share.auto.offset.reset": "earliest"})
		require.ErrorIs(t, err, ErrInvalidConfig)
		require.Equal(t, want, d.GroupConfig("g"))

		// Replaced as a whole.
		_, err = d.AlterGroupConfig(ctx, "g", map[string]string{"share.auto.offset.reset": "earliest", "consumer.session.timeout.ms": "50000"})
		require.NoError(t, err)
		require.Equal(t, map[string]string{"share.auto.offset.reset": "earliest", "consumer.session.timeout.ms": "50000"}, d.GroupConfigOverrides("g"))
		_, err = d.AlterGroupConfig(ctx, "h", map[string]string{"share.heartbeat.interval.ms": "6000"})
		require.NoError(t, err)
		require.NoError(t, d.Close())

		// Durable across a reopen.
		d, err = Open(ctx, path, cfg)
		require.NoError(t, err)
		require.Equal(t, map[string]string{"share.auto.offset.reset": "earliest", "consumer.session.timeout.ms": "50000"}, d.GroupConfigOverrides("g"))
		require.Equal(t, 50*time.Second, d.GroupConfig("g").ConsumerSessionTimeout)
		require.Equal(t, ShareResetEarliest, d.GroupConfig("g").ShareAutoOffsetReset.Kind)
		require.Equal(t, 6*time.Second, d.GroupConfig("h").ShareHeartbeatInterval)
		require.Equal(t, []GroupConfigEntry{
			{Name: "consumer.assignment.interval.ms", Value: "1000", Type: "INT"},
			{Name: "consumer.heartbeat.interval.ms", Value: "5000", Type: "INT"},
			{Name: "consumer.session.timeout.ms", Value: "50000", Type: "INT", Override: true},
			{Name: "share.assignment.interval.ms", Value: "1000", Type: "INT"},
			{Name: "share.auto.offset.reset", Value: "earliest", Type: "STRING", Override: true},
			{Name: "share.delivery.count.limit", Value: "5", Type: "INT"},
			{Name: "share.heartbeat.interval.ms", Value: "5000", Type: "INT"},
			{Name: "share.partition.max.record.locks", Value: "2000", Type: "INT"},
			{Name: "share.record.lock.duration.ms", Value: "30000", Type: "INT"},
			{Name: "share.session.timeout.ms", Value: "45000", Type: "INT"},
		}, d.DescribeGroupConfig("g"))

		// None: back to the defaults, and the group's entry goes.
		got, err = d.AlterGroupConfig(ctx, "g", nil)
		require.NoError(t, err)
		require.Equal(t, defaultGroupConfig(cfg), got)
		require.Nil(t, d.GroupConfigOverrides("g"))
		require.NoError(t, d.Close())
		_, err = d.AlterGroupConfig(ctx, "g", map[string]string{"share.auto.offset.reset": "earliest"})
		require.ErrorIs(t, err, ErrClosed)

		d, err = Open(ctx, path, cfg)
		require.NoError(t, err)
		require.Nil(t, d.GroupConfigOverrides("g"))
		require.NotNil(t, d.GroupConfigOverrides("h"))
		require.NoError(t, d.Close())
	})
}

// TestGroupConfigKeepsValueWhenBoundsChange: an override stored under
// wider bounds stays in force after a reopen with narrower ones.
func TestGroupConfigKeepsValueWhenBoundsChange(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.cfg.ShareMaxRecordLockDuration = 10 * time.Minute
	d := e.open(t)
	_, err := d.AlterGroupConfig(ctx, "g", map[string]string{"share.record.lock.duration.ms": "300000"})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	e.cfg.ShareMaxRecordLockDuration = time.Minute
	d = e.open(t)
	require.Equal(t, 5*time.Minute, d.GroupConfig("g").ShareRecordLockDuration)
	_, err = d.AlterGroupConfig(ctx, "g", map[string]string{"share.record.lock.duration.ms": "300000"})
	require.ErrorIs(t, err, ErrInvalidConfig, "a new alter meets the bounds of now")
	require.NoError(t, d.Close())
}

// TestGroupConfigMaxCount: a client cannot make the Dir keep the
// configuration of more than GroupMaxCount groups.
func TestGroupConfigMaxCount(t *testing.T) {
	e := newEnv(t)
	e.cfg.GroupMaxCount = 2
	d := e.open(t)
	defer func() { require.NoError(t, d.Close()) }()
	ctx := context.Background()
	set := map[string]string{"share.auto.offset.reset": "earliest"}
	for _, g := range []string{"a", "b"} {
		_, err := d.AlterGroupConfig(ctx, g, set)
		require.NoError(t, err)
	}
	_, err := d.AlterGroupConfig(ctx, "c", set)
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.Nil(t, d.GroupConfigOverrides("c"))
	_, err = d.AlterGroupConfig(ctx, "a", map[string]string{"share.auto.offset.reset": "latest"})
	require.NoError(t, err, "a group already kept may change")
	_, err = d.AlterGroupConfig(ctx, "b", nil)
	require.NoError(t, err)
	_, err = d.AlterGroupConfig(ctx, "c", set)
	require.NoError(t, err, "room again once one is removed")
}

// TestGroupConfigStoreBound: long group ids cannot grow the store past
// its bound (which would leave a directory Open refuses).
func TestGroupConfigStoreBound(t *testing.T) {
	mem := newStoreFS(t)
	g, err := openGroupConfigs(mem, storeTestDir, DefaultConfig())
	require.NoError(t, err)
	g.maxBytes = 4096
	set := map[string]string{"share.auto.offset.reset": "earliest"}
	long := strings.Repeat("x", 1500)
	for i := range 2 {
		_, err := g.alter(long+strconv.Itoa(i), set)
		require.NoError(t, err)
	}
	_, err = g.alter(long+"2", set)
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.Nil(t, g.overridesOf(long+"2"))
	stored, err := loadGroupConfigStore(mem, storeTestDir, DefaultConfig())
	require.NoError(t, err)
	require.Len(t, stored, 2)
	_, err = g.alter(long+"0", nil)
	require.NoError(t, err)
	_, err = g.alter(long+"2", set)
	require.NoError(t, err, "room again once one is removed")
}

func TestGroupConfigStoreCorrupt(t *testing.T) {
	c := DefaultConfig()
	for name, data := range map[string]string{
		"not json":           `{"version":1,"groups":`,
		"no version":         `{"groups":{}}`,
		"version 2":          `{"version":2,"groups":{}}`,
		"unknown field":      `{"version":1,"groups":{},"extra":1}`,
		"trailing data":      `{"version":1,"groups":{}} {}`,
		"empty group":        `{"version":1,"groups":{"":{"share.auto.offset.reset":"earliest"}}}`,
		"no overrides":       `{"version":1,"groups":{"g":{}}}`,
		"unknown property":   `{"version":1,"groups":{"g":{"bogus":"1"}}}`,
		"invalid value":      `{"version":1,"groups":{"g":{"share.delivery.count.limit":"x"}}}`,
		"below Kafka floor":  `{"version":1,"groups":{"g":{"share.delivery.count.limit":"1"}}}`,
		"not canonical":      `{"version":1,"groups":{"g":{"share.delivery.count.limit":" 3"}}}`,
		"streams":            `{"version":1,"groups":{"g":{"streams.session.timeout.ms":"50000"}}}`,
		"value not a string": `{"version":1,"groups":{"g":{"share.delivery.count.limit":3}}}`,
	} {
		mem := newStoreFS(t)
		f, err := mem.Create(filepath.Join(storeTestDir, groupConfigStoreFile))
		require.NoError(t, err)
		_, err = f.Write([]byte(data))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		_, err = loadGroupConfigStore(mem, storeTestDir, c)
		require.ErrorIs(t, err, ErrCorruptGroupConfigStore, name)
		var ce *CorruptStoreError
		require.ErrorAs(t, err, &ce, name)
		require.Equal(t, filepath.Join(storeTestDir, groupConfigStoreFile), ce.File)

		// Open refuses the directory.
		cfg := c
		cfg.FS = mem
		_, err = Open(context.Background(), storeTestDir, cfg)
		require.ErrorIs(t, err, ErrCorruptGroupConfigStore, name)
	}
	mem := newStoreFS(t)
	got, err := loadGroupConfigStore(mem, storeTestDir, c)
	require.NoError(t, err)
	require.Empty(t, got, "a missing store is empty")
}

// TestGroupConfigStoreCrash alters group configurations, crashing (a
// CrashClone of the memory filesystem) before every filesystem operation
// of each alter and after it: every crash leaves exactly the previous
// configuration or the new one, never a mixture, and once the alter
// returns the new one survives.
func TestGroupConfigStoreCrash(t *testing.T) {
	c := DefaultConfig()
	mem := newStoreFS(t)
	ffs := vfs.NewFaultFS(mem)
	g, err := openGroupConfigs(ffs, storeTestDir, c)
	require.NoError(t, err)
	var crashes []*vfs.MemFS
	ffs.OnOp(func(vfs.Op, string) { crashes = append(crashes, mem.CrashClone()) })

	steps := []struct {
		group string
		props map[string]string
	}{
		{"g", map[string]string{"share.auto.offset.reset": "earliest", "share.record.lock.duration.ms": "20000"}},
		{"g", map[string]string{"share.auto.offset.reset": "latest", "share.delivery.count.limit": "3"}},
		{"h", map[string]string{"share.isolation.level": "read_committed"}},
		{"g", nil},
	}
	before := map[string]map[string]string{}
	for i, st := range steps {
		_, err := g.alter(st.group, st.props)
		require.NoError(t, err)
		after := make(map[string]map[string]string)
		for k, v := range before {
			after[k] = v
		}
		if len(st.props) == 0 {
			delete(after, st.group)
		} else {
			after[st.group] = st.props
		}
		require.NotEmpty(t, crashes)
		sawBefore, sawAfter := false, false
		for j, crashed := range crashes {
			got, err := loadGroupConfigStore(crashed, storeTestDir, c)
			require.NoError(t, err, "step %d crash %d", i, j)
			switch {
			case equalGroupStores(got, before):
				require.False(t, sawAfter, "step %d crash %d went back", i, j)
				sawBefore = true
			case equalGroupStores(got, after):
				sawAfter = true
			default:
				t.Fatalf("step %d crash %d left %v", i, j, got)
			}
		}
		require.True(t, sawBefore, "step %d", i)
		got, err := loadGroupConfigStore(mem.CrashClone(), storeTestDir, c)
		require.NoError(t, err)
		require.True(t, equalGroupStores(got, after), "step %d durable once altered: %v", i, got)
		crashes, before = nil, after
	}
}

func equalGroupStores(x, y map[string]map[string]string) bool {
	return maps.EqualFunc(x, y, maps.Equal[map[string]string])
}

// TestGroupConfigAlterFaults: a failed write changes nothing, in memory
// or (after a crash) on disk.
func TestGroupConfigAlterFaults(t *testing.T) {
	c := DefaultConfig()
	mem := newStoreFS(t)
	ffs := vfs.NewFaultFS(mem)
	g, err := openGroupConfigs(ffs, storeTestDir, c)
	require.NoError(t, err)
	_, err = g.alter("g", map[string]string{"share.auto.offset.reset": "earliest"})
	require.NoError(t, err)
	for _, op := range []vfs.Op{vfs.OpRemove, vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpClose, vfs.OpRename, vfs.OpSyncDir} {
		ffs.Inject(vfs.EIO(op, storeTestDir, 1))
		_, err = g.alter("g", map[string]string{"share.auto.offset.reset": "latest"})
		require.ErrorIs(t, err, vfs.ErrInjected, op)
		ffs.Clear()
		require.Equal(t, map[string]string{"share.auto.offset.reset": "earliest"}, g.overridesOf("g"), op)
		for _, fsys := range []vfs.FS{mem, mem.CrashClone()} {
			got, err := loadGroupConfigStore(fsys, storeTestDir, c)
			require.NoError(t, err)
			require.Equal(t, map[string]map[string]string{"g": {"share.auto.offset.reset": "earliest"}}, got, op)
		}
	}
}
