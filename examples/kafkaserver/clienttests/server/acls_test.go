package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// withACLs serves two SASL/PLAIN users, alice and bob, and a super user,
// admin, with Kafka's StandardAuthorizer on.
func withACLs(c *server.Config) {
	c.SASLMechanisms = []string{server.MechanismPlain}
	c.Users = map[string]string{"alice": "alice-secret", "bob": "bob-secret", "admin": "admin-secret"}
	c.AuthorizerClassName = server.StandardAuthorizer
	c.SuperUsers = []string{"User:admin"}
}

func userClient(t *testing.T, addr, user string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return client(t, addr, append([]kgo.Opt{kgo.SASL(plain.Auth{User: user, Pass: user + "-secret"}.AsMechanism()),
		kgo.RequestRetries(0), kgo.RetryTimeout(time.Second)}, opts...)...)
}

// TestACLsWhoMayDoWhat checks a table of who may do what, request by
// request: two users with prefixed and literal ACLs, a DENY over an
// ALLOW, a super user; produce, fetch, metadata, a group's join and
// commit, a transactional id.
func TestACLsWhoMayDoWhat(t *testing.T) {
	srv := servertest.StartInMemory(t, withACLs)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := userClient(t, srv.Addr, "admin")
	adm := kadm.NewClient(admin)
	for _, topic := range []string{"alice-orders", "alice-secret", "shared", "other"} {
		createTopic(t, admin, topic, 1)
	}
	b := func() *kadm.ACLBuilder { return kadm.NewACLs().ResourcePatternType(kadm.ACLPatternLiteral) }
	for _, acl := range []*kadm.ACLBuilder{
		b().Allow("User:alice").Topics("alice-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpRead, kadm.OpWrite),
		b().Deny("User:alice").Topics("alice-secret").Operations(kadm.OpWrite),
		b().Allow("User:alice").Topics("shared").Operations(kadm.OpWrite),
		b().Allow("User:bob").Topics("shared").Operations(kadm.OpRead),
		b().Allow("User:alice").Groups("alice-group").Operations(kadm.OpRead),
		b().Allow("User:bob").Groups("bob-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpRead),
		b().Allow("User:alice").TransactionalIDs("alice-txn").Operations(kadm.OpWrite),
	} {
		res, err := adm.CreateACLs(ctx, acl)
		require.NoError(t, err)
		for _, r := range res {
			require.NoError(t, r.Err)
		}
	}
	require.Equal(t, 8, countACLs(t, admin))

	alice, bob := userClient(t, srv.Addr, "alice"), userClient(t, srv.Addr, "bob")
	adminCl := admin
	coordinatorReady(t, admin, "alice-group", 0)
	coordinatorReady(t, admin, "alice-txn", 1)
	ids := map[string][16]byte{}
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, admin)
	require.NoError(t, err)
	for _, mt := range meta.Topics {
		ids[*mt.Topic] = mt.TopicID
	}
	produce := func(cl *kgo.Client, topic string) error {
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = -1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic, rt.TopicID = topic, ids[topic] // v13 names topics by id
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = oneRecordBatch(t, 1, 16)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	}
	fetch := func(cl *kgo.Client, topic string) error {
		req := kmsg.NewPtrFetchRequest()
		req.MaxWaitMillis, req.MaxBytes = 10, 1<<20
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, ids[topic]
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		require.Len(t, resp.Topics, 1)
		return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	}
	join := func(cl *kgo.Client, group string) error {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = group, 10000, 10000, "consumer"
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		req.Protocols = append(req.Protocols, p)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err // the coordinator's lookup, refused the same (DESCRIBE on the group)
		}
		if resp.ErrorCode == kerr.MemberIDRequired.Code {
			return nil // authorized: the join went on to the coordinator
		}
		return kerr.ErrorForCode(resp.ErrorCode)
	}
	commit := func(cl *kgo.Client, group, topic string) error {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation = group, -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		// v10 (what kgo sends) names the topic by id.
		rt.Topic, rt.TopicID = topic, topicIDOf(t, adminCl, topic)
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Offset = 1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	}
	initTxn := func(cl *kgo.Client, id string) error {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = &id, 10000
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		return kerr.ErrorForCode(resp.ErrorCode)
	}
	metadataTopics := func(cl *kgo.Client) []string {
		req := kmsg.NewPtrMetadataRequest()
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		var names []string
		for _, t := range resp.Topics {
			names = append(names, *t.Topic)
		}
		return names
	}

	for _, c := range []struct {
		who  string
		do   func() error
		want error
	}{
		{"alice writes alice-orders (prefixed allow)", func() error { return produce(alice, "alice-orders") }, nil},
		{"alice writes alice-secret (deny over the prefixed allow)", func() error { return produce(alice, "alice-secret") }, kerr.TopicAuthorizationFailed},
		{"alice writes shared (literal allow)", func() error { return produce(alice, "shared") }, nil},
		{"alice writes other (no ACL)", func() error { return produce(alice, "other") }, kerr.TopicAuthorizationFailed},
		{"bob writes shared (READ only)", func() error { return produce(bob, "shared") }, kerr.TopicAuthorizationFailed},
		{"bob writes alice-orders", func() error { return produce(bob, "alice-orders") }, kerr.TopicAuthorizationFailed},
		{"admin writes alice-secret (super user)", func() error { return produce(adminCl, "alice-secret") }, nil},
		{"alice reads alice-secret (the deny is of WRITE)", func() error { return fetch(alice, "alice-secret") }, nil},
		{"alice reads shared (WRITE is not READ)", func() error { return fetch(alice, "shared") }, kerr.TopicAuthorizationFailed},
		{"bob reads shared", func() error { return fetch(bob, "shared") }, nil},
		{"bob reads alice-orders", func() error { return fetch(bob, "alice-orders") }, kerr.TopicAuthorizationFailed},
		{"alice joins alice-group", func() error { return join(alice, "alice-group") }, nil},
		{"bob joins alice-group", func() error { return join(bob, "alice-group") }, kerr.GroupAuthorizationFailed},
		{"bob joins bob-group (prefixed)", func() error { return join(bob, "bob-group") }, nil},
		{"alice commits alice-orders in alice-group", func() error { return commit(alice, "alice-group", "alice-orders") }, nil},
		{"alice commits other in alice-group", func() error { return commit(alice, "alice-group", "other") }, kerr.TopicAuthorizationFailed},
		{"bob commits shared in alice-group", func() error { return commit(bob, "alice-group", "shared") }, kerr.GroupAuthorizationFailed},
		{"bob commits shared in bob-x", func() error { return commit(bob, "bob-x", "shared") }, nil},
		{"alice inits alice-txn", func() error { return initTxn(alice, "alice-txn") }, nil},
		{"bob inits alice-txn", func() error { return initTxn(bob, "alice-txn") }, kerr.TransactionalIDAuthorizationFailed},
		{"admin inits bob-txn (super user)", func() error { return initTxn(adminCl, "bob-txn") }, nil},
	} {
		err := c.do()
		if c.want == nil {
			require.NoError(t, err, c.who)
		} else {
			require.ErrorIs(t, err, c.want, c.who)
		}
	}
	// Metadata hides what a principal may not describe.
	require.ElementsMatch(t, []string{"alice-orders", "alice-secret", "shared"}, metadataTopics(alice))
	require.ElementsMatch(t, []string{"shared"}, metadataTopics(bob))
	require.Contains(t, metadataTopics(adminCl), "other")
	// Only a principal with ALTER on the cluster manages ACLs.
	res, err := kadm.NewClient(alice).CreateACLs(ctx, b().Allow("User:alice").Topics("other").Operations(kadm.OpAll))
	require.NoError(t, err)
	require.ErrorIs(t, res[0].Err, kerr.ClusterAuthorizationFailed)

	// The ACLs are the directory's: they outlive a restart.
	srv.Restart(t)
	alice = userClient(t, srv.Addr, "alice")
	require.ErrorIs(t, produce(alice, "alice-secret"), kerr.TopicAuthorizationFailed)
	require.NoError(t, produce(alice, "alice-orders"))
}

// TestACLsOff: without an authorizer every request is served and the ACL
// APIs answer SECURITY_DISABLED, as Kafka's do.
func TestACLsOff(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	adm := kadm.NewClient(client(t, srv.Addr))
	res, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:a").Topics("t").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	require.NoError(t, err)
	require.ErrorIs(t, res[0].Err, kerr.SecurityDisabled)
	resp, err := describeAllACLs().RequestWith(ctx, client(t, srv.Addr))
	require.NoError(t, err)
	require.Equal(t, kerr.SecurityDisabled.Code, resp.ErrorCode)
}

// TestACLsInvalid: bindings Kafka refuses get its INVALID_REQUEST and
// message, the valid ones of the same request are created; a request
// with an UNKNOWN element closes the connection.
func TestACLsInvalid(t *testing.T) {
	srv := servertest.StartInMemory(t, withACLs)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin := userClient(t, srv.Addr, "admin")
	req := kmsg.NewPtrCreateACLsRequest()
	add := func(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, principal, host string) {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType, c.Principal, c.Host = rt, name, pt, principal, host
		c.Operation, c.PermissionType = kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
		req.Creations = append(req.Creations, c)
	}
	add(kmsg.ACLResourceTypeTopic, "ok", kmsg.ACLResourcePatternTypeLiteral, "User:a", "*")
	add(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeMatch, "User:a", "*")
	add(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, "alice", "*")
	add(kmsg.ACLResourceTypeCluster, "c", kmsg.ACLResourcePatternTypeLiteral, "User:a", "*")
	add(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, "User:a", "10.0.0.0/77")
	resp, err := req.RequestWith(ctx, admin)
	require.NoError(t, err)
	require.Len(t, resp.Results, 5)
	require.Zero(t, resp.Results[0].ErrorCode)
	want := []string{"Invalid patternType MATCH",
		"Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)",
		"The only valid name for the CLUSTER resource is kafka-cluster", "Invalid CIDR notation '10.0.0.0/77'"}
	for i, w := range want {
		r := resp.Results[i+1]
		require.Equal(t, kerr.InvalidRequest.Code, r.ErrorCode, w)
		require.Contains(t, *r.ErrorMessage, w)
	}
	require.Equal(t, 1, countACLs(t, admin))

	// Every API has its rule: all are advertised with authorization on.
	versions, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, admin)
	require.NoError(t, err)
	keys := map[int16]bool{}
	for _, k := range versions.ApiKeys {
		keys[k.ApiKey] = true
	}
	require.True(t, keys[kmsg.CreateACLs.Int16()])
	require.True(t, keys[kmsg.Produce.Int16()])
	require.True(t, keys[kmsg.ShareFetch.Int16()])
	require.True(t, keys[kmsg.DescribeConfigs.Int16()])

	// An UNKNOWN resource type: the connection is closed, as Kafka
	// closes it on a request it cannot parse.
	bad := kmsg.NewPtrDescribeACLsRequest()
	bad.ResourceType, bad.ResourcePatternType, bad.Operation, bad.PermissionType = 42, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	_, err = bad.RequestWith(ctx, admin)
	require.Error(t, err)
}

func describeAllACLs() *kmsg.DescribeACLsRequest {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	return req
}

// countACLs counts the ACLs DescribeAcls lists.
func countACLs(t *testing.T, cl *kgo.Client) int {
	t.Helper()
	resp, err := describeAllACLs().RequestWith(context.Background(), cl)
	require.NoError(t, err)
	require.Zero(t, resp.ErrorCode)
	n := 0
	for _, r := range resp.Resources {
		n += len(r.ACLs)
	}
	return n
}

// TestACLsAdminAndDescribe: the rules of the admin and describe requests:
// CreateTopics and DeleteTopics per topic, DescribeGroups per group with
// its authorized operations, ListGroups filtered, OffsetFetch per group,
// Metadata's topic and DescribeCluster's cluster authorized operations.
func TestACLsAdminAndDescribe(t *testing.T) {
	srv := servertest.StartInMemory(t, withACLs)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := userClient(t, srv.Addr, "admin")
	createTopic(t, admin, "shared", 1)
	adm := kadm.NewClient(admin)
	b := func() *kadm.ACLBuilder { return kadm.NewACLs().ResourcePatternType(kadm.ACLPatternLiteral) }
	for _, a := range []*kadm.ACLBuilder{
		b().Allow("User:bob").Topics("shared").Operations(kadm.OpRead),
		b().Allow("User:bob").Topics("bob-new").Operations(kadm.OpCreate),
		b().Allow("User:bob").Groups("bob-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpRead, kadm.OpDelete),
	} {
		res, err := adm.CreateACLs(ctx, a)
		require.NoError(t, err)
		for _, r := range res {
			require.NoError(t, r.Err)
		}
	}
	bob := userClient(t, srv.Addr, "bob")
	coordinatorReady(t, admin, "bob-g", 0)
	// Groups to describe and list: each joined by admin.
	for _, g := range []string{"bob-g", "alice-g"} {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = g, 10000, 10000, "consumer"
		req.MemberID = ""
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		req.Protocols = append(req.Protocols, p)
		_, err := req.RequestWith(ctx, admin)
		require.NoError(t, err)
	}

	ct := kmsg.NewPtrCreateTopicsRequest()
	for _, name := range []string{"bob-new", "bob-other"} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
		ct.Topics = append(ct.Topics, rt)
	}
	ctResp, err := ct.RequestWith(ctx, bob)
	require.NoError(t, err)
	codes := map[string]int16{}
	for _, rt := range ctResp.Topics {
		codes[rt.Topic] = rt.ErrorCode
		if rt.Topic == "bob-new" {
			require.Equal(t, kerr.TopicAuthorizationFailed.Code, rt.ConfigErrorCode, "created, but its configs not described to bob")
		}
	}
	require.Equal(t, map[string]int16{"bob-new": 0, "bob-other": kerr.TopicAuthorizationFailed.Code}, codes)

	dt := kmsg.NewPtrDeleteTopicsRequest()
	dtt := kmsg.NewDeleteTopicsRequestTopic()
	name := "shared"
	dtt.Topic = &name
	dt.Topics, dt.TopicNames = append(dt.Topics, dtt), []string{name}
	dtResp, err := dt.RequestWith(ctx, bob)
	require.NoError(t, err)
	require.Equal(t, kerr.TopicAuthorizationFailed.Code, dtResp.Topics[0].ErrorCode)

	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups, dg.IncludeAuthorizedOperations = []string{"alice-g", "bob-g"}, true
	// Straight to the broker: franz-go would first look up each group's
	// coordinator, which alice-g's DESCRIBE refuses too.
	_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, bob)
	require.NoError(t, err)
	broker := bob.DiscoveredBrokers()[0]
	r, err := broker.Request(ctx, dg)
	require.NoError(t, err)
	dgResp := r.(*kmsg.DescribeGroupsResponse)
	require.Len(t, dgResp.Groups, 2)
	require.Equal(t, "alice-g", dgResp.Groups[0].Group)
	require.Equal(t, kerr.GroupAuthorizationFailed.Code, dgResp.Groups[0].ErrorCode)
	require.Equal(t, "bob-g", dgResp.Groups[1].Group)
	require.Zero(t, dgResp.Groups[1].ErrorCode)
	// READ, DESCRIBE (implied) and DELETE: bits 3, 8 and 6.
	require.Equal(t, int32(1<<3|1<<8|1<<6), dgResp.Groups[1].AuthorizedOperations)

	lg, err := kmsg.NewPtrListGroupsRequest().RequestWith(ctx, bob)
	require.NoError(t, err)
	var listed []string
	for _, g := range lg.Groups {
		listed = append(listed, g.Group)
	}
	require.Equal(t, []string{"bob-g"}, listed)
	lg, err = kmsg.NewPtrListGroupsRequest().RequestWith(ctx, admin)
	require.NoError(t, err)
	require.Len(t, lg.Groups, 2, "a super user lists every group")

	of := kmsg.NewPtrOffsetFetchRequest()
	for _, g := range []string{"alice-g", "bob-g"} {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g
		of.Groups = append(of.Groups, rg)
	}
	r, err = broker.Request(ctx, of)
	require.NoError(t, err)
	ofResp := r.(*kmsg.OffsetFetchResponse)
	require.Len(t, ofResp.Groups, 2)
	require.Equal(t, kerr.GroupAuthorizationFailed.Code, ofResp.Groups[0].ErrorCode)
	require.Zero(t, ofResp.Groups[1].ErrorCode)

	md := kmsg.NewPtrMetadataRequest()
	mdt := kmsg.NewMetadataRequestTopic()
	mdt.Topic = &name
	md.Topics, md.IncludeTopicAuthorizedOperations = append(md.Topics, mdt), true
	mdResp, err := md.RequestWith(ctx, bob)
	require.NoError(t, err)
	require.Equal(t, int32(1<<3|1<<8), mdResp.Topics[0].AuthorizedOperations, "READ and DESCRIBE")

	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.IncludeClusterAuthorizedOperations = true
	dcResp, err := dc.RequestWith(ctx, bob)
	require.NoError(t, err)
	require.Zero(t, dcResp.ClusterAuthorizedOperations, "no DESCRIBE on the cluster")
	dcResp, err = dc.RequestWith(ctx, admin)
	require.NoError(t, err)
	require.Equal(t, int32(1<<5|1<<9|1<<10|1<<11|1<<12|1<<7|1<<8), dcResp.ClusterAuthorizedOperations, "a super user: every cluster operation")
}

// TestACLsGroupsSharesConfigs: the rules of the KIP-848 and share group
// APIs, the transaction descriptions and the configuration APIs, as
// Kafka's KafkaApis checks them: READ on the group and DESCRIBE on the
// subscribed topics for heartbeats, DESCRIBE on the group to describe it,
// READ on the group and the topic to fetch and acknowledge shares,
// DESCRIBE_CONFIGS and ALTER_CONFIGS on the resource.
func TestACLsGroupsSharesConfigs(t *testing.T) {
	srv := servertest.StartInMemory(t, withACLs)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := userClient(t, srv.Addr, "admin")
	adm := kadm.NewClient(admin)
	createTopic(t, admin, "jobs", 1)
	createTopic(t, admin, "secret", 1)
	b := func() *kadm.ACLBuilder { return kadm.NewACLs().ResourcePatternType(kadm.ACLPatternLiteral) }
	for _, a := range []*kadm.ACLBuilder{
		b().Allow("User:alice").Groups("workers").Operations(kadm.OpRead, kadm.OpDescribe),
		b().Allow("User:alice").Topics("jobs").Operations(kadm.OpRead, kadm.OpDescribeConfigs),
		b().Allow("User:bob").Topics("jobs").Operations(kadm.OpRead),
	} {
		res, err := adm.CreateACLs(ctx, a)
		require.NoError(t, err)
		for _, r := range res {
			require.NoError(t, r.Err)
		}
	}
	alice, bob := userClient(t, srv.Addr, "alice"), userClient(t, srv.Addr, "bob")
	coordinatorReady(t, admin, "workers", 0)
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, admin)
	require.NoError(t, err)
	ids := map[string][16]byte{}
	for _, mt := range meta.Topics {
		ids[*mt.Topic] = mt.TopicID
	}

	// A heartbeat's error: the response's, or FindCoordinator's (which
	// needs DESCRIBE on the group) as the client reports it.
	beat := func(cl *kgo.Client, topics ...string) error {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.SubscribedTopicNames = "workers", "m-"+topics[0], topics
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		return kerr.ErrorForCode(resp.ErrorCode)
	}
	require.NoError(t, beat(alice, "jobs"))
	require.ErrorIs(t, beat(alice, "secret"), kerr.TopicAuthorizationFailed, "no DESCRIBE on a subscribed topic")
	require.ErrorIs(t, beat(bob, "jobs"), kerr.GroupAuthorizationFailed, "nothing on the group")
	_, err = adm.CreateACLs(ctx, b().Allow("User:bob").Groups("workers").Operations(kadm.OpDescribe))
	require.NoError(t, err)
	require.ErrorIs(t, beat(bob, "jobs"), kerr.GroupAuthorizationFailed, "DESCRIBE finds the coordinator; the heartbeat needs READ")
	cgb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	cgb.Group, cgb.MemberID, cgb.RebalanceTimeoutMillis, cgb.SubscribedTopicNames = "workers", "c1", 10000, []string{"jobs"}
	cgr, err := cgb.RequestWith(ctx, bob)
	if err == nil {
		err = kerr.ErrorForCode(cgr.ErrorCode)
	}
	require.ErrorIs(t, err, kerr.GroupAuthorizationFailed, "a KIP-848 heartbeat needs READ on the group")

	describe := func(group string) error {
		req := kmsg.NewPtrShareGroupDescribeRequest()
		req.GroupIDs = []string{group}
		resp, err := req.RequestWith(ctx, alice)
		if err != nil {
			return err // FindCoordinator's, which needs DESCRIBE too
		}
		return kerr.ErrorForCode(resp.Groups[0].ErrorCode)
	}
	require.NoError(t, describe("workers"))
	require.ErrorIs(t, describe("others"), kerr.GroupAuthorizationFailed)

	fetch := func(cl *kgo.Client, member string, topics ...string) (int16, map[string]int16) {
		req := kmsg.NewPtrShareFetchRequest()
		req.GroupID, req.MemberID, req.MaxWaitMillis, req.MaxBytes, req.MaxRecords = kmsg.StringPtr("workers"), kmsg.StringPtr(member), 10, 1<<20, 10
		for _, name := range topics {
			rt := kmsg.NewShareFetchRequestTopic()
			rt.TopicID = ids[name]
			rp := kmsg.NewShareFetchRequestTopicPartition()
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		byTopic := map[string]int16{}
		for _, rt := range resp.Topics {
			for name, id := range ids {
				if id == rt.TopicID {
					byTopic[name] = rt.Partitions[0].ErrorCode
				}
			}
		}
		return resp.ErrorCode, byTopic
	}
	code, parts := fetch(alice, "m-jobs", "jobs", "secret")
	require.Equal(t, int16(0), code)
	require.Equal(t, kerr.TopicAuthorizationFailed.Code, parts["secret"])
	require.Equal(t, int16(0), parts["jobs"], "jobs is read (absent while it has no records)")
	code, _ = fetch(bob, "m-bob", "jobs")
	require.Equal(t, kerr.GroupAuthorizationFailed.Code, code)

	cfg := kmsg.NewPtrDescribeConfigsRequest()
	for _, r := range []struct {
		t    kmsg.ConfigResourceType
		name string
	}{{kmsg.ConfigResourceTypeTopic, "jobs"}, {kmsg.ConfigResourceTypeTopic, "secret"}, {kmsg.ConfigResourceTypeGroupConfig, "workers"}} {
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = r.t, r.name
		cfg.Resources = append(cfg.Resources, rr)
	}
	cr, err := cfg.RequestWith(ctx, alice)
	require.NoError(t, err)
	got := map[string]int16{}
	for _, r := range cr.Resources {
		got[r.ResourceName] = r.ErrorCode
	}
	require.Equal(t, map[string]int16{"jobs": 0, "secret": kerr.TopicAuthorizationFailed.Code, "workers": kerr.GroupAuthorizationFailed.Code}, got)
	inc := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ir := kmsg.NewIncrementalAlterConfigsRequestResource()
	ir.ResourceType, ir.ResourceName = kmsg.ConfigResourceTypeTopic, "jobs"
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = "retention.ms", kmsg.StringPtr("1000")
	ir.Configs = append(ir.Configs, c)
	inc.Resources = append(inc.Resources, ir)
	irr, err := inc.RequestWith(ctx, alice)
	require.NoError(t, err)
	require.Equal(t, kerr.TopicAuthorizationFailed.Code, irr.Resources[0].ErrorCode, "no ALTER_CONFIGS")

	dt := kmsg.NewPtrDescribeTransactionsRequest()
	dt.TransactionalIDs = []string{"nobodys"}
	dtr, err := dt.RequestWith(ctx, alice)
	if err == nil { // else FindCoordinator's refusal, which needs DESCRIBE too
		err = kerr.ErrorForCode(dtr.TransactionStates[0].ErrorCode)
	}
	require.ErrorIs(t, err, kerr.TransactionalIDAuthorizationFailed)
	dp := kmsg.NewPtrDescribeProducersRequest()
	for _, name := range []string{"jobs", "secret"} {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = name, []int32{0}
		dp.Topics = append(dp.Topics, rt)
	}
	r, err := alice.Broker(0).Request(ctx, dp) // straight to the broker: the client's sharding asks Metadata for "secret" first
	require.NoError(t, err)
	dpr := r.(*kmsg.DescribeProducersResponse)
	got = map[string]int16{}
	for _, rt := range dpr.Topics {
		got[rt.Topic] = rt.Partitions[0].ErrorCode
	}
	require.Equal(t, map[string]int16{"jobs": 0, "secret": kerr.TopicAuthorizationFailed.Code}, got)

	// The cluster's administration needs the cluster's operations.
	r, err = alice.Broker(0).Request(ctx, kmsg.NewPtrDescribeLogDirsRequest())
	require.NoError(t, err)
	require.Equal(t, kerr.ClusterAuthorizationFailed.Code, r.(*kmsg.DescribeLogDirsResponse).ErrorCode)
	el := kmsg.NewPtrElectLeadersRequest()
	r, err = alice.Broker(0).Request(ctx, el)
	require.NoError(t, err)
	require.Equal(t, kerr.ClusterAuthorizationFailed.Code, r.(*kmsg.ElectLeadersResponse).ErrorCode)
	dtp := kmsg.NewPtrDescribeTopicPartitionsRequest()
	for _, name := range []string{"jobs", "secret"} {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = name
		dtp.Topics = append(dtp.Topics, rt)
	}
	dtp.ResponsePartitionLimit = 100
	r, err = alice.Broker(0).Request(ctx, dtp)
	require.NoError(t, err)
	got = map[string]int16{}
	for _, rt := range r.(*kmsg.DescribeTopicPartitionsResponse).Topics {
		got[*rt.Topic] = rt.ErrorCode
	}
	require.Equal(t, map[string]int16{"jobs": 0, "secret": kerr.TopicAuthorizationFailed.Code}, got)
	r, err = admin.Broker(0).Request(ctx, kmsg.NewPtrDescribeLogDirsRequest())
	require.NoError(t, err)
	require.Equal(t, int16(0), r.(*kmsg.DescribeLogDirsResponse).ErrorCode, "the super user may")
	r, err = alice.Broker(0).Request(ctx, kmsg.NewPtrDescribeClientQuotasRequest())
	require.NoError(t, err)
	require.Equal(t, kerr.ClusterAuthorizationFailed.Code, r.(*kmsg.DescribeClientQuotasResponse).ErrorCode)
	scram := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	del := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	del.Name, del.Mechanism = "bob", 1
	scram.Deletions = append(scram.Deletions, del)
	r, err = alice.Broker(0).Request(ctx, scram)
	require.NoError(t, err)
	require.Equal(t, kerr.ClusterAuthorizationFailed.Code, r.(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode)

	// The controller's APIs: ALTER (reassignment) or DESCRIBE (listing
	// reassignments, the quorum) or DESCRIBE_CONFIGS (config resources)
	// on the cluster.
	apa := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	at := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	ap := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	ap.Replicas = []int32{0}
	at.Topic, at.Partitions = "jobs", []kmsg.AlterPartitionAssignmentsRequestTopicPartition{ap}
	apa.Topics = append(apa.Topics, at)
	r, err = alice.Broker(0).Request(ctx, apa)
	require.NoError(t, err)
	apr := r.(*kmsg.AlterPartitionAssignmentsResponse)
	require.Equal(t, kerr.ClusterAuthorizationFailed.Code, apr.ErrorCode)
	require.Equal(t, kerr.ClusterAuthorizationFailed.Code, apr.Topics[0].Partitions[0].ErrorCode)
	require.Equal(t, "Cluster authorization failed.", *apr.Topics[0].Partitions[0].ErrorMessage)
	r, err = alice.Broker(0).Request(ctx, kmsg.NewPtrListPartitionReassignmentsRequest())
	require.NoError(t, err)
	require.Equal(t, kerr.ClusterAuthorizationFailed.Code, r.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode)
	r, err = alice.Broker(0).Request(ctx, kmsg.NewPtrDescribeQuorumRequest())
	require.NoError(t, err)
	require.Equal(t, kerr.ClusterAuthorizationFailed.Code, r.(*kmsg.DescribeQuorumResponse).ErrorCode)
	r, err = alice.Broker(0).Request(ctx, kmsg.NewPtrListConfigResourcesRequest())
	require.NoError(t, err)
	require.Equal(t, kerr.ClusterAuthorizationFailed.Code, r.(*kmsg.ListConfigResourcesResponse).ErrorCode)
	r, err = admin.Broker(0).Request(ctx, kmsg.NewPtrListConfigResourcesRequest())
	require.NoError(t, err)
	require.Zero(t, r.(*kmsg.ListConfigResourcesResponse).ErrorCode, "the super user may")
}
