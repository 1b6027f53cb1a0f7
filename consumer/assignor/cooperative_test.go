package assignor_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/consumer/assignor"
)

// A member joins a cooperative group of three that own all 64 partitions:
// the first rebalance revokes the partitions that move and gives them to
// no one; the follow-up rebalance, in which the owners no longer own them,
// gives them to the new member. Nothing else moves.
func TestCooperativeTwoPhaseRebalance(t *testing.T) {
	coop := assignor.CooperativeSticky()
	partitions := map[string]int32{"orders": 64}
	var members []assignor.Member
	for i := range 3 {
		members = append(members, m(fmt.Sprintf("consumer-%d", i), "orders"))
	}
	first := assign(t, coop, partitions, members...)
	assert.Empty(t, assignor.Revocations(members, first), "a fresh group revokes nothing")

	members = append(nextRound(members, first, 1), owning(m("consumer-3", "orders"), "", -1))
	joined := members
	round1 := assign(t, coop, partitions, members...)
	require.NoError(t, assignor.ValidateCooperative(members, round1))
	assert.Empty(t, round1["consumer-3"], "every partition it should get is still owned")
	revoked := assignor.Revocations(members, round1)
	withheld := 0
	for id, ps := range revoked {
		assert.NotEqual(t, "consumer-3", id)
		withheld += len(ps)
	}
	assert.Equal(t, 16, withheld)
	for _, mb := range members[:3] {
		assert.Len(t, round1[mb.ID], 16, "%s keeps its share", mb.ID)
		assert.Subset(t, mb.OwnedPartitions, round1[mb.ID], "%s gains nothing in round 1", mb.ID)
	}

	// Each member rejoins owning what round 1 left it.
	members = nextRound(members, round1, 2)
	round2 := assign(t, coop, partitions, members...)
	require.NoError(t, assignor.ValidateCooperative(members, round2))
	assert.Empty(t, assignor.Revocations(members, round2), "the rebalance is complete")
	assert.Len(t, round2["consumer-3"], 16)
	for _, ps := range revoked {
		assert.Subset(t, round2["consumer-3"], ps, "the withheld partitions go to the new member")
	}
	for _, mb := range members[:3] {
		assert.Equal(t, mb.OwnedPartitions, round2[mb.ID])
	}

	// The eager sticky assignor moves the same partitions at once.
	assert.Equal(t, round2, assign(t, assignor.Sticky(), partitions, joined...))
}

// Partitions of a member that left are owned by no one: cooperative-sticky
// assigns them in the first rebalance.
func TestCooperativeMemberLeaves(t *testing.T) {
	partitions := map[string]int32{"orders": 12}
	members := []assignor.Member{m("a", "orders"), m("b", "orders"), m("c", "orders")}
	first := assign(t, assignor.CooperativeSticky(), partitions, members...)
	members = nextRound(members[:2], first, 1)
	got := assign(t, assignor.CooperativeSticky(), partitions, members...)
	assert.Empty(t, assignor.Revocations(members, got))
	assert.Len(t, got["a"], 6)
	assert.Len(t, got["b"], 6)
	assert.Subset(t, got["a"], first["a"])
	assert.Subset(t, got["b"], first["b"])
}

// Under the eager protocol members own nothing when they join, so nothing
// is withheld (and nothing is sticky).
func TestCooperativeStickyUnderEagerProtocol(t *testing.T) {
	partitions := map[string]int32{"orders": 6}
	members := []assignor.Member{m("a", "orders"), m("b", "orders"), m("c", "orders")}
	assert.Equal(t, assign(t, assignor.Sticky(), partitions, members...),
		assign(t, assignor.CooperativeSticky(), partitions, members...))
}

func TestValidateCooperative(t *testing.T) {
	members := []assignor.Member{owning(m("a", "t"), "t-0, t-1", 1), owning(m("b", "t"), "", 1)}
	require.NoError(t, assignor.ValidateCooperative(members, want("a", "t-0", "b", "")))
	err := assignor.ValidateCooperative(members, want("a", "t-0", "b", "t-1"))
	require.ErrorIs(t, err, assignor.ErrInternal)
	assert.Contains(t, err.Error(), "t-1")
	assert.Equal(t, want("a", "t-1"), assignor.Revocations(members, want("a", "t-0", "b", "t-1")))
}
