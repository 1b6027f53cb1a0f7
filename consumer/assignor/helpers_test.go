package assignor_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/consumer/assignor"
)

// tps parses "t1-0, t1-3, t2-0" (Kafka's TopicPartition.toString, as
// Kafka's tests write expected assignments) into partitions.
func tps(s string) []assignor.TopicPartition {
	out := []assignor.TopicPartition{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		i := strings.LastIndexByte(f, '-')
		p, err := strconv.Atoi(f[i+1:])
		if err != nil {
			panic(fmt.Sprintf("bad partition %q", f))
		}
		out = append(out, assignor.TopicPartition{Topic: f[:i], Partition: int32(p)})
	}
	return out
}

// sorted returns ps sorted by topic then partition.
func sorted(ps []assignor.TopicPartition) []assignor.TopicPartition {
	ps = slices.Clone(ps)
	slices.SortFunc(ps, func(a, b assignor.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return ps
}

// want builds an expected assignment from "member: partitions" pairs.
func want(pairs ...string) map[string][]assignor.TopicPartition {
	out := map[string][]assignor.TopicPartition{}
	for i := 0; i < len(pairs); i += 2 {
		out[pairs[i]] = sorted(tps(pairs[i+1]))
	}
	return out
}

// m builds a member subscribed to topics.
func m(id string, topics ...string) assignor.Member {
	return assignor.Member{ID: id, Topics: topics, Generation: -1}
}

// owning returns member with the given owned partitions and generation.
func owning(member assignor.Member, owned string, generation int32) assignor.Member {
	member.OwnedPartitions = tps(owned)
	member.Generation = generation
	return member
}

// static returns member with a group.instance.id.
func static(member assignor.Member, instanceID string) assignor.Member {
	member.InstanceID = instanceID
	return member
}

// assign runs a and requires success.
func assign(t testing.TB, a assignor.Assignor, partitions map[string]int32, members ...assignor.Member) map[string][]assignor.TopicPartition {
	t.Helper()
	got, err := a.Assign(partitions, members)
	require.NoError(t, err)
	return got
}

// nextRound returns members owning what assignment gave them, in
// generation gen.
func nextRound(members []assignor.Member, assignment map[string][]assignor.TopicPartition, gen int32) []assignor.Member {
	out := make([]assignor.Member, len(members))
	for i, mb := range members {
		mb.OwnedPartitions = slices.Clone(assignment[mb.ID])
		mb.Generation = gen
		out[i] = mb
	}
	return out
}

// byInstance re-keys an assignment by the members' instance ids.
func byInstance(members []assignor.Member, assignment map[string][]assignor.TopicPartition) map[string][]assignor.TopicPartition {
	out := map[string][]assignor.TopicPartition{}
	for _, mb := range members {
		if mb.InstanceID != "" {
			out[mb.InstanceID] = assignment[mb.ID]
		}
	}
	return out
}

// consumers0 returns members "consumer0".."consumerN-1" with the given
// subscriptions, as Kafka's AbstractPartitionAssignorTest.verifyRackAssignment
// names them; owned[i], if given, is what member i owns (generation -1).
func consumers0(topics [][]string, owned []string) []assignor.Member {
	out := make([]assignor.Member, len(topics))
	for i, ts := range topics {
		out[i] = m(fmt.Sprintf("consumer%d", i), ts...)
		out[i].RackID = string(rune('a' + i%3)) // racks change nothing: no replica placement
		if i < len(owned) {
			out[i].OwnedPartitions = tps(owned[i])
		}
	}
	return out
}

// wantConsumers0 builds the expected assignment of consumers0.
func wantConsumers0(assignments ...string) map[string][]assignor.TopicPartition {
	out := map[string][]assignor.TopicPartition{}
	for i, a := range assignments {
		out[fmt.Sprintf("consumer%d", i)] = sorted(tps(a))
	}
	return out
}

// scenario is one assignment of Kafka's tests: the partitions of each
// topic, the members, and the expected assignment.
type scenario struct {
	name       string
	partitions map[string]int32
	members    []assignor.Member
	want       map[string][]assignor.TopicPartition
}

// runScenarios runs a over each scenario as a subtest.
func runScenarios(t *testing.T, a assignor.Assignor, scenarios []scenario) {
	t.Helper()
	for _, tc := range scenarios {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, assign(t, a, tc.partitions, tc.members...))
		})
	}
}

// staticMembersPersist is the procedure of Kafka's
// testStaticMember*AssignmentPersistent* tests (RangeAssignorTest,
// RoundRobinAssignorTest), run over a: three
// static members and a dynamic one get want over partitions; when the
// dynamic member is replaced its successor gets the same partitions. Then
// the three static members alone get wantByInstance over partitionsAfter
// (keyed by instance id), and keep it when their member ids change.
func staticMembersPersist(t *testing.T, a assignor.Assignor, partitions map[string]int32,
	expected map[string][]assignor.TopicPartition, partitionsAfter map[string]int32,
	wantByInstance map[string][]assignor.TopicPartition) {
	t.Helper()
	members := []assignor.Member{
		static(m("consumer1", "topic1", "topic2"), "instance1"),
		static(m("consumer2", "topic1", "topic2"), "instance2"),
		static(m("consumer3", "topic1", "topic2"), "instance3"),
		m("consumer4", "topic1", "topic2"),
	}
	assert.Equal(t, expected, assign(t, a, partitions, members...))

	members[3] = m("consumer5", "topic1", "topic2")
	expected["consumer5"] = expected["consumer4"]
	delete(expected, "consumer4")
	assert.Equal(t, expected, assign(t, a, partitions, members...))

	members = members[:3]
	assert.Equal(t, wantByInstance, byInstance(members, assign(t, a, partitionsAfter, members...)))
	members[1].ID, members[2].ID = "consumer5", "consumer4"
	assert.Equal(t, wantByInstance, byInstance(members, assign(t, a, partitionsAfter, members...)))
}

// rangeAndRoundRobinScenarios are the scenarios of Kafka's
// RangeAssignorTest and RoundRobinAssignorTest in which the two assignors
// agree: one member, or members whose topics leave no choice.
func rangeAndRoundRobinScenarios() []scenario {
	return []scenario{
		{"one consumer, no topic", map[string]int32{},
			[]assignor.Member{m("consumer")}, want("consumer", "")},
		{"one consumer, nonexistent topic", map[string]int32{},
			[]assignor.Member{m("consumer", "topic")}, want("consumer", "")},
		{"one consumer, one topic", map[string]int32{"topic": 3},
			[]assignor.Member{m("consumer", "topic")}, want("consumer", "topic-0, topic-1, topic-2")},
		{"only subscribed topics", map[string]int32{"topic": 3, "other": 3},
			[]assignor.Member{m("consumer", "topic")}, want("consumer", "topic-0, topic-1, topic-2")},
		{"one consumer, multiple topics", map[string]int32{"topic1": 1, "topic2": 2},
			[]assignor.Member{m("consumer", "topic1", "topic2")}, want("consumer", "topic1-0, topic2-0, topic2-1")},
		{"two consumers, one partition", map[string]int32{"topic1": 1},
			[]assignor.Member{m("consumer1", "topic1"), m("consumer2", "topic1")},
			want("consumer1", "topic1-0", "consumer2", "")},
		{"two consumers, two partitions", map[string]int32{"topic1": 2},
			[]assignor.Member{m("consumer1", "topic1"), m("consumer2", "topic1")},
			want("consumer1", "topic1-0", "consumer2", "topic1-1")},
		{"mixed topics", map[string]int32{"topic1": 3, "topic2": 2},
			[]assignor.Member{m("consumer1", "topic1"), m("consumer2", "topic1", "topic2"), m("consumer3", "topic1")},
			want("consumer1", "topic1-0", "consumer2", "topic1-1, topic2-0, topic2-1", "consumer3", "topic1-2")},
	}
}

// staticOrderScenarios are the scenarios of Kafka's RangeAssignorTest and
// RoundRobinAssignorTest in which static members come first, in the order
// of their instance ids: two static members, then a static and a dynamic
// one, each expected to get want (as "consumer-b" and "consumer-a").
func staticOrderScenarios(want map[string][]assignor.TopicPartition) []scenario {
	partitions := map[string]int32{"topic1": 3, "topic2": 3}
	return []scenario{
		{"two static consumers: instance ids decide", partitions,
			[]assignor.Member{static(m("consumer-b", "topic1", "topic2"), "instance1"),
				static(m("consumer-a", "topic1", "topic2"), "instance2")}, want},
		{"static before dynamic", partitions,
			[]assignor.Member{static(m("consumer-b", "topic1", "topic2"), "instance1"), m("consumer-a", "topic1", "topic2")}, want},
	}
}
