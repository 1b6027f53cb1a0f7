package log

import (
	"context"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

func set(key string, v float64) QuotaOp { return QuotaOp{Key: key, Value: v} }

func TestAlterClientQuotas(t *testing.T) {
	groupConfigFS(t, func(t *testing.T, cfg Config, path string) {
		ctx := context.Background()
		d, err := Open(ctx, path, cfg)
		require.NoError(t, err)
		alice, bob, app := QuotaName("alice"), QuotaName("bob"), QuotaName("app")
		none := QuotaEntityName{}
		require.True(t, math.IsInf(d.ClientQuota(QuotaProducerByteRate, "alice", "app").Limit, 1), "no quota")

		res, err := d.AlterClientQuotas(ctx, []QuotaAlteration{
			{QuotaEntity{alice, none}, []QuotaOp{set(QuotaProducerByteRate, 1<<20), set(QuotaRequestPercentage, 12.5)}},
			{QuotaEntity{alice, app}, []QuotaOp{set(QuotaConsumerByteRate, 2<<20)}},
			{QuotaEntity{QuotaDefault(), none}, []QuotaOp{set(QuotaProducerByteRate, 3<<20)}},
			{QuotaEntity{none, QuotaDefault()}, []QuotaOp{set(QuotaConsumerByteRate, 4<<20)}},
		}, false)
		require.NoError(t, err)
		for _, r := range res {
			require.NoError(t, r.Err, r.Entity)
		}
		// Kafka's precedence; the quota's entity is what clients share.
		require.Equal(t, ClientQuota{Limit: 1 << 20, User: "alice"}, d.ClientQuota(QuotaProducerByteRate, "alice", "app"))
		require.Equal(t, ClientQuota{Limit: 2 << 20, User: "alice", ClientID: "app"}, d.ClientQuota(QuotaConsumerByteRate, "alice", "app"))
		require.Equal(t, ClientQuota{Limit: 4 << 20, ClientID: "other"}, d.ClientQuota(QuotaConsumerByteRate, "alice", "other"))
		require.Equal(t, ClientQuota{Limit: 3 << 20, User: "bob"}, d.ClientQuota(QuotaProducerByteRate, "bob", "x"))

		// Kafka's refusals, each for its entity; nothing half stored.
		v0 := d.ClientQuotasVersion()
		res, err = d.AlterClientQuotas(ctx, []QuotaAlteration{
			{QuotaEntity{bob, none}, []QuotaOp{set(QuotaProducerByteRate, 0)}},
			{QuotaEntity{bob, app}, []QuotaOp{set(QuotaProducerByteRate, -5)}},
			{QuotaEntity{QuotaName("c"), none}, []QuotaOp{set(QuotaProducerByteRate, 1.5)}},
			{QuotaEntity{QuotaName("d"), none}, []QuotaOp{set(QuotaRequestPercentage, math.Inf(1))}},
			{QuotaEntity{QuotaName("e"), none}, []QuotaOp{set("bogus", 1)}},
			{QuotaEntity{QuotaName("f"), none}, []QuotaOp{set(QuotaProducerByteRate, 1), set(QuotaProducerByteRate, 2)}},
			{QuotaEntity{none, none}, []QuotaOp{set(QuotaProducerByteRate, 1)}},
			{QuotaEntity{QuotaName(""), none}, []QuotaOp{set(QuotaProducerByteRate, 1)}},
			{QuotaEntity{alice, none}, []QuotaOp{{Key: QuotaRequestPercentage, Remove: true}}},
			{QuotaEntity{alice, none}, []QuotaOp{set(QuotaProducerByteRate, 7)}},
		}, false)
		require.NoError(t, err)
		require.Len(t, res, 9)
		for _, r := range res {
			require.ErrorIs(t, r.Err, ErrInvalidQuota, r.Entity)
		}
		require.Contains(t, res[0].Err.Error(), "Quota producer_byte_rate must be greater than 0")
		require.Equal(t, v0, d.ClientQuotasVersion())
		require.Equal(t, ClientQuota{Limit: 1 << 20, User: "alice"}, d.ClientQuota(QuotaProducerByteRate, "alice", "app"))

		// Validate only: checked, not stored.
		res, err = d.AlterClientQuotas(ctx, []QuotaAlteration{{QuotaEntity{bob, none}, []QuotaOp{set(QuotaProducerByteRate, 9)}}}, true)
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
		require.Equal(t, 3.0*(1<<20), d.ClientQuota(QuotaProducerByteRate, "bob", "x").Limit)

		// Described with filters.
		all, err := d.DescribeClientQuotas(nil, false)
		require.NoError(t, err)
		require.Len(t, all, 4)
		users, err := d.DescribeClientQuotas([]QuotaFilterComponent{{EntityType: QuotaEntityUser, MatchType: QuotaMatchAny}}, true)
		require.NoError(t, err)
		require.Len(t, users, 2, "strict: alice and <default>, not alice's client")
		m := "alice"
		exact, err := d.DescribeClientQuotas([]QuotaFilterComponent{{EntityType: QuotaEntityUser, MatchType: QuotaMatchExact, Match: &m}}, false)
		require.NoError(t, err)
		require.Len(t, exact, 2)
		def, err := d.DescribeClientQuotas([]QuotaFilterComponent{{EntityType: QuotaEntityClientID, MatchType: QuotaMatchDefault}}, false)
		require.NoError(t, err)
		require.Equal(t, []QuotaEntry{{QuotaEntity{none, QuotaDefault()}, map[string]float64{QuotaConsumerByteRate: 4 << 20}}}, def)
		for _, bad := range [][]QuotaFilterComponent{
			{{EntityType: "ip", MatchType: QuotaMatchAny}},
			{{EntityType: QuotaEntityUser, MatchType: QuotaMatchAny}, {EntityType: QuotaEntityUser, MatchType: QuotaMatchAny}},
			{{EntityType: QuotaEntityUser, MatchType: QuotaMatchExact}},
			{{EntityType: QuotaEntityUser, MatchType: QuotaMatchDefault, Match: &m}},
			{{EntityType: QuotaEntityUser, MatchType: 3}},
		} {
			_, err := d.DescribeClientQuotas(bad, false)
			require.ErrorIs(t, err, ErrInvalidQuota, bad)
		}

		// Removed; durable across a reopen.
		_, err = d.AlterClientQuotas(ctx, []QuotaAlteration{{QuotaEntity{alice, app}, []QuotaOp{{Key: QuotaConsumerByteRate, Remove: true}}}}, false)
		require.NoError(t, err)
		require.NoError(t, d.Close())
		d, err = Open(ctx, path, cfg)
		require.NoError(t, err)
		all, err = d.DescribeClientQuotas(nil, false)
		require.NoError(t, err)
		require.Len(t, all, 3)
		require.Equal(t, ClientQuota{Limit: 1 << 20, User: "alice"}, d.ClientQuota(QuotaProducerByteRate, "alice", "app"))
		require.NoError(t, d.Close())
	})
}

func TestClientQuotaStoreBound(t *testing.T) {
	mem := newStoreFS(t)
	q, err := openClientQuotas(mem, storeTestDir)
	require.NoError(t, err)
	q.maxBytes = 4096
	alt := func(user string) QuotaAlteration {
		return QuotaAlteration{QuotaEntity{User: QuotaName(user)}, []QuotaOp{set(QuotaProducerByteRate, 1)}}
	}
	long := strings.Repeat("x", 1500)
	for i := range 2 {
		res, err := q.alter([]QuotaAlteration{alt(long + strconv.Itoa(i))}, false)
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
	}
	res, err := q.alter([]QuotaAlteration{alt(long + "2")}, false)
	require.NoError(t, err)
	require.ErrorIs(t, res[0].Err, ErrStoreFull)
	stored, err := loadQuotaStore(mem, storeTestDir)
	require.NoError(t, err)
	require.Len(t, stored, 2)
}

func TestClientQuotaStoreCorrupt(t *testing.T) {
	for name, data := range map[string]string{
		"not json":      `{"version":1,"entities":`,
		"no version":    `{"entities":[]}`,
		"version 2":     `{"version":2,"entities":[]}`,
		"unknown field": `{"version":1,"entities":[],"x":1}`,
		"empty entity":  `{"version":1,"entities":[{"entity":{},"quotas":{"producer_byte_rate":1}}]}`,
		"ip":            `{"version":1,"entities":[{"entity":{"ip":"1.2.3.4"},"quotas":{"producer_byte_rate":1}}]}`,
		"empty name":    `{"version":1,"entities":[{"entity":{"user":""},"quotas":{"producer_byte_rate":1}}]}`,
		"twice":         `{"version":1,"entities":[{"entity":{"user":"a"},"quotas":{"producer_byte_rate":1}},{"entity":{"user":"a"},"quotas":{"producer_byte_rate":2}}]}`,
		"no quotas":     `{"version":1,"entities":[{"entity":{"user":"a"},"quotas":{}}]}`,
		"zero":          `{"version":1,"entities":[{"entity":{"user":"a"},"quotas":{"producer_byte_rate":0}}]}`,
		"unknown key":   `{"version":1,"entities":[{"entity":{"user":"a"},"quotas":{"bogus":1}}]}`,
		"fraction":      `{"version":1,"entities":[{"entity":{"user":"a"},"quotas":{"producer_byte_rate":1.5}}]}`,
		"name type":     `{"version":1,"entities":[{"entity":{"user":1},"quotas":{"producer_byte_rate":1}}]}`,
	} {
		mem := newStoreFS(t)
		f, err := mem.Create(filepath.Join(storeTestDir, quotaStoreFile))
		require.NoError(t, err)
		_, err = f.Write([]byte(data))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		_, err = loadQuotaStore(mem, storeTestDir)
		require.ErrorIs(t, err, ErrCorruptClientQuotaStore, name)
		cfg := DefaultConfig()
		cfg.FS = mem
		_, err = Open(context.Background(), storeTestDir, cfg)
		require.ErrorIs(t, err, ErrCorruptClientQuotaStore, name)
	}
}

// TestClientQuotaStoreCrash: a crash before any filesystem operation of
// an alteration, or after it, leaves the previous quotas or the new ones,
// and once it returns the new ones survive; a failed write changes
// nothing.
func TestClientQuotaStoreCrash(t *testing.T) {
	mem := newStoreFS(t)
	ffs := vfs.NewFaultFS(mem)
	q, err := openClientQuotas(ffs, storeTestDir)
	require.NoError(t, err)
	var crashes []*vfs.MemFS
	ffs.OnOp(func(vfs.Op, string) { crashes = append(crashes, mem.CrashClone()) })
	a := QuotaEntity{User: QuotaName("a")}
	steps := [][]QuotaAlteration{
		{{a, []QuotaOp{set(QuotaProducerByteRate, 100)}}, {QuotaEntity{ClientID: QuotaDefault()}, []QuotaOp{set(QuotaConsumerByteRate, 5)}}},
		{{a, []QuotaOp{set(QuotaProducerByteRate, 200), set(QuotaRequestPercentage, 10)}}},
		{{a, []QuotaOp{{Key: QuotaProducerByteRate, Remove: true}, {Key: QuotaRequestPercentage, Remove: true}}}},
	}
	before := q.entries
	for i, st := range steps {
		_, err := q.alter(st, false)
		require.NoError(t, err)
		after := q.entries
		sawBefore, sawAfter := false, false
		for j, crashed := range crashes {
			got, err := loadQuotaStore(crashed, storeTestDir)
			require.NoError(t, err, "step %d crash %d", i, j)
			switch {
			case equalQuotaEntries(got, before):
				require.False(t, sawAfter, "step %d crash %d went back", i, j)
				sawBefore = true
			case equalQuotaEntries(got, after):
				sawAfter = true
			default:
				t.Fatalf("step %d crash %d left %v", i, j, got)
			}
		}
		require.True(t, sawBefore, "step %d", i)
		got, err := loadQuotaStore(mem.CrashClone(), storeTestDir)
		require.NoError(t, err)
		require.True(t, equalQuotaEntries(got, after), "step %d", i)
		crashes, before = nil, after
	}
	ffs.OnOp(nil)
	for _, op := range []vfs.Op{vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpRename, vfs.OpSyncDir} {
		ffs.Inject(vfs.EIO(op, storeTestDir, 1))
		_, err = q.alter([]QuotaAlteration{{a, []QuotaOp{set(QuotaProducerByteRate, 1)}}}, false)
		require.ErrorIs(t, err, vfs.ErrInjected, op)
		ffs.Clear()
		require.True(t, equalQuotaEntries(before, q.entries), op)
		got, err := loadQuotaStore(mem.CrashClone(), storeTestDir)
		require.NoError(t, err)
		require.True(t, equalQuotaEntries(before, got), op)
	}
}

func equalQuotaEntries(x, y quotaEntries) bool {
	if len(x) != len(y) {
		return false
	}
	for e, qx := range x {
		qy, ok := y[e]
		if !ok || len(qx) != len(qy) {
			return false
		}
		for k, v := range qx {
			if qy[k] != v {
				return false
			}
		}
	}
	return true
}
