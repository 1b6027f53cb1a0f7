package assignor_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/consumer/assignor"
)

// Scenarios of Kafka's AbstractStickyAssignorTest, StickyAssignorTest and
// CooperativeStickyAssignorTest whose expected assignments Kafka's tests
// spell out. want is the sticky (eager) result; wantCoop, when set, the
// cooperative-sticky one (the same but for partitions withheld because
// another member still owns them).
//
// Several depend on Kafka's tie-breaks by java.util.HashMap iteration
// order: "max quota owners beyond the expected number" keeps consumer2's
// partitions rather than consumer1's because "consumer2" iterates first.
func TestStickyKafkaScenarios(t *testing.T) {
	all := []string{"t1", "t2", "t3"}
	for _, tc := range []struct {
		name       string
		partitions map[string]int32
		members    []assignor.Member
		want       map[string][]assignor.TopicPartition
		wantCoop   map[string][]assignor.TopicPartition
	}{
		{"one consumer, no topic", map[string]int32{},
			[]assignor.Member{m("consumer")}, want("consumer", ""), nil},
		{"one consumer, nonexistent topic", map[string]int32{"topic": 0},
			[]assignor.Member{m("consumer", "topic")}, want("consumer", ""), nil},
		{"one consumer, one topic", map[string]int32{"topic": 3},
			[]assignor.Member{m("consumer", "topic")}, want("consumer", "topic-0, topic-1, topic-2"), nil},
		{"only subscribed topics", map[string]int32{"topic": 2},
			[]assignor.Member{owning(m("consumer", "topic"), "topic-0, topic-1, other-0, other-1", 1)},
			want("consumer", "topic-0, topic-1"), nil},
		{"one consumer, multiple topics", map[string]int32{"topic1": 1, "topic2": 2},
			[]assignor.Member{m("consumer", "topic1", "topic2")}, want("consumer", "topic1-0, topic2-0, topic2-1"), nil},
		{"two consumers, one partition", map[string]int32{"topic": 1},
			[]assignor.Member{m("consumer1", "topic"), m("consumer2", "topic")},
			want("consumer1", "topic-0", "consumer2", ""), nil},
		{"two consumers, two partitions", map[string]int32{"topic": 2},
			[]assignor.Member{m("consumer1", "topic"), m("consumer2", "topic")},
			want("consumer1", "topic-0", "consumer2", "topic-1"), nil},
		{"mixed subscriptions", map[string]int32{"topic1": 3, "topic2": 2},
			[]assignor.Member{m("consumer1", "topic1"), m("consumer2", "topic1", "topic2"), m("consumer3", "topic1")},
			want("consumer1", "topic1-0, topic1-2", "consumer2", "topic2-0, topic2-1", "consumer3", "topic1-1"), nil},
		{"two consumers, two topics", map[string]int32{"topic1": 3, "topic2": 3},
			[]assignor.Member{m("consumer1", "topic1", "topic2"), m("consumer2", "topic1", "topic2")},
			want("consumer1", "topic1-0, topic1-2, topic2-1", "consumer2", "topic1-1, topic2-0, topic2-2"), nil},
		{"owner of min quota expected to reach max quota", map[string]int32{"topic1": 2, "topic2": 3},
			[]assignor.Member{
				owning(m("consumer1", "topic1", "topic2"), "topic1-0, topic2-1", 1),
				owning(m("consumer2", "topic1", "topic2"), "topic1-1, topic2-2", 1)},
			want("consumer1", "topic1-0, topic2-1, topic2-0", "consumer2", "topic1-1, topic2-2"), nil},
		{"max quota owners beyond the expected number", map[string]int32{"topic1": 2, "topic2": 2},
			[]assignor.Member{
				owning(m("consumer1", "topic1", "topic2"), "topic1-0, topic2-0", 1),
				owning(m("consumer2", "topic1", "topic2"), "topic1-1, topic2-1", 1),
				owning(m("consumer3", "topic1", "topic2"), "", 1)},
			want("consumer1", "topic1-0", "consumer2", "topic1-1, topic2-1", "consumer3", "topic2-0"),
			want("consumer1", "topic1-0", "consumer2", "topic1-1, topic2-1", "consumer3", "")},
		{"all under min quota", map[string]int32{"topic1": 2, "topic2": 3},
			[]assignor.Member{
				owning(m("consumer1", "topic1", "topic2"), "topic1-0", 1),
				owning(m("consumer2", "topic1", "topic2"), "topic1-1", 1),
				owning(m("consumer3", "topic1", "topic2"), "", 1)},
			want("consumer1", "topic1-0, topic2-1", "consumer2", "topic1-1, topic2-2", "consumer3", "topic2-0"), nil},
		{"all reach expected quota", map[string]int32{"topic": 4},
			[]assignor.Member{
				owning(m("consumer1", "topic"), "topic-0, topic-1", 1),
				owning(m("consumer2", "topic"), "topic-2", 1),
				owning(m("consumer3", "topic"), "", 1)},
			want("consumer1", "topic-0, topic-1", "consumer2", "topic-2", "consumer3", "topic-3"), nil},
		{"stale generation loses claims", map[string]int32{"topic": 3, "topic2": 3},
			[]assignor.Member{
				owning(m("consumer1", "topic", "topic2"), "topic-0, topic-2, topic2-1", 10),
				owning(m("consumer2", "topic", "topic2"), "topic-0, topic-2, topic2-1", 9)},
			want("consumer1", "topic-0, topic-2, topic2-1", "consumer2", "topic-1, topic2-0, topic2-2"), nil},
		{"no generation loses claims", map[string]int32{"topic": 3, "topic2": 3},
			[]assignor.Member{
				owning(m("consumer1", "topic", "topic2"), "topic-0, topic-2, topic2-1", 10),
				owning(m("consumer2", "topic", "topic2"), "topic-0, topic-2, topic2-1", -1)},
			want("consumer1", "topic-0, topic-2, topic2-1", "consumer2", "topic-1, topic2-0, topic2-2"), nil},
		{"multiple generations", map[string]int32{"topic": 3, "topic2": 3},
			[]assignor.Member{
				owning(m("consumer1", "topic", "topic2"), "topic-0, topic2-1, topic-1", 10),
				owning(m("consumer2", "topic", "topic2"), "topic-0, topic2-1, topic2-2", 8)},
			want("consumer1", "topic-0, topic-1, topic2-1", "consumer2", "topic-2, topic2-0, topic2-2"), nil},
		{"highest generation wins", map[string]int32{"topic": 3, "topic2": 3, "topic3": 3},
			[]assignor.Member{
				owning(m("consumer1", "topic", "topic2", "topic3"), "topic-0, topic2-0, topic3-0", 10),
				owning(m("consumer2", "topic", "topic2", "topic3"), "topic-1, topic2-1, topic3-1", 9),
				owning(m("consumer3", "topic", "topic2", "topic3"), "topic2-1, topic3-0, topic3-2", 8)},
			want("consumer1", "topic-0, topic2-0, topic3-0", "consumer2", "topic-1, topic2-1, topic3-1",
				"consumer3", "topic-2, topic2-2, topic3-2"), nil},
		{"no reassignment of current members", map[string]int32{"topic": 3, "topic1": 3, "topic2": 3, "topic3": 3},
			[]assignor.Member{
				owning(m("consumer1", "topic", "topic2", "topic3", "topic1"), "", -1),
				owning(m("consumer2", "topic", "topic2", "topic3", "topic1"), "topic-0, topic2-0, topic1-0", 9),
				owning(m("consumer3", "topic", "topic2", "topic3", "topic1"), "topic3-2, topic2-2, topic1-1", 8),
				owning(m("consumer4", "topic", "topic2", "topic3", "topic1"), "topic3-1, topic-1, topic-2", 7)},
			want("consumer1", "topic1-2, topic2-1, topic3-0", "consumer2", "topic-0, topic2-0, topic1-0",
				"consumer3", "topic3-2, topic2-2, topic1-1", "consumer4", "topic3-1, topic-1, topic-2"), nil},
		{"claimed twice in one generation, equal quotas", map[string]int32{"topic": 3},
			[]assignor.Member{
				owning(m("consumer1", "topic"), "topic-0, topic-1", 1),
				owning(m("consumer2", "topic"), "topic-0, topic-2", 1),
				owning(m("consumer3", "topic"), "", 1)},
			want("consumer1", "topic-1", "consumer2", "topic-2", "consumer3", "topic-0"),
			want("consumer1", "topic-1", "consumer2", "topic-2", "consumer3", "")},
		{"claimed twice in one generation, unequal quotas", map[string]int32{"topic": 4},
			[]assignor.Member{
				owning(m("consumer1", "topic"), "topic-0, topic-1", 1),
				owning(m("consumer2", "topic"), "topic-0, topic-2", 1),
				owning(m("consumer3", "topic"), "", 1)},
			want("consumer1", "topic-1, topic-3", "consumer2", "topic-2", "consumer3", "topic-0"),
			want("consumer1", "topic-1, topic-3", "consumer2", "topic-2", "consumer3", "")},
		{"old-version subscriptions", map[string]int32{"topic1": 3},
			[]assignor.Member{
				owning(m("consumer1", "topic1"), "topic1-0", 1),
				owning(m("consumer2", "topic1"), "topic1-1", 1),
				owning(m("consumer3", "topic1"), "", 1)},
			want("consumer1", "topic1-0", "consumer2", "topic1-1", "consumer3", "topic1-2"), nil},
		// AbstractStickyAssignorTest.testRackAwareAssignmentWith*: their
		// non-rack-aware expectations (no replica placement here).
		{"uniform subscription", map[string]int32{"t1": 6, "t2": 7, "t3": 2},
			consumers0([][]string{all, all, all}, nil),
			wantConsumers0("t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"), nil},
		{"uniform subscription, owned", map[string]int32{"t1": 6, "t2": 7, "t3": 2},
			consumers0([][]string{all, all, all},
				[]string{"t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"}),
			wantConsumers0("t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"), nil},
		{"non-equal subscription", map[string]int32{"t1": 6, "t2": 7, "t3": 2},
			consumers0([][]string{all, all, {"t1", "t3"}}, nil),
			wantConsumers0("t1-5, t2-0, t2-2, t2-4, t2-6", "t1-3, t2-1, t2-3, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-4, t3-1"), nil},
		{"non-equal subscription, owned", map[string]int32{"t1": 6, "t2": 7, "t3": 2},
			consumers0([][]string{all, all, {"t1", "t3"}},
				[]string{"t1-5, t2-0, t2-2, t2-4, t2-6", "t1-3, t2-1, t2-3, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-4, t3-1"}),
			wantConsumers0("t1-5, t2-0, t2-2, t2-4, t2-6", "t1-3, t2-1, t2-3, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-4, t3-1"), nil},
		// Kafka's StickyAssignor ignores these owned partitions (they are
		// not in its user data), so Kafka's tests state this for
		// cooperative-sticky only: want nil skips sticky.
		{"non-equal subscription, misplaced owned", map[string]int32{"t1": 6, "t2": 7, "t3": 2},
			consumers0([][]string{all, all, {"t1", "t3"}},
				[]string{"t1-0, t1-1, t1-2, t1-3, t1-4", "t1-5, t2-0, t2-1, t2-2, t2-3", "t2-4, t2-5, t2-6, t3-0, t3-1"}),
			nil, wantConsumers0("t1-2, t1-3, t1-4", "t2-0, t2-1, t2-2, t2-3", "t3-0, t3-1")},
		{"non-equal subscription, intermediate owned", map[string]int32{"t1": 6, "t2": 7, "t3": 2},
			consumers0([][]string{all, all, {"t1", "t3"}},
				[]string{"t1-2, t1-3, t1-4", "t2-0, t2-1, t2-2, t2-3", "t3-0, t3-1"}),
			wantConsumers0("t1-2, t1-3, t1-4, t2-4, t2-5", "t2-0, t2-1, t2-2, t2-3, t2-6", "t1-0, t1-1, t1-5, t3-0, t3-1"), nil},
	} {
		for _, a := range []assignor.Assignor{assignor.Sticky(), assignor.CooperativeSticky()} {
			t.Run(tc.name+"/"+a.Name(), func(t *testing.T) {
				expected := tc.want
				if a.Name() == assignor.CooperativeStickyName && tc.wantCoop != nil {
					expected = tc.wantCoop
				}
				if expected == nil {
					t.Skip("no Kafka expectation for this assignor")
				}
				assert.Equal(t, expected, assign(t, a, tc.partitions, tc.members...))
			})
		}
	}
}

// AbstractStickyAssignorTest.testAddRemoveTwoConsumersTwoTopics: exact
// results over three rebalances, members joining then leaving.
func TestStickyAddRemoveTwoConsumersTwoTopics(t *testing.T) {
	partitions := map[string]int32{"topic1": 3, "topic2": 4}
	sticky := assignor.Sticky()
	members := []assignor.Member{m("consumer1", "topic1", "topic2"), m("consumer2", "topic1", "topic2")}
	got := assign(t, sticky, partitions, members...)
	require.Equal(t, want("consumer1", "topic1-0, topic1-2, topic2-1, topic2-3", "consumer2", "topic1-1, topic2-0, topic2-2"), got)

	members = append(nextRound(members, got, 1), owning(m("consumer3", "topic1", "topic2"), "", 1),
		owning(m("consumer4", "topic1", "topic2"), "", 1))
	got = assign(t, sticky, partitions, members...)
	require.Equal(t, want("consumer1", "topic1-0, topic2-1", "consumer2", "topic2-0, topic1-1",
		"consumer3", "topic1-2, topic2-3", "consumer4", "topic2-2"), got)

	// cooperative-sticky withholds the three partitions that move
	// (Kafka's partitionsTransferringOwnership: topic1-2 and topic2-3 to
	// consumer3, topic2-2 to consumer4).
	coop := assign(t, assignor.CooperativeSticky(), partitions, members...)
	assert.Equal(t, want("consumer1", "topic1-0, topic2-1", "consumer2", "topic2-0, topic1-1",
		"consumer3", "", "consumer4", ""), coop)

	members = nextRound(members[2:], got, 1)
	got = assign(t, sticky, partitions, members...)
	assert.Equal(t, want("consumer3", "topic1-2, topic2-3, topic1-0, topic2-1", "consumer4", "topic2-2, topic1-1, topic2-0"), got)
}

// AbstractStickyAssignorTest.testAddRemoveConsumerOneTopic.
func TestStickyAddRemoveConsumerOneTopic(t *testing.T) {
	partitions := map[string]int32{"topic": 3}
	members := []assignor.Member{m("consumer1", "topic")}
	got := assign(t, assignor.Sticky(), partitions, members...)
	require.Equal(t, want("consumer1", "topic-0, topic-1, topic-2"), got)

	members = append(nextRound(members, got, 1), owning(m("consumer2", "topic"), "", 1))
	got = assign(t, assignor.Sticky(), partitions, members...)
	require.Equal(t, want("consumer1", "topic-0, topic-1", "consumer2", "topic-2"), got)
	assert.Equal(t, want("consumer1", "topic-0, topic-1", "consumer2", ""),
		assign(t, assignor.CooperativeSticky(), partitions, members...), "topic-2 is withheld until consumer1 revoked it")

	members = nextRound(members[1:], got, 1)
	assert.Equal(t, want("consumer2", "topic-0, topic-1, topic-2"), assign(t, assignor.Sticky(), partitions, members...))
}

// Stickiness when members join and leave: only the partitions balance
// requires move (AbstractStickyAssignorTest.testStickiness,
// testReassignmentAfterOneConsumerLeaves/Added, testSameSubscriptions).
func TestStickyMovesOnlyWhatBalanceRequires(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		partitions            int32
		before, after         int // members
		wantMoves             int // between members present before and after
		wantMin, wantMaxAfter int
	}{
		// 20 partitions over 9 members: two have 3; a 10th member takes
		// one from each of those, and nothing else moves.
		{"one joins", 20, 9, 10, 2, 2, 2},
		// A member leaving: its partitions spread over the others, which
		// keep all of theirs.
		{"one leaves", 20, 10, 9, 0, 2, 3},
		{"four join", 64, 4, 8, 32, 8, 8},
		{"four leave", 64, 8, 4, 0, 16, 16},
		{"one of four leaves", 64, 4, 3, 0, 21, 22},
		{"two join 100 members", 10000, 98, 100, 200, 100, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			partitions := map[string]int32{"topic": tc.partitions}
			var members []assignor.Member
			for i := range max(tc.before, tc.after) {
				members = append(members, m(fmt.Sprintf("consumer%03d", i), "topic"))
			}
			first := assign(t, assignor.Sticky(), partitions, members[:tc.before]...)
			next := nextRound(members[:tc.after], first, 1)
			second := assign(t, assignor.Sticky(), partitions, next...)

			owner := map[assignor.TopicPartition]string{}
			for id, ps := range first {
				for _, p := range ps {
					owner[p] = id
				}
			}
			moves, lo, hi := 0, int(tc.partitions), 0
			for id, ps := range second {
				lo, hi = min(lo, len(ps)), max(hi, len(ps))
				for _, p := range ps {
					if o, ok := owner[p]; ok && o != id {
						if _, stayed := second[o]; stayed {
							moves++ // taken from a member that is still here
						}
					}
				}
			}
			assert.Equal(t, tc.wantMoves, moves, "partitions moved between remaining members")
			assert.Equal(t, tc.wantMin, lo)
			assert.Equal(t, tc.wantMaxAfter, hi)
		})
	}
}
