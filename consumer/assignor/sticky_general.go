package assignor

import (
	"slices"
	"sort"
)

// generalBuilder is Kafka's AbstractStickyAssignor.GeneralAssignmentBuilder
// without rack information, used when subscriptions differ:
//
//  1. Keep every owned partition whose owner still subscribes to its topic
//     (a member that no longer subscribes loses it: "revocation required").
//  2. Give each unassigned partition (topics with the fewest potential
//     members first) to the member with the fewest partitions, then the
//     lowest member id, that subscribes to its topic.
//  3. Rebalance: while the assignment is not balanced (some member could
//     take a partition from one with two or more more partitions), move
//     partitions (the newly assigned first, unless a revocation is already
//     required, then all) to the member with the fewest partitions, or back
//     to the member that owned it in an older generation, and revert the
//     moves if they did not lower the balance score.
type generalBuilder struct {
	g *group

	// assignment is Kafka's currentAssignment; in[m] says whether member m
	// is in it (members that cannot take part in reassignment leave it
	// while partitions move); pos[p] is p's index in its owner's list.
	assignment [][]int32
	in         []bool
	owner      []int32 // currentPartitionConsumer, -1 for none
	pos        []int32

	topicMembers [][]int32 // topic2AllPotentialConsumers
	maxSize      []int     // partitions of all a member's topics

	// sorted is sortedCurrentSubscriptions: members by partition count,
	// then member id. A member leaves it before its count changes.
	sorted []int32

	prevOwner      []int32 // prevAssignment: the owner in an older generation, -1 for none
	prevGeneration []int32

	movements partitionMovements
}

// generalAssign runs the general algorithm; owned is each member's
// resolved claims, maxGeneration the highest generation of any member.
func (g *group) generalAssign(order []int, owned [][]int32, maxGeneration int32) [][]int32 {
	total := g.numPartitions()
	b := &generalBuilder{
		g:              g,
		assignment:     make([][]int32, len(g.ids)),
		in:             make([]bool, len(g.ids)),
		owner:          make([]int32, total),
		pos:            make([]int32, total),
		topicMembers:   make([][]int32, len(g.topicNames)),
		maxSize:        make([]int, len(g.ids)),
		prevOwner:      make([]int32, total),
		prevGeneration: make([]int32, total),
		movements:      partitionMovements{g: g},
	}
	for p := range total {
		b.owner[p], b.prevOwner[p] = -1, -1
	}
	for _, m := range order {
		for _, t := range g.topics[m] {
			b.topicMembers[t] = append(b.topicMembers[t], int32(m))
			b.maxSize[m] += int(g.count(t))
		}
	}

	// prepopulateCurrentAssignments: claims of members behind the highest
	// generation (or without one) become the previous assignment; for a
	// partition claimed by several, the highest generation, first met
	// among equals.
	for _, m := range order {
		gen := g.generation[m]
		if gen >= maxGeneration {
			continue
		}
		for _, p := range g.owned[m] {
			if b.prevOwner[p] < 0 || gen > b.prevGeneration[p] {
				b.prevOwner[p], b.prevGeneration[p] = int32(m), gen
			}
		}
	}

	// assignOwnedPartitions.
	revocationRequired := false
	assigned := make([]bool, total)
	for m := range g.ids {
		b.in[m] = true
		for _, p := range owned[m] {
			if !g.subscribed[m][g.topicOf[p]] {
				revocationRequired = true
				continue
			}
			b.add(m, p)
			assigned[p] = true
		}
	}

	// All partitions, topics with fewer potential members first, then by
	// topic name; and those not assigned yet, in the same order.
	topicOrder := make([]int32, len(g.topicNames))
	for t := range topicOrder {
		topicOrder[t] = int32(t)
	}
	slices.SortFunc(topicOrder, func(a, b2 int32) int {
		if c := cmpInt(len(b.topicMembers[a]), len(b.topicMembers[b2])); c != 0 {
			return c
		}
		return cmpInt(int(a), int(b2))
	})
	sortedAll := make([]int32, 0, total)
	for _, t := range topicOrder {
		for p := g.offsets[t]; p < g.offsets[t+1]; p++ {
			sortedAll = append(sortedAll, p)
		}
	}
	var unassigned []int32
	for _, p := range sortedAll {
		if !assigned[p] {
			unassigned = append(unassigned, p)
		}
	}

	b.sorted = make([]int32, 0, len(g.ids))
	for m := range g.ids {
		b.sortedAdd(m)
	}
	b.balance(sortedAll, unassigned, revocationRequired)
	return b.assignment
}

// add appends p to m's partitions.
func (b *generalBuilder) add(m int, p int32) {
	b.pos[p] = int32(len(b.assignment[m]))
	b.assignment[m] = append(b.assignment[m], p)
	b.owner[p] = int32(m)
}

// remove takes p from m's partitions (their order does not matter).
func (b *generalBuilder) remove(m int, p int32) {
	ps := b.assignment[m]
	i, last := b.pos[p], ps[len(ps)-1]
	ps[i], b.pos[last] = last, i
	b.assignment[m] = ps[:len(ps)-1]
}

func (b *generalBuilder) size(m int32) int { return len(b.assignment[m]) }

// sortedLess orders members by partition count, then member id.
func (b *generalBuilder) sortedLess(x, y int32) bool {
	if sx, sy := b.size(x), b.size(y); sx != sy {
		return sx < sy
	}
	return b.g.idRank[x] < b.g.idRank[y]
}

func (b *generalBuilder) sortedAdd(m int) {
	i := sort.Search(len(b.sorted), func(i int) bool { return !b.sortedLess(b.sorted[i], int32(m)) })
	b.sorted = slices.Insert(b.sorted, i, int32(m))
}

// sortedRemove removes m; its count must not have changed since it was
// added.
func (b *generalBuilder) sortedRemove(m int) {
	i := sort.Search(len(b.sorted), func(i int) bool { return !b.sortedLess(b.sorted[i], int32(m)) })
	if i < len(b.sorted) && b.sorted[i] == int32(m) {
		b.sorted = slices.Delete(b.sorted, i, i+1)
	}
}

func (b *generalBuilder) balance(sortedAll, unassigned []int32, revocationRequired bool) {
	g := b.g
	initializing := len(b.sorted) == 0 || b.size(b.sorted[len(b.sorted)-1]) == 0

	// maybeAssign: each unassigned partition to the first member, fewest
	// partitions first, subscribed to its topic.
	for _, p := range unassigned {
		t := g.topicOf[p]
		for _, m := range b.sorted {
			if g.subscribed[m][t] {
				b.sortedRemove(int(m))
				b.add(int(m), p)
				b.sortedAdd(int(m))
				break
			}
		}
	}

	// Only partitions of topics with two or more potential members, and
	// members that can gain or lose one, take part from here on.
	movable := func(ps []int32) []int32 {
		return slices.DeleteFunc(ps, func(p int32) bool { return len(b.topicMembers[g.topicOf[p]]) < 2 })
	}
	sortedAll, unassigned = movable(sortedAll), movable(slices.Clone(unassigned))
	var fixed []int
	for m := range g.ids {
		if !b.canParticipate(m) {
			b.sortedRemove(m)
			b.in[m] = false
			fixed = append(fixed, m)
		}
	}

	pre := make([][]int32, len(g.ids))
	for m := range g.ids {
		if b.in[m] {
			pre[m] = slices.Clone(b.assignment[m])
		}
	}
	preScore := b.balanceScore()

	if !revocationRequired {
		b.performReassignments(unassigned)
	}
	performed := b.performReassignments(sortedAll)

	if !initializing && performed && b.balanceScore() >= preScore {
		// Revert. owner, pos and sorted are not used after this.
		for m := range g.ids {
			if b.in[m] {
				b.assignment[m] = pre[m]
			}
		}
	}
	for _, m := range fixed {
		b.in[m] = true
	}
}

// canParticipate reports whether m could gain a partition, or holds one
// of a topic with two or more potential members.
func (b *generalBuilder) canParticipate(m int) bool {
	if len(b.assignment[m]) < b.maxSize[m] {
		return true
	}
	for _, p := range b.assignment[m] {
		if len(b.topicMembers[b.g.topicOf[p]]) >= 2 {
			return true
		}
	}
	return false
}

// balanceScore is the sum of the differences in partition count over all
// pairs of members taking part.
func (b *generalBuilder) balanceScore() int64 {
	var sizes []int
	for m := range b.g.ids {
		if b.in[m] {
			sizes = append(sizes, len(b.assignment[m]))
		}
	}
	slices.Sort(sizes)
	var score int64
	for i, s := range sizes {
		score += int64(s) * int64(2*i-(len(sizes)-1))
	}
	return score
}

// isBalanced reports whether no member could take a partition of one of
// its topics from a member with two or more partitions more.
func (b *generalBuilder) isBalanced() bool {
	if len(b.sorted) == 0 {
		return true
	}
	g := b.g
	lo, hi := b.size(b.sorted[0]), b.size(b.sorted[len(b.sorted)-1])
	if lo >= hi-1 {
		return true
	}
	for _, m := range b.sorted {
		n := b.size(m)
		if n >= hi-1 {
			break // no member has more than n+1; nor for the members after m
		}
		if n == b.maxSize[m] {
			continue
		}
		for _, t := range g.topics[m] {
			for p := g.offsets[t]; p < g.offsets[t+1]; p++ {
				if o := b.owner[p]; o != m && n+1 < b.size(o) {
					return false
				}
			}
		}
	}
	return true
}

// performReassignments moves partitions of list, in order, until the
// assignment is balanced, repeating the pass while it moves any. It reports
// whether it moved any.
func (b *generalBuilder) performReassignments(list []int32) bool {
	g := b.g
	performed := false
	for {
		modified := false
		for _, p := range list {
			if b.isBalanced() {
				break
			}
			t := g.topicOf[p]
			m := b.owner[p]
			// Back to the owner of an older generation when that evens
			// things out. Kafka also moves it there when that member no
			// longer subscribes to the topic (or fails when the member
			// takes no part); this requires the subscription.
			if prev := b.prevOwner[p]; prev >= 0 && b.in[prev] && g.subscribed[prev][t] && b.size(m) > b.size(prev)+1 {
				b.reassign(p, prev)
				performed, modified = true, true
				continue
			}
			for _, o := range b.topicMembers[t] {
				if b.size(m) > b.size(o)+1 {
					// To the member with the fewest partitions that
					// subscribes to the topic.
					for _, to := range b.sorted {
						if g.subscribed[to][t] {
							b.reassign(p, to)
							break
						}
					}
					performed, modified = true, true
					break
				}
			}
		}
		if !modified {
			return performed
		}
	}
}

// reassign moves p, or rather the partition stickiness says to move in its
// place, to member to.
func (b *generalBuilder) reassign(p, to int32) {
	p = b.movements.partitionToBeMoved(p, b.owner[p], to)
	from := b.owner[p]
	if from == to {
		return // cannot happen: the partition to move back is owned by another member
	}
	b.sortedRemove(int(from))
	b.sortedRemove(int(to))
	b.movements.move(p, from, to)
	b.remove(int(from), p)
	b.add(int(to), p)
	b.sortedAdd(int(to))
	b.sortedAdd(int(from))
}

// partitionMovements is Kafka's AbstractStickyAssignor.PartitionMovements:
// the moves made so far, so that a partition moving from a to b can
// instead be one that earlier moved from b to a (of the same topic),
// undoing that move rather than making a second one.
type partitionMovements struct {
	g *group
	// byPartition holds each moved partition's first owner and current
	// owner.
	byPartition map[int32]movement
	// byTopic holds, per topic and (from, to), the partitions so moved:
	// Kafka's HashSets, whose iteration order picks which one moves back.
	byTopic map[int32]map[movement]*javaPartitionSet
}

type movement struct{ from, to int32 }

// partitionToBeMoved is getTheActualPartitionToBeMoved.
func (pm *partitionMovements) partitionToBeMoved(p, from, to int32) int32 {
	moves, ok := pm.byTopic[pm.g.topicOf[p]]
	if !ok {
		return p
	}
	if mv, ok := pm.byPartition[p]; ok {
		from = mv.from
	}
	set, ok := moves[movement{to, from}]
	if !ok {
		return p
	}
	return set.first()
}

// move records that p moves from one member to another.
func (pm *partitionMovements) move(p, from, to int32) {
	if mv, ok := pm.byPartition[p]; ok {
		pm.removeRecord(p, mv)
		if mv.from != to {
			pm.addRecord(p, movement{mv.from, to})
		}
		return
	}
	pm.addRecord(p, movement{from, to})
}

func (pm *partitionMovements) removeRecord(p int32, mv movement) {
	delete(pm.byPartition, p)
	t := pm.g.topicOf[p]
	if pm.byTopic[t][mv].remove(p) {
		delete(pm.byTopic[t], mv)
		if len(pm.byTopic[t]) == 0 {
			delete(pm.byTopic, t)
		}
	}
}

func (pm *partitionMovements) addRecord(p int32, mv movement) {
	if pm.byPartition == nil {
		pm.byPartition = map[int32]movement{}
		pm.byTopic = map[int32]map[movement]*javaPartitionSet{}
	}
	pm.byPartition[p] = mv
	t := pm.g.topicOf[p]
	moves := pm.byTopic[t]
	if moves == nil {
		moves = map[movement]*javaPartitionSet{}
		pm.byTopic[t] = moves
	}
	set := moves[mv]
	if set == nil {
		set = &javaPartitionSet{}
		moves[mv] = set
	}
	set.add(p, pm.g.topicPartitionHash(p))
}
