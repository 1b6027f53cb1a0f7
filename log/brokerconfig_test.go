package log

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// TestAlterBrokerConfig: a dynamic default reaches every topic without its
// own override at once, this broker's setting wins over the cluster's, the
// settings survive a reopen, and DescribeBrokerConfig and
// DescribeTopicConfig report the sources and synonyms as Kafka does.
func TestAlterBrokerConfig(t *testing.T) {
	groupConfigFS(t, func(t *testing.T, cfg Config, path string) {
		ctx := context.Background()
		cfg.DefaultTopic.SegmentBytes = 1 << 20 // a static setting
		d, err := Open(ctx, path, cfg)
		require.NoError(t, err)
		createTopic(t, d, "plain", 2, nil)
		createTopic(t, d, "own", 1, map[string]string{"retention.ms": "1000"})

		require.NoError(t, d.AlterBrokerConfig(ctx, ClusterDefault, map[string]string{"log.retention.ms": "3600000", "log.segment.bytes": " 2097152 "}))
		for p := range int32(2) {
			c := partition(t, d, "plain", p).Config()
			require.Equal(t, time.Hour, c.Retention)
			require.Equal(t, int64(2<<20), c.SegmentBytes)
		}
		require.Equal(t, time.Second, partition(t, d, "own", 0).Config().Retention, "an override wins")
		require.Equal(t, time.Hour, d.Config().DefaultTopic.Retention)
		require.Equal(t, int64(1<<20), d.StaticConfig().DefaultTopic.SegmentBytes)
		require.Equal(t, map[string]string{"log.retention.ms": "3600000", "log.segment.bytes": "2097152"}, d.BrokerConfigOverrides(ClusterDefault))

		require.NoError(t, d.AlterBrokerConfig(ctx, ThisBroker, map[string]string{"log.retention.ms": "7200000"}))
		require.Equal(t, 2*time.Hour, partition(t, d, "plain", 1).Config().Retention)
		createTopic(t, d, "later", 1, nil)
		require.Equal(t, 2*time.Hour, partition(t, d, "later", 0).Config().Retention, "a new topic gets the dynamic defaults")

		entry := func(entries []ConfigEntry, name string) ConfigEntry {
			for _, e := range entries {
				if e.Name == name {
					return e
				}
			}
			t.Fatalf("no %s", name)
			return ConfigEntry{}
		}
		b := d.DescribeBrokerConfig()
		require.Len(t, b, len(DefaultConfig().Properties()))
		e := entry(b, "log.retention.ms")
		require.Equal(t, ConfigEntry{Name: "log.retention.ms", Value: "7200000", Source: SourceDynamicBroker, Type: "LONG",
			Synonyms: []ConfigSynonym{{"log.retention.ms", "7200000", SourceDynamicBroker}, {"log.retention.ms", "3600000", SourceDynamicDefaultBroker},
				{"log.retention.ms", "604800000", SourceDefault}}, Doc: e.Doc}, e)
		require.NotEmpty(t, e.Doc)
		e = entry(b, "node.id")
		require.True(t, e.ReadOnly)
		require.Equal(t, SourceDefault, e.Source)
		require.Equal(t, "INT", e.Type)
		for _, e := range b {
			require.NotEmpty(t, e.Type, e.Name)
			require.NotEmpty(t, e.Doc, e.Name)
		}

		tc, err := d.DescribeTopicConfig("own")
		require.NoError(t, err)
		e = entry(tc, "retention.ms")
		require.Equal(t, SourceTopic, e.Source)
		require.Equal(t, []ConfigSynonym{{"retention.ms", "1000", SourceTopic}, {"log.retention.ms", "7200000", SourceDynamicBroker},
			{"log.retention.ms", "3600000", SourceDynamicDefaultBroker}, {"log.retention.ms", "604800000", SourceDefault}}, e.Synonyms)
		e = entry(tc, "segment.bytes")
		require.Equal(t, "2097152", e.Value)
		require.Equal(t, SourceDynamicDefaultBroker, e.Source)
		require.Equal(t, []ConfigSynonym{{"log.segment.bytes", "2097152", SourceDynamicDefaultBroker},
			{"log.segment.bytes", "1048576", SourceStaticBroker}, {"log.segment.bytes", "1073741824", SourceDefault}}, e.Synonyms)
		require.Equal(t, SourceDefault, entry(tc, "remote.storage.enable").Source)
		for _, e := range tc {
			require.NotEmpty(t, e.Type, e.Name)
			require.NotEmpty(t, e.Doc, e.Name)
		}

		require.NoError(t, d.Close())
		d, err = Open(ctx, path, cfg)
		require.NoError(t, err)
		defer d.Close()
		require.Equal(t, 2*time.Hour, partition(t, d, "plain", 0).Config().Retention, "durable")
		require.Equal(t, int64(2<<20), partition(t, d, "plain", 0).Config().SegmentBytes)

		// Back to the static configuration.
		require.NoError(t, d.AlterBrokerConfig(ctx, ThisBroker, nil))
		require.NoError(t, d.AlterBrokerConfig(ctx, ClusterDefault, nil))
		require.Equal(t, 7*24*time.Hour, partition(t, d, "plain", 0).Config().Retention)
		require.Equal(t, int64(1<<20), partition(t, d, "plain", 0).Config().SegmentBytes)
	})
}

// TestAlterBrokerConfigRefused: a property that is not dynamic, one Kafka
// changes at run time but kafkalite does not, an unknown one, a value that
// does not parse or validate, and defaults a topic's overrides would not
// fit: each is refused and nothing is stored.
func TestAlterBrokerConfigRefused(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "t", 1, map[string]string{"local.retention.ms": "5000", "remote.storage.enable": "false"})
	for _, c := range []struct {
		props map[string]string
		is    []error
	}{
		{map[string]string{"node.id": "3"}, []error{ErrInvalidConfig}},
		{map[string]string{"num.partitions": "3"}, []error{ErrInvalidConfig}},
		{map[string]string{"num.recovery.threads.per.data.dir": "3"}, []error{ErrInvalidConfig, ErrNotSupported}},
		{map[string]string{"no.such.thing": "2"}, []error{ErrInvalidConfig, ErrUnknownProperty}},
		{map[string]string{"log.retention.ms": "soon"}, []error{ErrInvalidConfig}},
		{map[string]string{"log.segment.bytes": "10"}, []error{ErrInvalidConfig}},
		// The topic's local.retention.ms of 5 s would pass the new default
		// retention.ms of 1 s.
		{map[string]string{"log.retention.ms": "1000"}, []error{ErrInvalidConfig}},
		{map[string]string{"log.retention.ms": "3600000", "num.recovery.threads.per.data.dir": "3"}, []error{ErrNotSupported}},
	} {
		err := d.AlterBrokerConfig(ctx, ClusterDefault, c.props)
		cerr := d.CheckBrokerConfig(ctx, ThisBroker, c.props)
		for _, want := range c.is {
			require.ErrorIs(t, err, want, "%v", c.props)
			require.ErrorIs(t, cerr, want, "%v", c.props)
		}
		require.Empty(t, d.BrokerConfigOverrides(ClusterDefault))
		require.Equal(t, DefaultConfig().DefaultTopic.Retention, partition(t, d, "t", 0).Config().Retention)
		_, err = e.mem.Stat(filepath.Join("/data", brokerConfigStoreFile))
		require.Error(t, err, "nothing stored")
	}
	require.NoError(t, d.CheckBrokerConfig(ctx, ThisBroker, map[string]string{"log.retention.ms": "3600000"}))
	require.Empty(t, d.BrokerConfigOverrides(ThisBroker), "a check stores nothing")
	require.Equal(t, DefaultConfig().DefaultTopic.Retention, partition(t, d, "t", 0).Config().Retention)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, d.AlterBrokerConfig(cctx, ClusterDefault, map[string]string{"log.retention.ms": "1"}), context.Canceled)
}

func TestBrokerConfigStoreCorrupt(t *testing.T) {
	for name, data := range map[string]string{
		"not json":     "{",
		"no version":   `{"default": {}}`,
		"version 2":    `{"version": 2}`,
		"unknown key":  `{"version": 1, "colour": 1}`,
		"not dynamic":  `{"version": 1, "default": {"node.id": "1"}}`,
		"unparsable":   `{"version": 1, "broker": {"log.retention.ms": "x"}}`,
		"not printed":  `{"version": 1, "broker": {"log.retention.ms": " 5"}}`,
		"trailing":     `{"version": 1} {}`,
		"unsupported":  `{"version": 1, "default": {"num.recovery.threads.per.data.dir": "3"}}`,
		"invalid conf": `{"version": 1, "default": {"log.segment.bytes": "10"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			mem := newStoreFS(t)
			f, err := mem.Create(filepath.Join(storeTestDir, brokerConfigStoreFile))
			require.NoError(t, err)
			_, err = f.Write([]byte(data))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			_, err = openBrokerConfigs(mem, storeTestDir, DefaultConfig())
			require.ErrorIs(t, err, ErrCorruptBrokerConfigStore)
			var ce *CorruptStoreError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, filepath.Join(storeTestDir, brokerConfigStoreFile), ce.File)
		})
	}
}

// TestBrokerConfigStoreCrash crashes (a CrashClone of the memory
// filesystem) before every filesystem operation of each store write: the
// store read back is the old one or the new one, never a mix, and the new
// one once the write returned.
func TestBrokerConfigStoreCrash(t *testing.T) {
	mem := newStoreFS(t)
	ffs := vfs.NewFaultFS(mem)
	var crashes []*vfs.MemFS
	ffs.OnOp(func(vfs.Op, string) { crashes = append(crashes, mem.CrashClone()) })
	type state struct{ def, broker map[string]string }
	steps := []state{
		{map[string]string{"log.retention.ms": "3600000"}, map[string]string{}},
		{map[string]string{"log.retention.ms": "3600000"}, map[string]string{"log.segment.bytes": "2097152", "log.cleanup.policy": "compact"}},
		{map[string]string{}, map[string]string{"log.segment.bytes": "2097152"}},
	}
	before := state{map[string]string{}, map[string]string{}}
	for i, after := range steps {
		require.NoError(t, saveBrokerConfigStore(ffs, storeTestDir, after.def, after.broker))
		require.NotEmpty(t, crashes)
		sawBefore, sawAfter := false, false
		for j, crashed := range crashes {
			def, broker, err := loadBrokerConfigStore(crashed, storeTestDir)
			require.NoError(t, err, "step %d crash %d", i, j)
			switch got := (state{def, broker}); {
			case maps.Equal(got.def, before.def) && maps.Equal(got.broker, before.broker):
				require.False(t, sawAfter, "step %d crash %d went back", i, j)
				sawBefore = true
			case maps.Equal(got.def, after.def) && maps.Equal(got.broker, after.broker):
				sawAfter = true
			default:
				t.Fatalf("step %d crash %d left %v", i, j, got)
			}
		}
		require.True(t, sawBefore, "step %d", i)
		def, broker, err := loadBrokerConfigStore(mem.CrashClone(), storeTestDir)
		require.NoError(t, err)
		require.True(t, maps.Equal(def, after.def) && maps.Equal(broker, after.broker), "step %d durable once saved", i)
		crashes, before = nil, after
	}
	// The file is the documented format.
	data, err := readRootFile(mem, filepath.Join(storeTestDir, brokerConfigStoreFile), maxBrokerConfigStoreBytes)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Equal(t, float64(1), doc["version"])
}
