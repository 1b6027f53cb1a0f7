package coordinator

import (
	"cmp"
	"maps"
	"slices"
)

// TopicID is a topic's id as Kafka's requests and records carry it: the 16
// bytes of log.TopicDescription.ID (which is their base64 form).
type TopicID [16]byte

// partitionEpochs are partitions of topics, each with an epoch: for a
// member's assigned partitions and those pending revocation, the member
// epoch at which each was assigned (Kafka's assignment epochs); in a target
// assignment, unused (0).
type partitionEpochs map[TopicID]map[int32]int32

// clone copies a.
func (a partitionEpochs) clone() partitionEpochs {
	out := make(partitionEpochs, len(a))
	for id, ps := range a {
		out[id] = maps.Clone(ps)
	}
	return out
}

// has reports whether a holds the partition.
func (a partitionEpochs) has(id TopicID, p int32) bool {
	_, ok := a[id][p]
	return ok
}

// add puts the partition into a with epoch e.
func (a partitionEpochs) add(id TopicID, p, e int32) {
	ps := a[id]
	if ps == nil {
		ps = map[int32]int32{}
		a[id] = ps
	}
	ps[p] = e
}

// count is the number of partitions in a.
func (a partitionEpochs) count() int {
	n := 0
	for _, ps := range a {
		n += len(ps)
	}
	return n
}

// samePartitions reports whether a and b hold the same partitions,
// whatever their epochs.
func samePartitions(a, b partitionEpochs) bool {
	if a.count() != b.count() {
		return false
	}
	for id, ps := range a {
		for p := range ps {
			if !b.has(id, p) {
				return false
			}
		}
	}
	return true
}

// equalEpochs reports whether a and b hold the same partitions at the same
// epochs.
func equalEpochs(a, b partitionEpochs) bool {
	if a.count() != b.count() {
		return false
	}
	for id, ps := range a {
		for p, e := range ps {
			if f, ok := b[id][p]; !ok || f != e {
				return false
			}
		}
	}
	return true
}

// sortedTopics returns a's topic ids in byte order.
func (a partitionEpochs) sortedTopics() []TopicID {
	ids := slices.Collect(maps.Keys(a))
	slices.SortFunc(ids, func(x, y TopicID) int { return cmpID(x, y) })
	return ids
}

func cmpID(x, y TopicID) int {
	for i := range x {
		if c := cmp.Compare(x[i], y[i]); c != 0 {
			return c
		}
	}
	return 0
}

// sortedPartitions returns ps's partitions in order.
func sortedPartitions(ps map[int32]int32) []int32 {
	out := slices.Collect(maps.Keys(ps))
	slices.Sort(out)
	return out
}

// assignTopic is a topic a server-side assignor assigns: its id and
// partition count.
type assignTopic struct {
	id         TopicID
	partitions int32
}

// assignMember is a member as a server-side assignor sees it: its id, the
// topics it subscribes to (that exist) and its current target partitions.
type assignMember struct {
	id     string
	topics map[TopicID]bool
	target partitionEpochs
}

// The server-side assignors of consumer groups (group.consumer.assignors;
// a member's group.remote.assignor picks one).
const (
	// AssignorUniform spreads the subscribed partitions evenly over the
	// members, each partition to one member subscribed to its topic, and
	// moves as few partitions as the balance allows when members or
	// partitions change (Kafka's UniformAssignor's aim; its exact choices
	// may differ).
	AssignorUniform = "uniform"
	// AssignorRange gives each member subscribed to a topic a contiguous
	// range of its partitions, members in member id order, the first
	// partitions%members members one more (Kafka's RangeAssignor's
	// ranges).
	AssignorRange = "range"
)

// assign computes a target assignment of topics to members with the named
// assignor (one of the constants above; the caller checked it).
func assign(name string, members []assignMember, topics map[TopicID]assignTopic) map[string]partitionEpochs {
	out := make(map[string]partitionEpochs, len(members))
	for _, m := range members {
		out[m.id] = partitionEpochs{}
	}
	slices.SortFunc(members, func(a, b assignMember) int { return cmp.Compare(a.id, b.id) })
	ids := slices.Collect(maps.Keys(topics))
	slices.SortFunc(ids, func(x, y TopicID) int { return cmpID(x, y) })
	if name == AssignorRange {
		for _, id := range ids {
			var subs []string
			for _, m := range members {
				if m.topics[id] {
					subs = append(subs, m.id)
				}
			}
			if len(subs) == 0 {
				continue
			}
			n := topics[id].partitions
			per, extra := n/int32(len(subs)), n%int32(len(subs))
			p := int32(0)
			for i, mid := range subs {
				k := per
				if int32(i) < extra {
					k++
				}
				for range k {
					out[mid].add(id, p, 0)
					p++
				}
			}
		}
		return out
	}

	// Uniform: each member keeps what it had that is still valid and not
	// kept by another; every other partition goes to the eligible member
	// with the fewest; then partitions move from a member with at least
	// two more than an eligible one, until none can.
	count := map[string]int{}
	owned := map[TopicID]map[int32]string{}
	for _, m := range members {
		for _, id := range m.target.sortedTopics() {
			t, ok := topics[id]
			if !ok || !m.topics[id] {
				continue
			}
			for _, p := range sortedPartitions(m.target[id]) {
				if p >= t.partitions || owned[id][p] != "" {
					continue
				}
				if owned[id] == nil {
					owned[id] = map[int32]string{}
				}
				owned[id][p] = m.id
				out[m.id].add(id, p, 0)
				count[m.id]++
			}
		}
	}
	fewest := func(id TopicID, except string) string {
		best := ""
		for _, m := range members {
			if !m.topics[id] || m.id == except {
				continue
			}
			if best == "" || count[m.id] < count[best] {
				best = m.id
			}
		}
		return best
	}
	for _, id := range ids {
		for p := range topics[id].partitions {
			if owned[id][p] != "" {
				continue
			}
			mid := fewest(id, "")
			if mid == "" {
				break // no member subscribes to the topic
			}
			if owned[id] == nil {
				owned[id] = map[int32]string{}
			}
			owned[id][p] = mid
			out[mid].add(id, p, 0)
			count[mid]++
		}
	}
	// Balance: each move lowers the sum of squared counts, so this ends.
	for moved := true; moved; {
		moved = false
		for _, id := range ids {
			for p := range topics[id].partitions {
				from := owned[id][p]
				if from == "" {
					continue
				}
				to := fewest(id, from)
				if to == "" || count[from] <= count[to]+1 {
					continue
				}
				delete(out[from][id], p)
				if len(out[from][id]) == 0 {
					delete(out[from], id)
				}
				out[to].add(id, p, 0)
				owned[id][p] = to
				count[from]--
				count[to]++
				moved = true
			}
		}
	}
	return out
}
