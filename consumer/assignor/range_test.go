package assignor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kafkalite/kafkalite/consumer/assignor"
)

// Scenarios of Kafka's RangeAssignorTest and the RangeAssignor javadoc,
// with their expected assignments.
func TestRange(t *testing.T) {
	all := []string{"t1", "t2", "t3"}
	for _, tc := range []struct {
		name       string
		partitions map[string]int32
		members    []assignor.Member
		want       map[string][]assignor.TopicPartition
	}{
		{"javadoc example", map[string]int32{"t0": 3, "t1": 3},
			[]assignor.Member{m("C0", "t0", "t1"), m("C1", "t0", "t1")},
			want("C0", "t0-0, t0-1, t1-0, t1-1", "C1", "t0-2, t1-2")},
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
		{"two static consumers: instance ids decide", map[string]int32{"topic1": 3, "topic2": 3},
			[]assignor.Member{static(m("consumer-b", "topic1", "topic2"), "instance1"),
				static(m("consumer-a", "topic1", "topic2"), "instance2")},
			want("consumer-b", "topic1-0, topic1-1, topic2-0, topic2-1", "consumer-a", "topic1-2, topic2-2")},
		{"static before dynamic", map[string]int32{"topic1": 3, "topic2": 3},
			[]assignor.Member{static(m("consumer-b", "topic1", "topic2"), "instance1"), m("consumer-a", "topic1", "topic2")},
			want("consumer-b", "topic1-0, topic1-1, topic2-0, topic2-1", "consumer-a", "topic1-2, topic2-2")},
		{"uniform subscription", map[string]int32{"t1": 6, "t2": 7, "t3": 2},
			consumers0([][]string{all, all, all}, nil),
			wantConsumers0("t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6")},
		{"non-equal subscription", map[string]int32{"t1": 6, "t2": 7, "t3": 2},
			consumers0([][]string{all, all, {"t1", "t3"}}, nil),
			wantConsumers0("t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5")},
		{"uniform partitions", map[string]int32{"t1": 5, "t2": 5, "t3": 5},
			consumers0([][]string{all, all, all}, nil),
			wantConsumers0("t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t2-4, t3-4")},
		{"uniform partitions, non-equal subscription", map[string]int32{"t1": 5, "t2": 5, "t3": 5},
			consumers0([][]string{all, all, {"t1", "t3"}}, nil),
			wantConsumers0("t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4")},
		{"co-partitioned pairs", map[string]int32{"t1": 6, "t2": 6, "t3": 2, "t4": 2},
			consumers0([][]string{{"t1", "t2"}, {"t1", "t2"}, {"t3", "t4"}, {"t3", "t4"}}, nil),
			wantConsumers0("t1-0, t1-1, t1-2, t2-0, t2-1, t2-2", "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5", "t3-0, t4-0", "t3-1, t4-1")},
		{"co-partitioned, all topics", map[string]int32{"t1": 6, "t2": 6, "t3": 2, "t4": 2},
			consumers0([][]string{{"t1", "t2", "t3", "t4"}, {"t1", "t2", "t3", "t4"}, {"t1", "t2", "t3", "t4"},
				{"t1", "t2", "t3", "t4"}}, nil),
			wantConsumers0("t1-0, t1-1, t2-0, t2-1, t3-0, t4-0", "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1", "t1-4, t2-4", "t1-5, t2-5")},
		{"co-partitioned with missing topics", map[string]int32{"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4},
			consumers0([][]string{
				{"t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"},
				{"t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"},
				{"t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"}}, nil),
			wantConsumers0("t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
				"t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2", "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, assign(t, assignor.Range(), tc.partitions, tc.members...))
		})
	}
}

// Static members keep their ranges when a dynamic member is replaced or
// when member ids change (RangeAssignorTest.testStaticMemberRangeAssignment*).
func TestRangeStaticMembersPersist(t *testing.T) {
	members := []assignor.Member{
		static(m("consumer1", "topic1", "topic2"), "instance1"),
		static(m("consumer2", "topic1", "topic2"), "instance2"),
		static(m("consumer3", "topic1", "topic2"), "instance3"),
		m("consumer4", "topic1", "topic2"),
	}
	partitions := map[string]int32{"topic1": 5, "topic2": 4}
	expected := want("consumer1", "topic1-0, topic1-1, topic2-0", "consumer2", "topic1-2, topic2-1",
		"consumer3", "topic1-3, topic2-2", "consumer4", "topic1-4, topic2-3")
	assert.Equal(t, expected, assign(t, assignor.Range(), partitions, members...))

	members[3] = m("consumer5", "topic1", "topic2")
	expected["consumer5"] = expected["consumer4"]
	delete(expected, "consumer4")
	assert.Equal(t, expected, assign(t, assignor.Range(), partitions, members...))

	partitions = map[string]int32{"topic1": 5, "topic2": 5}
	members = members[:3]
	byInst := want("instance1", "topic1-0, topic1-1, topic2-0, topic2-1", "instance2", "topic1-2, topic1-3, topic2-2, topic2-3",
		"instance3", "topic1-4, topic2-4")
	assert.Equal(t, byInst, byInstance(members, assign(t, assignor.Range(), partitions, members...)))
	members[1].ID, members[2].ID = "consumer5", "consumer4"
	assert.Equal(t, byInst, byInstance(members, assign(t, assignor.Range(), partitions, members...)))
}
