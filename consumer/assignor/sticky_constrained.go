package assignor

import (
	"fmt"
	"slices"
)

// constrainedAssign is Kafka's AbstractStickyAssignor.ConstrainedAssignment-
// Builder without rack information, used when every member subscribes to
// the same topics. With P partitions and C members, minQuota = P/C,
// maxQuota = ceil(P/C), and P%C members end with maxQuota.
//
//  1. Members, in order, keep owned partitions (sorted by partition number,
//     then topic): fewer than minQuota owned → keep all, "under min";
//     maxQuota or more while fewer than P%C members have maxQuota → keep
//     maxQuota; otherwise keep minQuota and, while members may still reach
//     maxQuota, "exactly min". The rest are revoked.
//  2. The unassigned partitions, by topic then partition, go round robin
//     to the "under min" members (by member id) until each has minQuota,
//     then one each to the "exactly min" members in turn.
//
// It returns the assignment and the partitions that change owner (revoked
// from a member, or claimed by several) with the member they go to.
func (g *group) constrainedAssign(order []int, owned [][]int32, multiple []bool) ([][]int32, map[int32]int, error) {
	total := g.numPartitions()
	n := len(order)
	minQuota := total / n
	maxQuota := (total + n - 1) / n
	expectedOverMin := total % n
	overMin := 0

	assignment := make([][]int32, len(g.ids))
	assigned := make([]bool, total)
	revoked := make([]bool, total)
	var under, exactlyMin []int

	keep := func(m int, ps []int32) {
		assignment[m] = append(assignment[m], ps...)
		for _, p := range ps {
			assigned[p] = true
		}
	}
	for _, m := range order {
		var ps []int32
		for _, p := range owned[m] {
			if !multiple[p] {
				ps = append(ps, p)
			}
		}
		slices.SortFunc(ps, func(a, b int32) int {
			if c := cmpInt(int(g.partitionNumber(a)), int(g.partitionNumber(b))); c != 0 {
				return c
			}
			return cmpInt(int(g.topicOf[a]), int(g.topicOf[b]))
		})
		switch {
		case len(ps) < minQuota:
			keep(m, ps)
			under = append(under, m)
		case len(ps) >= maxQuota && overMin < expectedOverMin:
			overMin++
			if overMin == expectedOverMin {
				exactlyMin = exactlyMin[:0]
			}
			keep(m, ps[:maxQuota])
			for _, p := range ps[maxQuota:] {
				revoked[p] = true
			}
		default:
			keep(m, ps[:minQuota])
			for _, p := range ps[minQuota:] {
				revoked[p] = true
			}
			if overMin < expectedOverMin {
				exactlyMin = append(exactlyMin, m)
			}
		}
	}

	byID := func(a, b int) int { return cmpInt(int(g.idRank[a]), int(g.idRank[b])) }
	slices.SortFunc(under, byID)
	slices.SortFunc(exactlyMin, byID)

	transferring := map[int32]int{}
	// The walk over under is a Java iterator: next is the index of the
	// member it returns next; removing the member it returned last steps
	// back.
	next := 0
	for p := range total {
		if assigned[p] {
			continue
		}
		var m int
		switch {
		case next < len(under):
			m = under[next]
			next++
		case len(under) == 0 && len(exactlyMin) == 0:
			return nil, nil, fmt.Errorf("%w: no more unfilled members to assign partition %d of %d to",
				ErrInternal, p, total)
		case len(under) == 0:
			m, exactlyMin = exactlyMin[0], exactlyMin[1:]
		default:
			m, next = under[0], 1
		}
		assignment[m] = append(assignment[m], int32(p))
		if revoked[p] || multiple[p] {
			transferring[int32(p)] = m
		}
		switch len(assignment[m]) {
		case minQuota:
			next--
			under = slices.Delete(under, next, next+1)
			exactlyMin = append(exactlyMin, m)
		case maxQuota:
			overMin++
		}
	}

	// verifyUnfilledMembers.
	if len(under) > 0 {
		if overMin != expectedOverMin {
			return nil, nil, fmt.Errorf("%w: %d members have more than %d partitions, %d expected, and none are left to assign",
				ErrInternal, overMin, minQuota, expectedOverMin)
		}
		for _, m := range under {
			if len(assignment[m]) != minQuota {
				return nil, nil, fmt.Errorf("%w: member %s has %d partitions, fewer than %d, and none are left to assign",
					ErrInternal, g.ids[m], len(assignment[m]), minQuota)
			}
		}
	}
	return assignment, transferring, nil
}
