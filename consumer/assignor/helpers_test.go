package assignor_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

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
