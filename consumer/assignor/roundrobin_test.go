package assignor_test

import (
	"slices"
	"testing"

	"github.com/kafkalite/kafkalite/consumer/assignor"
)

// Scenarios of Kafka's RoundRobinAssignorTest and the RoundRobinAssignor
// javadoc, with their expected assignments.
func TestRoundRobin(t *testing.T) {
	runScenarios(t, assignor.RoundRobin(), slices.Concat(
		rangeAndRoundRobinScenarios(),
		staticOrderScenarios(want("consumer-b", "topic1-0, topic1-2, topic2-1", "consumer-a", "topic1-1, topic2-0, topic2-2")),
		[]scenario{
			{"javadoc example", map[string]int32{"t0": 3, "t1": 3},
				[]assignor.Member{m("C0", "t0", "t1"), m("C1", "t0", "t1")},
				want("C0", "t0-0, t0-2, t1-1", "C1", "t0-1, t1-0, t1-2")},
			{"javadoc example, different subscriptions", map[string]int32{"t0": 1, "t1": 2, "t2": 3},
				[]assignor.Member{m("C0", "t0"), m("C1", "t0", "t1"), m("C2", "t0", "t1", "t2")},
				want("C0", "t0-0", "C1", "t1-0", "C2", "t1-1, t2-0, t2-1, t2-2")},
		}))
}

// RoundRobinAssignorTest.testStaticMemberRoundRobinAssignment*.
func TestRoundRobinStaticMembersPersist(t *testing.T) {
	staticMembersPersist(t, assignor.RoundRobin(),
		map[string]int32{"topic1": 3, "topic2": 3},
		want("consumer1", "topic1-0, topic2-1", "consumer2", "topic1-1, topic2-2",
			"consumer3", "topic1-2", "consumer4", "topic2-0"),
		map[string]int32{"topic1": 5, "topic2": 5},
		want("instance1", "topic1-0, topic1-3, topic2-1, topic2-4", "instance2", "topic1-1, topic1-4, topic2-2",
			"instance3", "topic1-2, topic2-0, topic2-3"))
}
