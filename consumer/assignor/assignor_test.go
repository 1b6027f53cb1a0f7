package assignor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/consumer/assignor"
)

func TestNamesAndProtocols(t *testing.T) {
	for _, tc := range []struct {
		a         assignor.Assignor
		name      string
		class     string
		protocols []assignor.Protocol
	}{
		{assignor.Range(), "range", "org.apache.kafka.clients.consumer.RangeAssignor", []assignor.Protocol{assignor.Eager}},
		{assignor.RoundRobin(), "roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor", []assignor.Protocol{assignor.Eager}},
		{assignor.Sticky(), "sticky", "org.apache.kafka.clients.consumer.StickyAssignor", []assignor.Protocol{assignor.Eager}},
		{assignor.CooperativeSticky(), "cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
			[]assignor.Protocol{assignor.Cooperative, assignor.Eager}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.name, tc.a.Name())
			assert.Equal(t, tc.protocols, tc.a.Protocols())
			byName, err := assignor.ByName(" " + tc.name + "\t")
			require.NoError(t, err)
			assert.Equal(t, tc.name, byName.Name())
			assert.IsType(t, tc.a, byName)
			byClass, err := assignor.ByClassName(tc.class + " ")
			require.NoError(t, err)
			assert.Equal(t, tc.name, byClass.Name())
			assert.NotSame(t, byName, byClass, "each call returns a new assignor")
		})
	}
	for _, bad := range []string{"", "Range", "org.apache.kafka.clients.consumer.RangeAssignor2", "uniform"} {
		_, err := assignor.ByName(bad)
		assert.ErrorIs(t, err, assignor.ErrUnknownAssignor, bad)
		_, err = assignor.ByClassName(bad)
		assert.ErrorIs(t, err, assignor.ErrUnknownAssignor, bad)
	}
	_, err := assignor.ByClassName("range")
	assert.ErrorIs(t, err, assignor.ErrUnknownAssignor, "a protocol name is not a class name")
	assert.Equal(t, "EAGER", assignor.Eager.String())
	assert.Equal(t, "COOPERATIVE", assignor.Cooperative.String())
}

func TestRebalanceProtocol(t *testing.T) {
	for _, tc := range []struct {
		name      string
		assignors []assignor.Assignor
		want      assignor.Protocol
	}{
		{"Kafka's default strategy", []assignor.Assignor{assignor.Range(), assignor.CooperativeSticky()}, assignor.Eager},
		{"cooperative-sticky alone", []assignor.Assignor{assignor.CooperativeSticky()}, assignor.Cooperative},
		{"sticky", []assignor.Assignor{assignor.Sticky()}, assignor.Eager},
	} {
		got, err := assignor.RebalanceProtocol(tc.assignors)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
	_, err := assignor.RebalanceProtocol(nil)
	assert.ErrorIs(t, err, assignor.ErrNoCommonProtocol)
	_, err = assignor.RebalanceProtocol([]assignor.Assignor{assignor.Range(), cooperativeOnly{}})
	assert.ErrorIs(t, err, assignor.ErrNoCommonProtocol)
}

// cooperativeOnly is a custom assignor supporting only the cooperative
// protocol.
type cooperativeOnly struct{}

func (cooperativeOnly) Name() string { return "custom" }
func (cooperativeOnly) Protocols() []assignor.Protocol {
	return []assignor.Protocol{assignor.Cooperative}
}
func (cooperativeOnly) Assign(map[string]int32, []assignor.Member) (map[string][]assignor.TopicPartition, error) {
	return nil, nil
}

func TestSelectProtocol(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members []assignor.MemberProtocols
		want    string
	}{
		{"one member: its first", []assignor.MemberProtocols{{"a", []string{"roundrobin", "range"}}}, "roundrobin"},
		{"most votes among common protocols", []assignor.MemberProtocols{
			{"a", []string{"B", "A"}}, {"b", []string{"A", "B", "C"}}, {"c", []string{"D", "B", "A"}}}, "B"},
		{"only common protocols count", []assignor.MemberProtocols{
			{"a", []string{"cooperative-sticky", "range"}}, {"b", []string{"range"}}}, "range"},
		// Ties go to the name java.util.HashMap iterates first: buckets
		// sticky 8, range 9, roundrobin 10, cooperative-sticky 15 (checked
		// against a JDK).
		{"tie: range before roundrobin", []assignor.MemberProtocols{
			{"a", []string{"roundrobin", "range"}}, {"b", []string{"range", "roundrobin"}}}, "range"},
		{"tie: range before cooperative-sticky", []assignor.MemberProtocols{
			{"a", []string{"cooperative-sticky", "range"}}, {"b", []string{"range", "cooperative-sticky"}}}, "range"},
		{"four-way tie: sticky", []assignor.MemberProtocols{
			{"a", []string{"roundrobin", "range", "sticky", "cooperative-sticky"}},
			{"b", []string{"cooperative-sticky", "range", "sticky", "roundrobin"}},
			{"c", []string{"range", "roundrobin", "sticky", "cooperative-sticky"}},
			{"d", []string{"sticky", "range", "roundrobin", "cooperative-sticky"}}}, "sticky"},
	} {
		got, err := assignor.SelectProtocol(tc.members)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
	_, err := assignor.SelectProtocol(nil)
	assert.ErrorIs(t, err, assignor.ErrInconsistentGroupProtocol)
	_, err = assignor.SelectProtocol([]assignor.MemberProtocols{{"a", []string{"range"}}, {"b", []string{"sticky"}}})
	assert.ErrorIs(t, err, assignor.ErrInconsistentGroupProtocol)
}

func TestAssignRejectsInvalidInput(t *testing.T) {
	for _, a := range []assignor.Assignor{assignor.Range(), assignor.RoundRobin(), assignor.Sticky(), assignor.CooperativeSticky()} {
		_, err := a.Assign(map[string]int32{"t": 1}, []assignor.Member{m("", "t")})
		assert.ErrorIs(t, err, assignor.ErrInvalidMember, a.Name())
		_, err = a.Assign(map[string]int32{"t": 1}, []assignor.Member{m("a", "t"), m("a", "t")})
		assert.ErrorIs(t, err, assignor.ErrInvalidMember, a.Name())
		_, err = a.Assign(map[string]int32{"t": 1}, []assignor.Member{static(m("a", "t"), "i"), static(m("b", "t"), "i")})
		assert.ErrorIs(t, err, assignor.ErrInvalidMember, a.Name())
		_, err = a.Assign(map[string]int32{"t": -1}, []assignor.Member{m("a", "t")})
		assert.ErrorIs(t, err, assignor.ErrInvalidPartitionCount, a.Name())

		got, err := a.Assign(map[string]int32{"t": 3}, nil)
		require.NoError(t, err, a.Name())
		assert.Empty(t, got, a.Name())
	}
}

// Kafka's AbstractStickyAssignor compares subscriptions with the first
// non-empty one it iterates, so a member with no topics, iterated first,
// would be handed partitions of topics it does not subscribe to. This
// package compares all subscriptions.
func TestStickyMemberWithoutTopics(t *testing.T) {
	for _, a := range []assignor.Assignor{assignor.Sticky(), assignor.CooperativeSticky()} {
		got := assign(t, a, map[string]int32{"t": 4}, m("a"), m("b", "t"))
		assert.Equal(t, want("a", "", "b", "t-0, t-1, t-2, t-3"), got, a.Name())
	}
}

// Claims of partitions that do not exist are ignored. A member listing a
// partition twice counts, as in Kafka, as two claims in one generation:
// the partition is nobody's, goes to whoever needs one (here a again), and
// cooperative-sticky withholds it for a round as a partition changing
// owner.
func TestStickyOddClaims(t *testing.T) {
	members := []assignor.Member{
		owning(m("a", "t"), "t-0, t-7, gone-0, t-1, t-1", 3),
		owning(m("b", "t"), "t-2", 3),
	}
	got := assign(t, assignor.Sticky(), map[string]int32{"t": 4}, members...)
	assert.Equal(t, want("a", "t-0, t-1", "b", "t-2, t-3"), got)
	got = assign(t, assignor.CooperativeSticky(), map[string]int32{"t": 4}, members...)
	assert.Equal(t, want("a", "t-0", "b", "t-2, t-3"), got)
}
