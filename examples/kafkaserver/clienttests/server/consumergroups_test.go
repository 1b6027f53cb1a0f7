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

// TestMixedConsumerGroupProtocol: TestMixedGroup's mixed group with both
// members on KIP-848's protocol (the server assigns).
func TestMixedConsumerGroupProtocol(t *testing.T) {
	mixedGroup(t, "mixed848", "consumer", []kgo.Opt{kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.ServerSideBalancer(),
		kgo.HeartbeatInterval(200 * time.Millisecond)},
		func(cl *kgo.Client, localID string) []int32 {
			describe := kmsg.NewPtrConsumerGroupDescribeRequest()
			describe.Groups = []string{"mixed848"}
			resp, err := describe.RequestWith(context.Background(), cl)
			if err != nil || len(resp.Groups) != 1 || resp.Groups[0].State != "Stable" || len(resp.Groups[0].Members) != 2 {
				return nil
			}
			for _, m := range resp.Groups[0].Members {
				if m.MemberID != localID && len(m.Assignment.TopicPartitions) == 1 {
					return m.Assignment.TopicPartitions[0].Partitions
				}
			}
			return nil
		})
}
