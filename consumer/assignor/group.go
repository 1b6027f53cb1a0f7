package assignor

import (
	"fmt"
	"slices"
)

// group is the validated input of one Assign call, with topics and
// partitions numbered.
//
// Topics are those some member subscribes to and that have at least one
// partition (Kafka's AbstractPartitionAssignor keeps exactly these in
// partitionsPerTopic), numbered in Java String order. A partition's id
// (pid) numbers all partitions by topic then partition, so ascending pids
// are Kafka's TopicPartitionComparator order.
type group struct {
	ids      []string // member ids, in input order; members are their indexes
	instance []string
	idRank   []int32 // rank of each member id in Java String order

	topicNames []string
	topicHash  []int32 // String.hashCode of each topic
	offsets    []int32 // first pid of each topic; offsets[len(topicNames)] is the total
	topicOf    []int32 // topic of each pid

	// Per member.
	rawTopics  [][]string // subscription, deduplicated and sorted (including topics without partitions)
	topics     [][]int32  // subscribed topics that have partitions, ascending
	subscribed [][]bool   // subscribed[m][t]
	owned      [][]int32  // claimed partitions that exist, in the order given (repeats kept)
	generation []int32    // negative generations normalized to -1
}

func newGroup(partitionsPerTopic map[string]int32, members []Member) (*group, error) {
	for t, n := range partitionsPerTopic {
		if n < 0 {
			return nil, fmt.Errorf("%w: topic %q has %d partitions", ErrInvalidPartitionCount, t, n)
		}
	}
	g := &group{
		ids:        make([]string, len(members)),
		instance:   make([]string, len(members)),
		rawTopics:  make([][]string, len(members)),
		topics:     make([][]int32, len(members)),
		subscribed: make([][]bool, len(members)),
		owned:      make([][]int32, len(members)),
		generation: make([]int32, len(members)),
	}
	seenID := make(map[string]bool, len(members))
	seenInstance := map[string]bool{}
	topicSet := map[string]bool{}
	for i, m := range members {
		switch {
		case m.ID == "":
			return nil, fmt.Errorf("%w: member %d has an empty id", ErrInvalidMember, i)
		case seenID[m.ID]:
			return nil, fmt.Errorf("%w: member id %q appears twice", ErrInvalidMember, m.ID)
		case m.InstanceID != "" && seenInstance[m.InstanceID]:
			return nil, fmt.Errorf("%w: group.instance.id %q appears twice", ErrInvalidMember, m.InstanceID)
		}
		seenID[m.ID] = true
		if m.InstanceID != "" {
			seenInstance[m.InstanceID] = true
		}
		g.ids[i], g.instance[i] = m.ID, m.InstanceID
		g.generation[i] = max(m.Generation, -1)
		raw := slices.Clone(m.Topics)
		slices.SortFunc(raw, javaCompare)
		g.rawTopics[i] = slices.Compact(raw)
		for _, t := range g.rawTopics[i] {
			if partitionsPerTopic[t] > 0 {
				topicSet[t] = true
			}
		}
	}

	g.topicNames = make([]string, 0, len(topicSet))
	for t := range topicSet {
		g.topicNames = append(g.topicNames, t)
	}
	slices.SortFunc(g.topicNames, javaCompare)
	topicIndex := make(map[string]int32, len(g.topicNames))
	g.topicHash = make([]int32, len(g.topicNames))
	g.offsets = make([]int32, len(g.topicNames)+1)
	for t, name := range g.topicNames {
		topicIndex[name] = int32(t)
		g.topicHash[t] = javaStringHash(name)
		g.offsets[t+1] = g.offsets[t] + partitionsPerTopic[name]
	}
	g.topicOf = make([]int32, g.offsets[len(g.topicNames)])
	for t := range g.topicNames {
		for p := g.offsets[t]; p < g.offsets[t+1]; p++ {
			g.topicOf[p] = int32(t)
		}
	}

	for i, m := range members {
		g.subscribed[i] = make([]bool, len(g.topicNames))
		for _, name := range g.rawTopics[i] {
			if t, ok := topicIndex[name]; ok {
				g.topics[i] = append(g.topics[i], t)
				g.subscribed[i][t] = true
			}
		}
		for _, tp := range m.OwnedPartitions {
			if t, ok := topicIndex[tp.Topic]; ok && tp.Partition >= 0 && tp.Partition < g.count(t) {
				g.owned[i] = append(g.owned[i], g.offsets[t]+tp.Partition)
			}
		}
	}

	byID := make([]int, len(members))
	for i := range byID {
		byID[i] = i
	}
	slices.SortFunc(byID, func(a, b int) int { return javaCompare(g.ids[a], g.ids[b]) })
	g.idRank = make([]int32, len(members))
	for rank, i := range byID {
		g.idRank[i] = int32(rank)
	}
	return g, nil
}

// numPartitions returns the number of partitions of all topics.
func (g *group) numPartitions() int { return len(g.topicOf) }

// count returns the number of partitions of topic t.
func (g *group) count(t int32) int32 { return g.offsets[t+1] - g.offsets[t] }

// partitionNumber returns the partition number of pid within its topic.
func (g *group) partitionNumber(pid int32) int32 { return pid - g.offsets[g.topicOf[pid]] }

// topicPartitionHash returns TopicPartition.hashCode of pid.
func (g *group) topicPartitionHash(pid int32) int32 {
	return topicPartitionHash(g.topicHash[g.topicOf[pid]], g.partitionNumber(pid))
}

// memberInfoOrder returns the members sorted as Kafka's
// AbstractPartitionAssignor.MemberInfo compares them: members with a
// group.instance.id first, by instance id, then the others by member id.
func (g *group) memberInfoOrder() []int {
	order := make([]int, len(g.ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ia, ib := g.instance[a], g.instance[b]
		switch {
		case ia != "" && ib != "":
			return javaCompare(ia, ib)
		case ia != "":
			return -1
		case ib != "":
			return 1
		}
		return javaCompare(g.ids[a], g.ids[b])
	})
	return order
}

// result turns per-member partition ids into Assign's result.
func (g *group) result(pids [][]int32) map[string][]TopicPartition {
	out := make(map[string][]TopicPartition, len(g.ids))
	for i, id := range g.ids {
		ps := pids[i]
		slices.Sort(ps)
		tps := make([]TopicPartition, len(ps))
		for j, p := range ps {
			tps[j] = TopicPartition{Topic: g.topicNames[g.topicOf[p]], Partition: g.partitionNumber(p)}
		}
		out[id] = tps
	}
	return out
}

// assignRange is Kafka's RangeAssignor without rack information: for each
// topic, the members subscribed to it in MemberInfo order; with n
// partitions and c members, member i gets the contiguous range starting at
// (n/c)*i + min(i, n%c) of n/c partitions, plus one for the first n%c
// members.
func (g *group) assignRange() [][]int32 {
	out := make([][]int32, len(g.ids))
	perTopic := make([][]int, len(g.topicNames))
	for _, m := range g.memberInfoOrder() {
		for _, t := range g.topics[m] {
			perTopic[t] = append(perTopic[t], m)
		}
	}
	for t, consumers := range perTopic {
		if len(consumers) == 0 {
			continue
		}
		n, c := int(g.count(int32(t))), len(consumers)
		quota, extra := n/c, n%c
		for i, m := range consumers {
			start := int(g.offsets[t]) + quota*i + min(i, extra)
			length := quota
			if i < extra {
				length++
			}
			for p := start; p < start+length; p++ {
				out[m] = append(out[m], int32(p))
			}
		}
	}
	return out
}

// assignRoundRobin is Kafka's RoundRobinAssignor: all partitions, by topic
// then partition, each to the next member in a circular walk over the
// members in MemberInfo order, skipping members not subscribed to its
// topic.
func (g *group) assignRoundRobin() [][]int32 {
	out := make([][]int32, len(g.ids))
	order := g.memberInfoOrder()
	next := 0
	for p := range g.topicOf {
		t := g.topicOf[p]
		// Some member subscribes to every topic, so this ends.
		for !g.subscribed[order[next]][t] {
			next = (next + 1) % len(order)
		}
		m := order[next]
		out[m] = append(out[m], int32(p))
		next = (next + 1) % len(order)
	}
	return out
}
