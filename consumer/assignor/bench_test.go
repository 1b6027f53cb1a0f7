package assignor_test

import (
	"fmt"
	"testing"

	"github.com/kafkalite/kafkalite/consumer/assignor"
)

// benchGroup builds a group of members over topics×perTopic partitions.
// In "mixed" and "mixed-join", even members also subscribe to an extra
// topic of perTopic partitions, so the sticky assignors take their general
// path. In "join" and "mixed-join", all members but the last own the sticky
// assignment of the group without it (generation 1), as in the first
// rebalance after a member joins.
func benchGroup(members, topics, perTopic int, scenario string) (map[string]int32, []assignor.Member) {
	partitions := map[string]int32{}
	var names []string
	for t := range topics {
		name := fmt.Sprintf("topic-%03d", t)
		names = append(names, name)
		partitions[name] = int32(perTopic)
	}
	mixed := scenario == "mixed" || scenario == "mixed-join"
	if mixed {
		partitions["extra"] = int32(perTopic)
	}
	ms := make([]assignor.Member, members)
	for i := range ms {
		ms[i] = assignor.Member{ID: fmt.Sprintf("consumer-%d-5f1c2a9e", i), Topics: names, Generation: -1}
		if mixed && i%2 == 0 {
			ms[i].Topics = append(append([]string(nil), names...), "extra")
		}
	}
	if scenario == "join" || scenario == "mixed-join" {
		prev, err := assignor.Sticky().Assign(partitions, ms[:members-1])
		if err != nil {
			panic(err)
		}
		for i := range members - 1 {
			ms[i].OwnedPartitions, ms[i].Generation = prev[ms[i].ID], 1
		}
	}
	return partitions, ms
}

func BenchmarkAssign(b *testing.B) {
	for _, size := range []struct{ members, topics, perTopic int }{
		{4, 1, 64},      // the consumer's rebalance target
		{100, 10, 1000}, // 10k partitions
	} {
		for _, scenario := range []string{"fresh", "join", "mixed", "mixed-join"} {
			for _, a := range []assignor.Assignor{assignor.Range(), assignor.RoundRobin(), assignor.Sticky(), assignor.CooperativeSticky()} {
				partitions, members := benchGroup(size.members, size.topics, size.perTopic, scenario)
				total := 0
				for _, n := range partitions {
					total += int(n)
				}
				name := fmt.Sprintf("members=%d,partitions=%d/%s/%s", size.members, total, scenario, a.Name())
				b.Run(name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if _, err := a.Assign(partitions, members); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(total), "ns/partition")
				})
			}
		}
	}
}
