package assignor_test

import (
	"slices"
	"testing"

	"github.com/kafkalite/kafkalite/consumer/assignor"
)

// Scenarios of Kafka's RangeAssignorTest and the RangeAssignor javadoc,
// with their expected assignments.
func TestRange(t *testing.T) {
	all := []string{"t1", "t2", "t3"}
	runScenarios(t, assignor.Range(), slices.Concat(
		rangeAndRoundRobinScenarios(),
		staticOrderScenarios(want("consumer-b", "topic1-0, topic1-1, topic2-0, topic2-1", "consumer-a", "topic1-2, topic2-2")),
		[]scenario{
			{"javadoc example", map[string]int32{"t0": 3, "t1": 3},
				[]assignor.Member{m("C0", "t0", "t1"), m("C1", "t0", "t1")},
				want("C0", "t0-0, t0-1, t1-0, t1-1", "C1", "t0-2, t1-2")},
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
		}))
}

// Static members keep their ranges when a dynamic member is replaced or
// when member ids change (RangeAssignorTest.testStaticMemberRangeAssignment*).
func TestRangeStaticMembersPersist(t *testing.T) {
	staticMembersPersist(t, assignor.Range(),
		map[string]int32{"topic1": 5, "topic2": 4},
		want("consumer1", "topic1-0, topic1-1, topic2-0", "consumer2", "topic1-2, topic2-1",
			"consumer3", "topic1-3, topic2-2", "consumer4", "topic1-4, topic2-3"),
		map[string]int32{"topic1": 5, "topic2": 5},
		want("instance1", "topic1-0, topic1-1, topic2-0, topic2-1", "instance2", "topic1-2, topic1-3, topic2-2, topic2-3",
			"instance3", "topic1-4, topic2-4"))
}
