package assignor_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/consumer/assignor"
)

var propertySeed = flag.Uint64("assignor.seed", 0, "seed of TestAssignProperties (0: time-based, logged)")

// randomGroup draws topics, members, subscriptions (all equal in about half
// the groups) and owned partitions: mostly a plausible previous assignment,
// sometimes random claims with random generations, duplicates and claims
// of partitions that do not exist.
func randomGroup(rng *rand.Rand) (map[string]int32, []assignor.Member) {
	partitions := map[string]int32{}
	var topics []string
	for i := range 1 + rng.IntN(6) {
		name := fmt.Sprintf("t%d", i)
		topics = append(topics, name)
		partitions[name] = int32(rng.IntN(13)) // some topics have none
	}
	if rng.IntN(4) == 0 {
		topics = append(topics, "missing") // subscribed, not in the map
	}
	equal := rng.IntN(2) == 0
	var shared []string
	for _, t := range topics {
		if rng.IntN(3) > 0 {
			shared = append(shared, t)
		}
	}
	n := 1 + rng.IntN(8)
	members := make([]assignor.Member, n)
	for i := range members {
		mb := assignor.Member{ID: fmt.Sprintf("member-%d", rng.IntN(1000)*10+i), Generation: -1}
		if rng.IntN(4) == 0 {
			mb.InstanceID = fmt.Sprintf("instance-%d", i)
		}
		if equal {
			mb.Topics = slices.Clone(shared)
			rng.Shuffle(len(mb.Topics), func(a, b int) { mb.Topics[a], mb.Topics[b] = mb.Topics[b], mb.Topics[a] })
		} else {
			for _, t := range topics {
				if rng.IntN(2) == 0 {
					mb.Topics = append(mb.Topics, t)
				}
			}
		}
		members[i] = mb
	}
	switch rng.IntN(3) {
	case 0: // a fresh group
	case 1: // owning a previous assignment, some members new
		prev, err := assignor.Sticky().Assign(partitions, members)
		if err != nil {
			panic(err)
		}
		for i := range members {
			if rng.IntN(4) > 0 {
				members[i].OwnedPartitions = prev[members[i].ID]
				members[i].Generation = 5
			}
		}
	default: // random, conflicting claims
		for i := range members {
			members[i].Generation = int32(rng.IntN(5)) - 1
			for range rng.IntN(6) {
				t := topics[rng.IntN(len(topics))]
				members[i].OwnedPartitions = append(members[i].OwnedPartitions,
					assignor.TopicPartition{Topic: t, Partition: int32(rng.IntN(14))})
			}
		}
	}
	return partitions, members
}

func clone(members []assignor.Member) []assignor.Member {
	out := slices.Clone(members)
	for i := range out {
		out[i].Topics = slices.Clone(out[i].Topics)
		out[i].OwnedPartitions = slices.Clone(out[i].OwnedPartitions)
	}
	return out
}

// checkValid checks what every assignor guarantees, and returns the
// partitions of subscribed topics no one got.
func checkValid(t *testing.T, partitions map[string]int32, members []assignor.Member,
	got map[string][]assignor.TopicPartition) []assignor.TopicPartition {
	t.Helper()
	require.Len(t, got, len(members))
	owner := map[assignor.TopicPartition]string{}
	for _, mb := range members {
		ps, ok := got[mb.ID]
		require.True(t, ok, "no entry for %s", mb.ID)
		require.NotNil(t, ps, "nil entry for %s", mb.ID)
		require.True(t, slices.IsSortedFunc(ps, func(a, b assignor.TopicPartition) int {
			if a.Topic != b.Topic {
				return map[bool]int{true: -1, false: 1}[a.Topic < b.Topic]
			}
			return int(a.Partition - b.Partition)
		}), "%s: not sorted: %v", mb.ID, ps)
		for _, p := range ps {
			require.Contains(t, mb.Topics, p.Topic, "%s got %v of a topic it does not subscribe to", mb.ID, p)
			require.True(t, p.Partition >= 0 && p.Partition < partitions[p.Topic], "%v does not exist", p)
			other, dup := owner[p]
			require.False(t, dup, "%v assigned to %s and %s", p, other, mb.ID)
			owner[p] = mb.ID
		}
	}
	var missing []assignor.TopicPartition
	subscribed := map[string]bool{}
	for _, mb := range members {
		for _, topic := range mb.Topics {
			if subscribed[topic] {
				continue
			}
			subscribed[topic] = true
			for p := range partitions[topic] {
				if tp := (assignor.TopicPartition{Topic: topic, Partition: p}); owner[tp] == "" {
					missing = append(missing, tp)
				}
			}
		}
	}
	return missing
}

func sameTopics(members []assignor.Member) bool {
	key := func(mb assignor.Member) string {
		ts := slices.Clone(mb.Topics)
		slices.Sort(ts)
		return fmt.Sprint(slices.Compact(ts))
	}
	for _, mb := range members[1:] {
		if key(mb) != key(members[0]) {
			return false
		}
	}
	return true
}

func spread(got map[string][]assignor.TopicPartition) (lo, hi int) {
	lo = 1 << 30
	for _, ps := range got {
		lo, hi = min(lo, len(ps)), max(hi, len(ps))
	}
	return lo, hi
}

// checkStickyBalance is Kafka's AbstractStickyAssignorTest balance check:
// two members whose counts differ by two or more have no topic in common
// among their partitions (else one could move).
func checkStickyBalance(t *testing.T, got map[string][]assignor.TopicPartition) {
	t.Helper()
	for a, pa := range got {
		for b, pb := range got {
			if len(pa) < len(pb)+2 {
				continue
			}
			for _, x := range pa {
				for _, y := range pb {
					require.NotEqual(t, x.Topic, y.Topic, "%s (%d) could give a partition of %s to %s (%d)",
						a, len(pa), x.Topic, b, len(pb))
				}
			}
		}
	}
}

// TestAssignProperties checks every assignor on random groups: a valid
// assignment (each partition at most once, only to a member subscribed to
// its topic, results sorted, inputs untouched, deterministic); complete
// except, for cooperative-sticky, partitions another member owns and
// revokes; balanced (counts within one) for round robin and the sticky
// assignors when subscriptions are equal, and by Kafka's pairwise check
// otherwise; and cooperative-sticky reaches the sticky assignor's
// guarantees within a few follow-up rebalances.
//
// Replay a failure with -assignor.seed=<the logged seed>.
func TestAssignProperties(t *testing.T) {
	seed := *propertySeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -assignor.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed>>32))
	iterations := 1500
	if testing.Short() {
		iterations = 200
	}
	for i := range iterations {
		partitions, members := randomGroup(rng)
		for _, a := range []assignor.Assignor{assignor.Range(), assignor.RoundRobin(), assignor.Sticky(), assignor.CooperativeSticky()} {
			input := clone(members)
			got, err := a.Assign(partitions, input)
			require.NoError(t, err, "iteration %d, %s", i, a.Name())
			require.Equal(t, members, input, "%s modified its input", a.Name())
			again, err := a.Assign(partitions, input)
			require.NoError(t, err)
			require.Equal(t, got, again, "%s is not deterministic", a.Name())

			ok := t.Run(fmt.Sprintf("%d/%s", i, a.Name()), func(t *testing.T) {
				missing := checkValid(t, partitions, members, got)
				lo, hi := spread(got)
				equal := sameTopics(members)
				switch a.Name() {
				case assignor.RangeName:
					require.Empty(t, missing)
				case assignor.RoundRobinName:
					require.Empty(t, missing)
					if equal {
						require.LessOrEqual(t, hi-lo, 1, "round robin with equal subscriptions")
					}
				case assignor.StickyName:
					require.Empty(t, missing)
					if equal {
						require.LessOrEqual(t, hi-lo, 1, "sticky with equal subscriptions")
					}
					checkStickyBalance(t, got)
				case assignor.CooperativeStickyName:
					require.NoError(t, assignor.ValidateCooperative(members, got))
					revoked := map[assignor.TopicPartition]bool{}
					for _, ps := range assignor.Revocations(members, got) {
						for _, p := range ps {
							revoked[p] = true
						}
					}
					for _, p := range missing {
						require.True(t, revoked[p], "%v is assigned to no one, yet no owner revokes it", p)
					}
					// Follow-up rebalances until nothing is revoked.
					round := members
					for r := 2; len(assignor.Revocations(round, got)) > 0; r++ {
						require.LessOrEqual(t, r, 4, "cooperative rebalancing does not converge")
						round = nextRound(round, got, int32(10+r))
						var err error
						got, err = a.Assign(partitions, round)
						require.NoError(t, err)
						require.NoError(t, assignor.ValidateCooperative(round, got))
					}
					require.Empty(t, checkValid(t, partitions, round, got), "complete after the follow-up rebalances")
					if lo, hi := spread(got); equal {
						require.LessOrEqual(t, hi-lo, 1, "cooperative-sticky with equal subscriptions")
					}
					checkStickyBalance(t, got)
				}
			})
			if !ok {
				t.Fatalf("iteration %d failed; partitions %v, members %+v", i, partitions, members)
			}
		}
	}
}
