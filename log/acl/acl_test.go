package acl

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
)

const testDir = "/data"

func newTestStore(t *testing.T, fsys vfs.FS) *store {
	t.Helper()
	s, err := openStore(fsys, testDir)
	require.NoError(t, err)
	return s
}

func newMem(t *testing.T) *vfs.MemFS {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll(testDir))
	require.NoError(t, mem.SyncDir("/"))
	return mem
}

func allow(rt ResourceType, name string, pt PatternType, principal string, op Operation) Binding {
	return Binding{ResourceType: rt, ResourceName: name, PatternType: pt, Principal: principal, Host: "*", Operation: op, Permission: Allow}
}

func deny(b Binding) Binding { b.Permission = Deny; return b }

func onHost(b Binding, host string) Binding { b.Host = host; return b }

// TestAuthorizeRules checks Kafka's StandardAuthorizer decisions one rule
// at a time.
func TestAuthorizeRules(t *testing.T) {
	topic := func(name string) Resource { return Resource{ResourceTopic, name} }
	const alice, bob = "User:alice", "User:bob"
	cases := []struct {
		name      string
		acls      []Binding
		cfg       Config
		principal string
		host      string
		op        Operation
		res       Resource
		want      bool
	}{
		{"no acls: denied by default", nil, Config{}, alice, "10.0.0.1", OpRead, topic("t"), false},
		{"no acls: allow.everyone.if.no.acl.found", nil, Config{AllowEveryoneIfNoACLFound: true}, alice, "10.0.0.1", OpRead, topic("t"), true},
		{"acls on the resource for another principal: denied even with allow.everyone",
			[]Binding{allow(ResourceTopic, "t", PatternLiteral, bob, OpRead)}, Config{AllowEveryoneIfNoACLFound: true}, alice, "h", OpRead, topic("t"), false},
		{"acls on another resource only: allow.everyone applies",
			[]Binding{allow(ResourceTopic, "u", PatternLiteral, bob, OpRead)}, Config{AllowEveryoneIfNoACLFound: true}, alice, "h", OpRead, topic("t"), true},
		{"super user", []Binding{deny(allow(ResourceTopic, "t", PatternLiteral, alice, OpAll))}, Config{SuperUsers: []string{alice}}, alice, "h", OpWrite, topic("t"), true},
		{"literal allow", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpRead)}, Config{}, alice, "h", OpRead, topic("t"), true},
		{"literal is not a prefix", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpRead)}, Config{}, alice, "h", OpRead, topic("tt"), false},
		{"prefixed allow", []Binding{allow(ResourceTopic, "orders-", PatternPrefixed, alice, OpRead)}, Config{}, alice, "h", OpRead, topic("orders-eu"), true},
		{"prefixed equal to the name", []Binding{allow(ResourceTopic, "orders", PatternPrefixed, alice, OpRead)}, Config{}, alice, "h", OpRead, topic("orders"), true},
		{"prefixed longer than the name", []Binding{allow(ResourceTopic, "orders-", PatternPrefixed, alice, OpRead)}, Config{}, alice, "h", OpRead, topic("orders"), false},
		{"wildcard resource", []Binding{allow(ResourceTopic, "*", PatternLiteral, alice, OpRead)}, Config{}, alice, "h", OpRead, topic("any"), true},
		{"wildcard principal", []Binding{allow(ResourceTopic, "t", PatternLiteral, "User:*", OpRead)}, Config{}, alice, "h", OpRead, topic("t"), true},
		{"other resource type", []Binding{allow(ResourceGroup, "t", PatternLiteral, alice, OpRead)}, Config{}, alice, "h", OpRead, topic("t"), false},
		{"deny wins over allow", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpRead), deny(allow(ResourceTopic, "t", PatternLiteral, alice, OpRead))}, Config{}, alice, "h", OpRead, topic("t"), false},
		{"prefixed deny wins over literal allow", []Binding{allow(ResourceTopic, "orders-eu", PatternLiteral, alice, OpWrite), deny(allow(ResourceTopic, "orders-", PatternPrefixed, alice, OpWrite))}, Config{}, alice, "h", OpWrite, topic("orders-eu"), false},
		{"wildcard deny wins", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpRead), deny(allow(ResourceTopic, "*", PatternLiteral, "User:*", OpRead))}, Config{}, alice, "h", OpRead, topic("t"), false},
		{"deny for another principal", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpRead), deny(allow(ResourceTopic, "t", PatternLiteral, bob, OpRead))}, Config{}, alice, "h", OpRead, topic("t"), true},
		{"READ implies DESCRIBE", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpRead)}, Config{}, alice, "h", OpDescribe, topic("t"), true},
		{"WRITE implies DESCRIBE", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpWrite)}, Config{}, alice, "h", OpDescribe, topic("t"), true},
		{"DELETE implies DESCRIBE", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpDelete)}, Config{}, alice, "h", OpDescribe, topic("t"), true},
		{"ALTER implies DESCRIBE", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpAlter)}, Config{}, alice, "h", OpDescribe, topic("t"), true},
		{"CREATE does not imply DESCRIBE", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpCreate)}, Config{}, alice, "h", OpDescribe, topic("t"), false},
		{"DESCRIBE does not imply READ", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpDescribe)}, Config{}, alice, "h", OpRead, topic("t"), false},
		{"ALTER_CONFIGS implies DESCRIBE_CONFIGS", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpAlterConfigs)}, Config{}, alice, "h", OpDescribeConfigs, topic("t"), true},
		{"a DENY READ does not deny DESCRIBE", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpDescribe), deny(allow(ResourceTopic, "t", PatternLiteral, alice, OpRead))}, Config{}, alice, "h", OpDescribe, topic("t"), true},
		{"ALL allows everything", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpAll)}, Config{}, alice, "h", OpDelete, topic("t"), true},
		{"DENY ALL denies everything", []Binding{allow(ResourceTopic, "t", PatternLiteral, alice, OpAll), deny(allow(ResourceTopic, "t", PatternLiteral, alice, OpAll))}, Config{}, alice, "h", OpDescribe, topic("t"), false},
		{"host equal", []Binding{onHost(allow(ResourceTopic, "t", PatternLiteral, alice, OpRead), "10.0.0.1")}, Config{}, alice, "10.0.0.1", OpRead, topic("t"), true},
		{"host differs", []Binding{onHost(allow(ResourceTopic, "t", PatternLiteral, alice, OpRead), "10.0.0.1")}, Config{}, alice, "10.0.0.2", OpRead, topic("t"), false},
		{"CIDR host in range", []Binding{onHost(allow(ResourceTopic, "t", PatternLiteral, alice, OpRead), "10.0.0.0/8")}, Config{}, alice, "10.9.8.7", OpRead, topic("t"), true},
		{"CIDR host out of range", []Binding{onHost(allow(ResourceTopic, "t", PatternLiteral, alice, OpRead), "10.0.0.0/8")}, Config{}, alice, "11.0.0.1", OpRead, topic("t"), false},
		{"IPv6 CIDR", []Binding{onHost(allow(ResourceTopic, "t", PatternLiteral, alice, OpRead), "fd00::/8")}, Config{}, alice, "fd00:0:0:0:0:0:0:1", OpRead, topic("t"), true},
		{"cluster", []Binding{allow(ResourceCluster, ClusterName, PatternLiteral, alice, OpIdempotentWrite)}, Config{}, alice, "h", OpIdempotentWrite, Resource{ResourceCluster, ClusterName}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newTestStore(t, newMem(t))
			errs, err := s.create(c.acls)
			require.NoError(t, err)
			for _, e := range errs {
				require.NoError(t, e)
			}
			a := newAuthorizer(s, c.cfg)
			require.Equal(t, c.want, a.Authorize(c.principal, c.host, c.op, c.res))
		})
	}
}

func TestAuthorizedOperations(t *testing.T) {
	s := newTestStore(t, newMem(t))
	_, err := s.create([]Binding{allow(ResourceTopic, "t", PatternLiteral, "User:a", OpWrite),
		allow(ResourceTopic, "t", PatternLiteral, "User:a", OpAlterConfigs)})
	require.NoError(t, err)
	a := newAuthorizer(s, Config{})
	require.Equal(t, []Operation{OpWrite, OpDescribe, OpDescribeConfigs, OpAlterConfigs},
		a.AuthorizedOperations("User:a", "h", Resource{ResourceTopic, "t"}))
	require.Empty(t, a.AuthorizedOperations("User:b", "h", Resource{ResourceTopic, "t"}))
}

// TestValidate checks the bindings Kafka refuses, with its messages.
func TestValidate(t *testing.T) {
	ok := allow(ResourceTopic, "t", PatternLiteral, "User:a", OpRead)
	with := func(f func(*Binding)) Binding { b := ok; f(&b); return b }
	cases := []struct {
		b    Binding
		want string // "" for valid
	}{
		{ok, ""},
		{with(func(b *Binding) { b.PatternType = PatternPrefixed }), ""},
		{with(func(b *Binding) { b.Principal = "User:" }), ""},
		{with(func(b *Binding) { b.Principal = "Group:x" }), ""},
		{with(func(b *Binding) { b.Host = "192.168.0.0/16" }), ""},
		{with(func(b *Binding) { b.ResourceType = ResourceCluster; b.ResourceName = ClusterName }), ""},
		{with(func(b *Binding) { b.ResourceType = ResourceCluster }), "The only valid name for the CLUSTER resource is kafka-cluster"},
		{with(func(b *Binding) { b.ResourceName = "" }), "Invalid empty resource name"},
		{with(func(b *Binding) { b.ResourceType = ResourceAny }), "Invalid resourceType ANY"},
		{with(func(b *Binding) { b.ResourceType = 42 }), "Invalid resourceType UNKNOWN"},
		{with(func(b *Binding) { b.PatternType = PatternMatch }), "Invalid patternType MATCH"},
		{with(func(b *Binding) { b.PatternType = PatternAny }), "Invalid patternType ANY"},
		{with(func(b *Binding) { b.Operation = OpAny }), "Invalid operation ANY"},
		{with(func(b *Binding) { b.Operation = OpUnknown }), "Invalid operation UNKNOWN"},
		{with(func(b *Binding) { b.Permission = PermissionAny }), "Invalid permissionType ANY"},
		{with(func(b *Binding) { b.Principal = "alice" }), "Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)"},
		{with(func(b *Binding) { b.Host = "" }), "Host pattern cannot be null or empty"},
		{with(func(b *Binding) { b.Host = "10.0.0.0/99" }), "Invalid CIDR notation '10.0.0.0/99'"},
	}
	for _, c := range cases {
		err := c.b.Validate()
		if c.want == "" {
			require.NoError(t, err, "%v", c.b)
			continue
		}
		require.ErrorIs(t, err, ErrInvalid, "%v", c.b)
		require.Contains(t, err.Error(), c.want)
	}
}

func TestFilterMatches(t *testing.T) {
	lit := allow(ResourceTopic, "orders", PatternLiteral, "User:a", OpRead)
	pre := allow(ResourceTopic, "ord", PatternPrefixed, "User:a", OpRead)
	wild := allow(ResourceTopic, "*", PatternLiteral, "User:a", OpRead)
	grp := allow(ResourceGroup, "orders", PatternLiteral, "User:a", OpRead)
	name := func(s string) *string { return &s }
	f := func(rt ResourceType, n *string, pt PatternType) Filter {
		return Filter{ResourceType: rt, ResourceName: n, PatternType: pt, Operation: OpAny, Permission: PermissionAny}
	}
	all := []Binding{lit, pre, wild, grp}
	cases := []struct {
		f    Filter
		want []Binding
	}{
		{FilterAll, all},
		{f(ResourceTopic, nil, PatternAny), []Binding{lit, pre, wild}},
		{f(ResourceAny, name("orders"), PatternAny), []Binding{lit, grp}},
		{f(ResourceTopic, name("orders"), PatternLiteral), []Binding{lit}},
		{f(ResourceTopic, name("ord"), PatternPrefixed), []Binding{pre}},
		{f(ResourceTopic, name("orders"), PatternMatch), []Binding{lit, pre, wild}},
		{f(ResourceTopic, name("x"), PatternMatch), []Binding{wild}},
		{f(ResourceTopic, nil, PatternPrefixed), []Binding{pre}},
		{Filter{ResourceType: ResourceAny, PatternType: PatternAny, Principal: name("User:b"), Operation: OpAny, Permission: PermissionAny}, nil},
		{Filter{ResourceType: ResourceAny, PatternType: PatternAny, Operation: OpWrite, Permission: PermissionAny}, nil},
		{Filter{ResourceType: ResourceAny, PatternType: PatternAny, Operation: OpAny, Permission: Deny}, nil},
		{Filter{ResourceType: ResourceAny, PatternType: PatternAny, Host: name("*"), Operation: OpRead, Permission: Allow}, all},
	}
	for i, c := range cases {
		var got []Binding
		for _, b := range all {
			if c.f.Matches(b) {
				got = append(got, b)
			}
		}
		require.Equal(t, c.want, got, "case %d", i)
	}
}

// TestCreateDescribeDelete runs the three verbs through Open on a Dir and
// checks that the ACLs outlive it.
func TestCreateDescribeDelete(t *testing.T) {
	ctx := context.Background()
	cfg := log.DefaultConfig()
	mem := vfs.NewMem()
	cfg.FS = mem
	d, err := log.Open(ctx, testDir, cfg)
	require.NoError(t, err)
	a, err := Open(d, Config{})
	require.NoError(t, err)
	lit := allow(ResourceTopic, "orders", PatternLiteral, "User:a", OpRead)
	pre := allow(ResourceTopic, "ord", PatternPrefixed, "User:a", OpWrite)
	bad := allow(ResourceTopic, "", PatternLiteral, "User:a", OpRead)
	errs, err := a.CreateAcls(ctx, []Binding{lit, pre, bad, lit})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.ErrorIs(t, errs[2], ErrInvalid)
	require.NoError(t, errs[3])
	require.Equal(t, []Binding{pre, lit}, a.DescribeAcls(FilterAll))
	// A second Authorizer of the Dir shares the ACLs.
	b, err := Open(d, Config{SuperUsers: []string{"User:root"}})
	require.NoError(t, err)
	require.Equal(t, 2, b.Count())
	require.True(t, b.Authorize("User:a", "h", OpDescribe, Resource{ResourceTopic, "orders"}))
	require.NoError(t, d.Close())

	d, err = log.Open(ctx, testDir, cfg)
	require.NoError(t, err)
	defer d.Close()
	a, err = Open(d, Config{})
	require.NoError(t, err)
	require.Equal(t, []Binding{pre, lit}, a.DescribeAcls(FilterAll))
	res, err := a.DeleteAcls(ctx, []Filter{
		{ResourceType: ResourceTopic, PatternType: PatternPrefixed, Operation: OpAny, Permission: PermissionAny},
		{ResourceType: ResourceUnknown, PatternType: PatternAny, Operation: OpAny, Permission: PermissionAny},
		{ResourceType: ResourceAny, PatternType: PatternAny, Operation: OpWrite, Permission: PermissionAny},
	})
	require.NoError(t, err)
	require.Equal(t, []Binding{pre}, res[0].Deleted)
	require.ErrorIs(t, res[1].Err, ErrInvalid)
	require.Equal(t, "acl: Unknown patternFilter.", res[1].Err.Error())
	require.Equal(t, []Binding{pre}, res[2].Deleted, "a binding two filters match is reported by both")
	require.Equal(t, []Binding{lit}, a.DescribeAcls(FilterAll))
}

// TestBatchBounds: more than 10000 new ACLs in one creation, or 10000
// matched by one deletion, are refused whole, as Kafka refuses them.
func TestBatchBounds(t *testing.T) {
	s := newTestStore(t, newMem(t))
	many := make([]Binding, maxBatch+1)
	for i := range many {
		many[i] = allow(ResourceTopic, "t"+strings.Repeat("x", i%50)+string(rune('a'+i%26))+strconv.Itoa(i), PatternLiteral, "User:a", OpRead)
	}
	_, err := s.create(many)
	require.ErrorIs(t, err, ErrBatchTooLarge)
	require.Empty(t, s.describe(FilterAll))
	_, err = s.create(many[:maxBatch])
	require.NoError(t, err)
	_, err = s.create(many[maxBatch:])
	require.NoError(t, err)
	_, err = s.delete([]Filter{FilterAll})
	require.ErrorIs(t, err, ErrInvalid)
	require.Contains(t, err.Error(), "Cannot remove more than 10000 acls in a single delete operation.")
	require.Len(t, s.describe(FilterAll), maxBatch+1)
	// The store's own bound.
	s.maxBytes = 1 << 10
	_, err = s.create([]Binding{allow(ResourceTopic, "another", PatternLiteral, "User:a", OpRead)})
	require.ErrorIs(t, err, ErrStoreFull)
	require.Len(t, s.describe(FilterAll), maxBatch+1)
}

func TestStoreCorrupt(t *testing.T) {
	cases := map[string]string{
		"not json":      "{",
		"no version":    `{"acls": []}`,
		"version 2":     `{"version": 2, "acls": []}`,
		"unknown field": `{"version": 1, "acls": [], "x": 1}`,
		"unknown name":  `{"version": 1, "acls": [{"resourceType": "TOPIX", "resourceName": "t", "patternType": "LITERAL", "principal": "User:a", "host": "*", "operation": "READ", "permissionType": "ALLOW"}]}`,
		"invalid":       `{"version": 1, "acls": [{"resourceType": "TOPIC", "resourceName": "t", "patternType": "MATCH", "principal": "User:a", "host": "*", "operation": "READ", "permissionType": "ALLOW"}]}`,
		"twice": `{"version": 1, "acls": [{"resourceType": "TOPIC", "resourceName": "t", "patternType": "LITERAL", "principal": "User:a", "host": "*", "operation": "READ", "permissionType": "ALLOW"},
			{"resourceType": "TOPIC", "resourceName": "t", "patternType": "LITERAL", "principal": "User:a", "host": "*", "operation": "READ", "permissionType": "ALLOW"}]}`,
		"trailing": `{"version": 1, "acls": []} {}`,
	}
	for name, data := range cases {
		mem := newMem(t)
		f, err := mem.Create(filepath.Join(testDir, storeFile))
		require.NoError(t, err)
		_, err = f.Write([]byte(data))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		_, err = openStore(mem, testDir)
		require.ErrorIs(t, err, ErrCorruptStore, name)
		var ce *CorruptStoreError
		require.True(t, errors.As(err, &ce), name)
		require.Equal(t, filepath.Join(testDir, storeFile), ce.File)
	}
}

// TestStoreCrash changes the ACLs, crashing (a CrashClone) at every
// filesystem operation: each crash leaves the ACLs before the change or
// after it, never a mix, and once a change returned, never before it. A
// failed write leaves the old ACLs.
func TestStoreCrash(t *testing.T) {
	mem := newMem(t)
	ffs := vfs.NewFaultFS(mem)
	s := newTestStore(t, ffs)
	var crashes []*vfs.MemFS
	ffs.OnOp(func(vfs.Op, string) { crashes = append(crashes, mem.CrashClone()) })
	a := allow(ResourceTopic, "a", PatternLiteral, "User:x", OpRead)
	b := allow(ResourceTopic, "b", PatternPrefixed, "User:x", OpWrite)
	c := deny(allow(ResourceGroup, "g", PatternLiteral, "User:*", OpAll))
	steps := []func() error{
		func() error { _, err := s.create([]Binding{a, b}); return err },
		func() error { _, err := s.create([]Binding{c}); return err },
		func() error {
			_, err := s.delete([]Filter{{ResourceType: ResourceTopic, PatternType: PatternAny, Operation: OpAny, Permission: PermissionAny}})
			return err
		},
	}
	before := []Binding(nil)
	for i, step := range steps {
		crashes = nil
		require.NoError(t, step())
		after := s.describe(FilterAll)
		require.NotEmpty(t, crashes)
		sawAfter := false
		for j, crashed := range crashes {
			got, err := loadStore(crashed, testDir)
			require.NoError(t, err, "step %d crash %d", i, j)
			got = newIndex(got).bindings
			switch {
			case slices.Equal(got, before):
				require.False(t, sawAfter, "step %d crash %d went back", i, j)
			case slices.Equal(got, after):
				sawAfter = true
			default:
				t.Fatalf("step %d crash %d: %v is neither %v nor %v", i, j, got, before, after)
			}
		}
		got, err := loadStore(mem.CrashClone(), testDir)
		require.NoError(t, err)
		require.True(t, slices.Equal(newIndex(got).bindings, after), "step %d: the change is durable once it returned", i)
		before = after
	}
	// A failed write: the ACLs are the old ones, in memory and on disk.
	ffs.Inject(vfs.EIO(vfs.OpSync, storeFile, 1))
	_, err := s.create([]Binding{a})
	require.Error(t, err)
	require.True(t, slices.Equal(s.describe(FilterAll), before))
	got, err := loadStore(mem.CrashClone(), testDir)
	require.NoError(t, err)
	require.True(t, slices.Equal(newIndex(got).bindings, before))
}
