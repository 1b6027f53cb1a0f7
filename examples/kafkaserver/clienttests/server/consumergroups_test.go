package server_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// TestConsumerGroupProtocol: franz-go members with KIP-848's protocol
// (kgo.ServerSideBalancer): the coordinator assigns; three members share
// six partitions two each once stable, read every record between them and
// commit with their member epochs; ConsumerGroupDescribe and ListGroups
// show the group; after one member leaves, the two others take its
// partitions and read what comes next.
func TestConsumerGroupProtocol(t *testing.T) {
	for _, balancer := range []struct {
		name, assignor string
		b              kgo.GroupBalancer
	}{
		{"range", "range", kgo.RangeBalancer()},
		{"uniform", "uniform", kgo.CooperativeStickyBalancer()},
	} {
		t.Run(balancer.name, func(t *testing.T) {
			srv := servertest.Start(t, nil)
			prod := client(t, srv.Addr, kgo.ProducerLinger(0))
			createTopic(t, prod, "orders", 6)
			const n = 600
			produceKeyed(t, prod, "orders", n)

			opts := []kgo.Opt{kgo.ServerSideBalancer(), kgo.HeartbeatInterval(200 * time.Millisecond)}
			members := []*groupConsumer{
				startGroupConsumer(t, srv.Addr, "g848", "orders", balancer.b, opts...),
				startGroupConsumer(t, srv.Addr, "g848", "orders", balancer.b, opts...),
				startGroupConsumer(t, srv.Addr, "g848", "orders", balancer.b, opts...),
			}
			total := func() int {
				s := 0
				for _, m := range members {
					s += m.count()
				}
				return s
			}
			eventually(t, func() bool { return total() >= n }, "the group read %d of %d", total(), n)

			describe := kmsg.NewPtrConsumerGroupDescribeRequest()
			describe.Groups = []string{"g848"}
			var desc kmsg.ConsumerGroupDescribeResponseGroup
			eventually(t, func() bool {
				resp, err := describe.RequestWith(context.Background(), prod)
				if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
					return false
				}
				desc = resp.Groups[0]
				if desc.State != "Stable" || len(desc.Members) != 3 {
					return false
				}
				for _, m := range desc.Members {
					if len(m.Assignment.TopicPartitions) != 1 || len(m.Assignment.TopicPartitions[0].Partitions) != 2 {
						return false
					}
				}
				return true
			}, "the group did not settle with three members of two partitions each")
			require.Equal(t, balancer.assignor, desc.AssignorName)
			require.Equal(t, desc.Epoch, desc.AssignmentEpoch)
			owned := map[int32]string{}
			for _, m := range desc.Members {
				require.Equal(t, desc.Epoch, m.MemberEpoch)
				require.Equal(t, "orders", m.Assignment.TopicPartitions[0].Topic)
				require.Equal(t, []string{"orders"}, m.SubscribedTopics)
				for _, p := range m.Assignment.TopicPartitions[0].Partitions {
					require.Empty(t, owned[p], "partition %d owned twice", p)
					owned[p] = m.MemberID
				}
			}

			list := kmsg.NewPtrListGroupsRequest()
			list.TypesFilter = []string{"consumer"}
			lr, err := list.RequestWith(context.Background(), prod)
			require.NoError(t, err)
			require.Len(t, lr.Groups, 1)
			require.Equal(t, "g848", lr.Groups[0].Group)
			require.Equal(t, "consumer", lr.Groups[0].GroupType)

			// The commits: every partition's offset, adding up to n.
			fetch := kmsg.NewPtrOffsetFetchRequest()
			fg := kmsg.NewOffsetFetchRequestGroup()
			fg.Group = "g848"
			fetch.Groups = []kmsg.OffsetFetchRequestGroup{fg}
			eventually(t, func() bool {
				resp, err := fetch.RequestWith(context.Background(), prod)
				if err != nil || len(resp.Groups) != 1 || len(resp.Groups[0].Topics) != 1 {
					return false
				}
				var sum int64
				for _, p := range resp.Groups[0].Topics[0].Partitions {
					sum += p.Offset
				}
				return sum == n
			}, "committed offsets do not add up to %d", n)

			// One member leaves; the others take over its partitions.
			members[2].close()
			members = members[:2]
			before := total()
			var recs []*kgo.Record
			for i := range 60 {
				recs = append(recs, &kgo.Record{Topic: "orders", Partition: int32(i % 6), Value: fmt.Appendf(nil, "after-%d", i)})
			}
			p2 := client(t, srv.Addr, kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()))
			require.NoError(t, p2.ProduceSync(context.Background(), recs...).FirstErr())
			eventually(t, func() bool { return total() >= before+60 }, "the two members read %d of the 60 after the leave", total()-before)
			for _, m := range members {
				m.mu.Lock()
				var after []string
				for v := range m.got {
					if len(v) > 6 && v[:6] == "after-" {
						after = append(after, v)
					}
				}
				m.mu.Unlock()
				sort.Strings(after)
				require.NotEmpty(t, after, "each remaining member reads after the leave")
			}
			for _, m := range members {
				m.close()
			}
		})
	}
}

// TestMixedConsumerGroupProtocol: a kafkalite consumer in the server's
// process and a franz-go client over the network, both with KIP-848's
// protocol, are members of one consumer group: once it settles each holds
// two of the four partitions, none held by both, and between them they
// read every record.
func TestMixedConsumerGroupProtocol(t *testing.T) {
	srv := servertest.Start(t, nil)
	prod := client(t, srv.Addr, kgo.ProducerLinger(0))
	createTopic(t, prod, "shared848", 4)
	const n = 200
	produceKeyed(t, prod, "shared848", n)

	remote := startGroupConsumer(t, srv.Addr, "mixed848", "shared848", kgo.CooperativeStickyBalancer(),
		kgo.ServerSideBalancer(), kgo.HeartbeatInterval(200*time.Millisecond))
	defer remote.close()
	cfg := consumer.DefaultConfig()
	cfg.GroupID, cfg.GroupProtocol = "mixed848", "consumer"
	cfg.AutoOffsetReset = consumer.OffsetResetEarliest
	local, err := consumer.New(srv.Dir, cfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, local.Close(context.Background())) }()
	require.NoError(t, local.Subscribe([]string{"shared848"}, nil))
	seen := map[string]bool{}
	describe := kmsg.NewPtrConsumerGroupDescribeRequest()
	describe.Groups = []string{"mixed848"}
	var remoteParts []int32
	eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		rs, _ := local.Poll(ctx)
		for _, r := range rs {
			seen[string(r.Value)] = true
		}
		remote.mu.Lock()
		for v := range remote.got {
			seen[v] = true
		}
		remote.mu.Unlock()
		resp, err := describe.RequestWith(context.Background(), prod)
		if err != nil || len(resp.Groups) != 1 || resp.Groups[0].State != "Stable" || len(resp.Groups[0].Members) != 2 {
			return false
		}
		remoteParts = nil
		for _, m := range resp.Groups[0].Members {
			if m.MemberID != local.GroupMetadata().MemberID && len(m.Assignment.TopicPartitions) == 1 {
				remoteParts = m.Assignment.TopicPartitions[0].Partitions
			}
		}
		return len(seen) == n && len(local.Assignment()) == 2 && len(remoteParts) == 2
	}, "read %d of %d records; local assignment %v, remote %v", len(seen), n, local.Assignment(), remoteParts)
	for _, p := range remoteParts {
		require.False(t, containsPartition(local.Assignment(), p), "partition %d held by both members", p)
	}
}
