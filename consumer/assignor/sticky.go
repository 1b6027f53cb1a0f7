package assignor

import (
	"slices"
)

// assignSticky is Kafka's AbstractStickyAssignor.assignPartitions without
// rack information, followed for cooperative-sticky by
// CooperativeStickyAssignor.adjustAssignment.
func (g *group) assignSticky(cooperative bool) ([][]int32, error) {
	if len(g.ids) == 0 {
		return nil, nil
	}
	// Kafka's leader keeps the subscriptions in a java.util.HashMap filled
	// in JoinGroup order; the claims below are resolved, and the
	// constrained algorithm keeps owned partitions, in its iteration order.
	hashes := make([]int32, len(g.ids))
	for i, id := range g.ids {
		hashes[i] = javaStringHash(id)
	}
	order := javaHashMapOrder(hashes)

	owned, multiple, maxGeneration := g.resolveClaims(order)

	var (
		assignment   [][]int32
		transferring map[int32]int // partition → the member it moves to
		err          error
	)
	if g.allSubscriptionsEqual() {
		assignment, transferring, err = g.constrainedAssign(order, owned, multiple)
		if err != nil {
			return nil, err
		}
	} else {
		assignment = g.generalAssign(order, owned, maxGeneration)
		if cooperative {
			transferring = g.partitionsTransferringOwnership(assignment)
		}
	}
	if cooperative {
		// adjustAssignment: a partition changing owner is withheld from
		// its new owner until its current owner has revoked it.
		for p, m := range transferring {
			if i := slices.Index(assignment[m], p); i >= 0 {
				assignment[m] = slices.Delete(assignment[m], i, i+1)
			}
		}
	}
	return assignment, nil
}

// allSubscriptionsEqual reports whether every member subscribes to the same
// set of topics (including topics without partitions), which selects
// Kafka's constrained algorithm.
//
// Kafka compares each subscription with the first non-empty one it meets,
// so a member with an empty subscription iterated before the others does
// not make the subscriptions unequal, and the constrained algorithm then
// gives it partitions of topics it does not subscribe to. This compares
// every subscription with every other.
func (g *group) allSubscriptionsEqual() bool {
	for _, ts := range g.rawTopics[1:] {
		if !slices.Equal(ts, g.rawTopics[0]) {
			return false
		}
	}
	return true
}

// resolveClaims is the claim resolution of Kafka's
// AbstractStickyAssignor.allSubscriptionsEqual: members are visited in
// order; a partition claimed by several members stays with the highest
// generation; two claims in the same generation make it nobody's
// (multiple[p] is then set, and the partition counts as changing owner).
// It returns each member's remaining owned partitions, the claimed
// partitions with multiple owners, and the highest generation of any
// member (-1 if none is known).
func (g *group) resolveClaims(order []int) (owned [][]int32, multiple []bool, maxGeneration int32) {
	owned = make([][]int32, len(g.ids))
	multiple = make([]bool, g.numPartitions())
	claimedBy := make([]int32, g.numPartitions())
	for i := range claimedBy {
		claimedBy[i] = -1
	}
	maxGeneration = -1
	for _, m := range order {
		gen := g.generation[m]
		maxGeneration = max(maxGeneration, gen)
		for _, p := range g.owned[m] {
			other := claimedBy[p]
			if other < 0 {
				owned[m] = append(owned[m], p)
				claimedBy[p] = int32(m)
				continue
			}
			otherGen := g.generation[other]
			switch {
			case gen == otherGen:
				// Also when a member lists a partition twice.
				multiple[p] = true
				owned[other] = removeFirst(owned[other], p)
				claimedBy[p] = int32(m)
			case gen > otherGen:
				owned[m] = append(owned[m], p)
				owned[other] = removeFirst(owned[other], p)
				claimedBy[p] = int32(m)
			}
		}
	}
	return owned, multiple, maxGeneration
}

// removeFirst removes the first p from ps, as java.util.List.remove(Object).
func removeFirst(ps []int32, p int32) []int32 {
	if i := slices.Index(ps, p); i >= 0 {
		return slices.Delete(ps, i, i+1)
	}
	return ps
}

// partitionsTransferringOwnership is Kafka's
// CooperativeStickyAssignor.computePartitionsTransferringOwnership, used
// after the general algorithm: the partitions assigned to a member that did
// not claim them and revoked from a member that did.
func (g *group) partitionsTransferringOwnership(assignment [][]int32) map[int32]int {
	if !slices.ContainsFunc(g.owned, func(ps []int32) bool { return len(ps) > 0 }) {
		return nil // nothing is owned, so nothing changes owner
	}
	added := map[int32]int{}
	revoked := map[int32]bool{}
	for m, assigned := range assignment {
		claimed := make(map[int32]bool, len(g.owned[m]))
		for _, p := range g.owned[m] {
			claimed[p] = true
		}
		kept := make(map[int32]bool, len(assigned))
		for _, p := range assigned {
			kept[p] = true
			if !claimed[p] {
				added[p] = m
			}
		}
		for _, p := range g.owned[m] {
			if !kept[p] {
				revoked[p] = true
			}
		}
	}
	for p := range added {
		if !revoked[p] {
			delete(added, p)
		}
	}
	return added
}
