package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// versionedRequest sends req at version v over c, with the request header
// its flexibility asks for, and decodes the response at v. It fails t
// unless the response's bytes are exactly what kmsg encodes of what it
// decoded: the response has kmsg's shape at that version.
func versionedRequest(t *testing.T, c net.Conn, req kmsg.Request, v int16) kmsg.Response {
	t.Helper()
	req.SetVersion(v)
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(v))
	b = binary.BigEndian.AppendUint32(b, 7)
	b = binary.BigEndian.AppendUint16(b, 1)
	b = append(b, 'x')
	if req.IsFlexible() {
		b = append(b, 0) // no tagged fields
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	body, err := rawRequest(t, c, b)
	require.NoError(t, err, "%T v%d", req, v)
	if req.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		require.Equal(t, byte(0), body[0])
		body = body[1:]
	}
	resp := req.ResponseKind()
	resp.SetVersion(v)
	require.NoError(t, resp.ReadFrom(body), "%T v%d", resp, v)
	require.True(t, bytes.Equal(body, resp.AppendTo(nil)), "%T v%d: not kmsg's shape", resp, v)
	return resp
}

// TestAdminAPIsEveryVersion sends every version the server advertises of
// each API this file covers and of the configuration APIs; each response
// has kmsg's shape at its version, and the advertised ranges are Kafka
// 4.4's.
func TestAdminAPIsEveryVersion(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	cl := client(t, srv.Addr)
	createTopic(t, cl, "t", 2)
	c, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer c.Close()

	ranges := map[int16][2]int16{}
	for _, k := range server.SupportedAPIs() {
		ranges[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	// Kafka 4.4's ranges (ApiKeys of kafka-clients 4.4.0).
	for key, want := range map[kmsg.Key][2]int16{
		kmsg.ApiVersions: {0, 5}, kmsg.Metadata: {0, 13}, kmsg.DescribeConfigs: {1, 4}, kmsg.AlterConfigs: {0, 2},
		kmsg.IncrementalAlterConfigs: {0, 1}, kmsg.DescribeLogDirs: {1, 5}, kmsg.AlterReplicaLogDirs: {1, 2},
		kmsg.ElectLeaders: {0, 2}, kmsg.UpdateFeatures: {0, 2}, kmsg.DescribeTopicPartitions: {0, 0},
	} {
		require.Equal(t, want, ranges[key.Int16()], "%v", key)
	}

	topic := "t"
	reqs := []func() kmsg.Request{
		func() kmsg.Request { return kmsg.NewPtrApiVersionsRequest() },
		func() kmsg.Request {
			r := kmsg.NewPtrMetadataRequest()
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = &topic
			r.Topics = []kmsg.MetadataRequestTopic{mt}
			return r
		},
		func() kmsg.Request {
			r := kmsg.NewPtrDescribeConfigsRequest()
			for _, rr := range []struct {
				typ  kmsg.ConfigResourceType
				name string
			}{{kmsg.ConfigResourceTypeBroker, "0"}, {kmsg.ConfigResourceTypeTopic, "t"}} {
				res := kmsg.NewDescribeConfigsRequestResource()
				res.ResourceType, res.ResourceName = rr.typ, rr.name
				r.Resources = append(r.Resources, res)
			}
			r.IncludeSynonyms, r.IncludeDocumentation = true, true
			return r
		},
		func() kmsg.Request {
			r := kmsg.NewPtrIncrementalAlterConfigsRequest()
			res := kmsg.NewIncrementalAlterConfigsRequestResource()
			res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, ""
			res.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("log.retention.ms", kmsg.IncrementalAlterConfigOpSet, "3600000")}
			r.Resources, r.ValidateOnly = []kmsg.IncrementalAlterConfigsRequestResource{res}, true
			return r
		},
		func() kmsg.Request {
			r := kmsg.NewPtrAlterConfigsRequest()
			res := kmsg.NewAlterConfigsRequestResource()
			res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, "0"
			r.Resources, r.ValidateOnly = []kmsg.AlterConfigsRequestResource{res}, true
			return r
		},
		func() kmsg.Request { return kmsg.NewPtrDescribeLogDirsRequest() },
		func() kmsg.Request {
			r := kmsg.NewPtrAlterReplicaLogDirsRequest()
			d := kmsg.NewAlterReplicaLogDirsRequestDir()
			d.Dir = "/elsewhere"
			dt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
			dt.Topic, dt.Partitions = "t", []int32{0}
			d.Topics = []kmsg.AlterReplicaLogDirsRequestDirTopic{dt}
			r.Dirs = []kmsg.AlterReplicaLogDirsRequestDir{d}
			return r
		},
		func() kmsg.Request {
			r := kmsg.NewPtrElectLeadersRequest()
			et := kmsg.NewElectLeadersRequestTopic()
			et.Topic, et.Partitions = "t", []int32{0, 1}
			r.Topics = []kmsg.ElectLeadersRequestTopic{et}
			return r
		},
		func() kmsg.Request {
			r := kmsg.NewPtrUpdateFeaturesRequest()
			u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
			u.Feature, u.MaxVersionLevel, u.UpgradeType = "group.version", 1, 1
			r.FeatureUpdates, r.ValidateOnly = []kmsg.UpdateFeaturesRequestFeatureUpdate{u}, true
			return r
		},
		func() kmsg.Request { return kmsg.NewPtrDescribeTopicPartitionsRequest() },
	}
	for _, mk := range reqs {
		rg := ranges[mk().Key()]
		for v := rg[0]; v <= rg[1]; v++ {
			resp := versionedRequest(t, c, mk(), v)
			switch r := resp.(type) {
			case *kmsg.ApiVersionsResponse:
				require.Zero(t, r.ErrorCode)
				if v >= 3 {
					require.NotEmpty(t, r.FinalizedFeatures)
				}
			case *kmsg.MetadataResponse:
				require.Zero(t, r.ErrorCode)
				require.Len(t, r.Topics, 1)
			case *kmsg.DescribeConfigsResponse:
				require.Len(t, r.Resources, 2)
				for _, res := range r.Resources {
					require.Zero(t, res.ErrorCode)
					require.NotEmpty(t, res.Configs)
				}
			case *kmsg.IncrementalAlterConfigsResponse:
				require.Zero(t, r.Resources[0].ErrorCode)
			case *kmsg.AlterConfigsResponse:
				require.Zero(t, r.Resources[0].ErrorCode)
			case *kmsg.DescribeLogDirsResponse:
				require.Len(t, r.Dirs, 1)
				require.Len(t, r.Dirs[0].Topics, 1)
			case *kmsg.AlterReplicaLogDirsResponse:
				require.Equal(t, kerr.LogDirNotFound.Code, r.Topics[0].Partitions[0].ErrorCode)
			case *kmsg.ElectLeadersResponse:
				require.Len(t, r.Topics[0].Partitions, 2)
				require.Equal(t, kerr.ElectionNotNeeded.Code, r.Topics[0].Partitions[0].ErrorCode)
			case *kmsg.UpdateFeaturesResponse:
				require.Zero(t, r.ErrorCode)
			case *kmsg.DescribeTopicPartitionsResponse:
				require.Len(t, r.Topics, 1)
			}
		}
	}
}

// TestLogDirs: DescribeLogDirs lists the one directory (absolute path,
// disk space) with each partition's size and lag 0; AlterReplicaLogDirs
// to it is NONE, elsewhere LOG_DIR_NOT_FOUND.
func TestLogDirs(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr)
	ctx := context.Background()
	createTopic(t, cl, "a", 2)
	createTopic(t, cl, "b", 1)
	pcl := client(t, srv.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	require.NoError(t, pcl.ProduceSync(ctx, &kgo.Record{Topic: "a", Partition: 1, Value: bytes.Repeat([]byte("x"), 1000)}).FirstErr())

	// Straight to the broker: kgo's merge of the answers it shards
	// drops the v4 fields.
	kresp, err := cl.Broker(0).Request(ctx, kmsg.NewPtrDescribeLogDirsRequest())
	require.NoError(t, err)
	resp := kresp.(*kmsg.DescribeLogDirsResponse)
	require.Len(t, resp.Dirs, 1)
	d := resp.Dirs[0]
	require.True(t, filepath.IsAbs(d.Dir), d.Dir)
	require.Positive(t, d.TotalBytes)
	require.Positive(t, d.UsableBytes)
	sizes := map[string]int64{}
	for _, dt := range d.Topics {
		for _, p := range dt.Partitions {
			sizes[fmt.Sprintf("%s-%d", dt.Topic, p.Partition)] = p.Size
			require.Zero(t, p.OffsetLag)
			require.False(t, p.IsFuture)
		}
	}
	require.Contains(t, sizes, "a-0")
	require.Contains(t, sizes, "b-0")
	require.Zero(t, sizes["a-0"])
	require.Greater(t, sizes["a-1"], int64(1000))

	req := kmsg.NewPtrDescribeLogDirsRequest()
	rt := kmsg.NewDescribeLogDirsRequestTopic()
	rt.Topic, rt.Partitions = "a", []int32{1, 1, 7}
	nt := kmsg.NewDescribeLogDirsRequestTopic()
	nt.Topic, nt.Partitions = "nope", []int32{0}
	req.Topics = []kmsg.DescribeLogDirsRequestTopic{rt, nt}
	kresp, err = cl.Broker(0).Request(ctx, req)
	require.NoError(t, err)
	resp = kresp.(*kmsg.DescribeLogDirsResponse)
	require.Len(t, resp.Dirs[0].Topics, 1, "only what the directory holds")
	require.Len(t, resp.Dirs[0].Topics[0].Partitions, 1)
	require.Equal(t, int32(1), resp.Dirs[0].Topics[0].Partitions[0].Partition)

	areq := kmsg.NewPtrAlterReplicaLogDirsRequest()
	for _, dir := range []string{d.Dir, d.Dir + "/", "/elsewhere"} {
		ad := kmsg.NewAlterReplicaLogDirsRequestDir()
		ad.Dir = dir
		at := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
		at.Topic, at.Partitions = "a", []int32{0}
		ad.Topics = []kmsg.AlterReplicaLogDirsRequestDirTopic{at}
		areq.Dirs = append(areq.Dirs, ad)
	}
	kresp, err = cl.Broker(0).Request(ctx, areq)
	require.NoError(t, err)
	aresp := kresp.(*kmsg.AlterReplicaLogDirsResponse)
	require.Len(t, aresp.Topics, 3)
	require.Zero(t, aresp.Topics[0].Partitions[0].ErrorCode)
	require.Zero(t, aresp.Topics[1].Partitions[0].ErrorCode)
	require.Equal(t, kerr.LogDirNotFound.Code, aresp.Topics[2].Partitions[0].ErrorCode)
}

// TestElectLeaders: a single broker needs no election.
func TestElectLeaders(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	cl := client(t, srv.Addr)
	ctx := context.Background()
	createTopic(t, cl, "a", 2)
	for _, typ := range []int8{0, 1} {
		req := kmsg.NewPtrElectLeadersRequest()
		req.ElectionType = typ
		for _, name := range []string{"a", "nope"} {
			et := kmsg.NewElectLeadersRequestTopic()
			et.Topic, et.Partitions = name, []int32{0, 1, 2}
			req.Topics = append(req.Topics, et)
		}
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		require.Zero(t, resp.ErrorCode)
		got := map[string]int16{}
		for _, rt := range resp.Topics {
			for _, p := range rt.Partitions {
				got[fmt.Sprintf("%s-%d", rt.Topic, p.Partition)] = p.ErrorCode
			}
		}
		n, u := kerr.ElectionNotNeeded.Code, kerr.UnknownTopicOrPartition.Code
		require.Equal(t, map[string]int16{"a-0": n, "a-1": n, "a-2": u, "nope-0": u, "nope-1": u, "nope-2": u}, got)
	}
	req := kmsg.NewPtrElectLeadersRequest()
	resp, err := req.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, resp.ErrorCode)
	require.Empty(t, resp.Topics, "every partition: none needed an election")
	req.ElectionType = 5
	resp, err = req.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Equal(t, kerr.InvalidRequest.Code, resp.ErrorCode)
}

// TestDescribeTopicPartitions pages through the topics with the cursor;
// a client asking for more than max.request.partition.size.limit, or for
// none, gets the limit or one; bad cursors answer INVALID_REQUEST.
func TestDescribeTopicPartitions(t *testing.T) {
	srv := servertest.StartInMemory(t, func(c *server.Config) { c.MaxRequestPartitionSizeLimit = 3 })
	cl := client(t, srv.Addr)
	ctx := context.Background()
	createTopic(t, cl, "c", 1)
	createTopic(t, cl, "a", 3)
	createTopic(t, cl, "b", 2)

	describe := func(limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor, topics ...string) *kmsg.DescribeTopicPartitionsResponse {
		t.Helper()
		req := kmsg.NewPtrDescribeTopicPartitionsRequest()
		req.ResponsePartitionLimit, req.Cursor = limit, cursor
		for _, name := range topics {
			rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
			rt.Topic = name
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		return resp
	}
	flat := func(resp *kmsg.DescribeTopicPartitionsResponse) []string {
		var out []string
		for _, rt := range resp.Topics {
			if rt.ErrorCode != 0 {
				out = append(out, fmt.Sprintf("%s!%d", *rt.Topic, rt.ErrorCode))
			}
			for _, p := range rt.Partitions {
				require.Equal(t, int32(0), p.LeaderID)
				require.Equal(t, []int32{0}, p.ISR)
				out = append(out, fmt.Sprintf("%s-%d", *rt.Topic, p.Partition))
			}
		}
		return out
	}

	// Every topic, two at a time.
	var all []string
	var cursor *kmsg.DescribeTopicPartitionsRequestCursor
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		resp := describe(2, cursor)
		all = append(all, flat(resp)...)
		if resp.NextCursor == nil {
			break
		}
		cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: resp.NextCursor.Topic, Partition: resp.NextCursor.Partition}
	}
	require.Equal(t, []string{"a-0", "a-1", "a-2", "b-0", "b-1", "c-0"}, all)

	// A misbehaving client: far more than the server's limit, or none.
	resp := describe(1<<30, nil)
	require.Equal(t, []string{"a-0", "a-1", "a-2"}, flat(resp))
	require.Equal(t, &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: "b", Partition: 0}, resp.NextCursor)
	for _, limit := range []int32{0, -5} {
		resp = describe(limit, nil)
		require.Equal(t, []string{"a-0"}, flat(resp))
		require.Equal(t, &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: "a", Partition: 1}, resp.NextCursor)
	}

	// Named topics, an unknown one among them.
	resp = describe(10, nil, "c", "nope", "b")
	require.Equal(t, []string{"b-0", "b-1", "c-0", fmt.Sprintf("nope!%d", kerr.UnknownTopicOrPartition.Code)}, flat(resp))
	resp = describe(10, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "b", Partition: 1}, "b", "c")
	require.Equal(t, []string{"b-1", "c-0"}, flat(resp))
	require.Nil(t, resp.NextCursor)

	// Bad cursors.
	bad := fmt.Sprintf("!%d", kerr.InvalidRequest.Code)
	resp = describe(10, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "a"}, "b", "c")
	require.Equal(t, []string{"b" + bad, "c" + bad}, flat(resp))
	resp = describe(10, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "b", Partition: -1}, "b")
	require.Equal(t, []string{"b" + bad}, flat(resp))
}

// TestFeatures: ApiVersions v3+ reports the features at the levels
// kafkalite runs; v5 checks the cluster and node a client names
// (KIP-1242); UpdateFeatures accepts the levels run and refuses others.
func TestFeatures(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	cl := client(t, srv.Addr)
	ctx := context.Background()
	c, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer c.Close()

	av := versionedRequest(t, c, kmsg.NewPtrApiVersionsRequest(), 4).(*kmsg.ApiVersionsResponse)
	sup := map[string][2]int16{}
	for _, f := range av.SupportedFeatures {
		sup[f.Name] = [2]int16{f.MinVersion, f.MaxVersion}
	}
	fin := map[string][2]int16{}
	for _, f := range av.FinalizedFeatures {
		fin[f.Name] = [2]int16{f.MinVersionLevel, f.MaxVersionLevel}
	}
	require.Equal(t, map[string][2]int16{"group.version": {0, 1}, "share.version": {0, 1}, "transaction.version": {0, 2}}, sup)
	require.Equal(t, map[string][2]int16{"group.version": {1, 1}, "share.version": {1, 1}, "transaction.version": {2, 2}}, fin)
	require.Equal(t, server.FinalizedFeaturesEpoch, av.FinalizedFeaturesEpoch)

	md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, md.ErrorCode)
	cluster := *md.ClusterID
	other := "someone-else"
	for _, c5 := range []struct {
		cluster *string
		node    int32
		code    int16
	}{
		{nil, -1, 0},
		{&cluster, 0, 0},
		{&other, 0, kerr.RebootstrapRequired.Code},
		{&cluster, 3, kerr.RebootstrapRequired.Code},
		{&cluster, -1, kerr.InvalidRequest.Code},
		{nil, 0, kerr.InvalidRequest.Code},
	} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1"
		req.ClusterID, req.NodeID = c5.cluster, c5.node
		resp := versionedRequest(t, c, req, 5).(*kmsg.ApiVersionsResponse)
		require.Equal(t, c5.code, resp.ErrorCode, "%v %d", c5.cluster, c5.node)
		if c5.code != 0 {
			require.Empty(t, resp.ApiKeys)
		} else {
			require.NotEmpty(t, resp.ApiKeys)
		}
	}

	update := func(version int16, updates ...kmsg.UpdateFeaturesRequestFeatureUpdate) *kmsg.UpdateFeaturesResponse {
		t.Helper()
		req := kmsg.NewPtrUpdateFeaturesRequest()
		req.FeatureUpdates = updates
		return versionedRequest(t, c, req, version).(*kmsg.UpdateFeaturesResponse)
	}
	fu := func(name string, level int16, typ int8) kmsg.UpdateFeaturesRequestFeatureUpdate {
		u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		u.Feature, u.MaxVersionLevel, u.UpgradeType = name, level, typ
		u.AllowDowngrade = typ != 1
		return u
	}
	for v := int16(0); v <= 2; v++ {
		r := update(v, fu("group.version", 1, 1), fu("share.version", 1, 1), fu("transaction.version", 2, 1))
		require.Zero(t, r.ErrorCode, "v%d %v", v, r.ErrorMessage)
		if v < 2 {
			require.Len(t, r.Results, 3)
		}
		for _, bad := range [][]kmsg.UpdateFeaturesRequestFeatureUpdate{
			{fu("transaction.version", 3, 1)},
			{fu("share.version", 2, 1)},
			{fu("group.version", 0, 2)},
			{fu("no.such.version", 1, 1)},
			{fu("group.version", 1, 1), fu("transaction.version", 1, 1)}, // a downgrade not asked as one
		} {
			r := update(v, bad...)
			require.Equal(t, kerr.InvalidUpdateVersion.Code, r.ErrorCode, "v%d %s", v, bad[len(bad)-1].Feature)
			require.NotNil(t, r.ErrorMessage)
			if v < 2 {
				require.Len(t, r.Results, len(bad))
			}
		}
		if v >= 1 {
			r = update(v, fu("group.version", 0, 1))
			require.Equal(t, kerr.InvalidUpdateVersion.Code, r.ErrorCode, "a downgrade not asked as one")
		}
		r = update(v, fu("group.version", 1, 1), fu("group.version", 1, 1))
		require.Equal(t, kerr.InvalidRequest.Code, r.ErrorCode)
	}
}
