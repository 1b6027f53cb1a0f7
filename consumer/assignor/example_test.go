package assignor_test

import (
	"fmt"

	"github.com/kafkalite/kafkalite/consumer/assignor"
)

// The examples of Kafka's RangeAssignor and RoundRobinAssignor javadoc.
func Example() {
	partitions := map[string]int32{"t0": 3, "t1": 3}
	members := []assignor.Member{
		{ID: "C0", Topics: []string{"t0", "t1"}, Generation: -1},
		{ID: "C1", Topics: []string{"t0", "t1"}, Generation: -1},
	}
	for _, a := range []assignor.Assignor{assignor.Range(), assignor.RoundRobin()} {
		got, err := a.Assign(partitions, members)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-10s C0: %v  C1: %v\n", a.Name(), got["C0"], got["C1"])
	}
	// Output:
	// range      C0: [t0-0 t0-1 t1-0 t1-1]  C1: [t0-2 t1-2]
	// roundrobin C0: [t0-0 t0-2 t1-1]  C1: [t0-1 t1-0 t1-2]
}

// A member joins a cooperative group: the partitions it should take are
// first revoked from their owners and withheld, then assigned in the
// follow-up rebalance.
func ExampleCooperativeSticky() {
	coop := assignor.CooperativeSticky()
	partitions := map[string]int32{"orders": 4}
	members := []assignor.Member{
		{ID: "a", Topics: []string{"orders"}, Generation: 1,
			OwnedPartitions: []assignor.TopicPartition{
				{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1},
				{Topic: "orders", Partition: 2}, {Topic: "orders", Partition: 3}}},
		{ID: "b", Topics: []string{"orders"}, Generation: -1}, // new
	}
	round1, err := coop.Assign(partitions, members)
	if err != nil {
		panic(err)
	}
	fmt.Println("round 1:", round1["a"], round1["b"], "revoked:", assignor.Revocations(members, round1))

	// a revokes orders-2 and orders-3 and rejoins; everyone reports what
	// it owns now.
	members[0].OwnedPartitions, members[0].Generation = round1["a"], 2
	members[1].OwnedPartitions, members[1].Generation = round1["b"], 2
	round2, err := coop.Assign(partitions, members)
	if err != nil {
		panic(err)
	}
	fmt.Println("round 2:", round2["a"], round2["b"], "revoked:", assignor.Revocations(members, round2))
	// Output:
	// round 1: [orders-0 orders-1] [] revoked: map[a:[orders-2 orders-3]]
	// round 2: [orders-0 orders-1] [orders-2 orders-3] revoked: map[]
}

// The group's assignor is the one most members prefer among those all
// support.
func ExampleSelectProtocol() {
	name, err := assignor.SelectProtocol([]assignor.MemberProtocols{
		{MemberID: "a", Protocols: []string{"cooperative-sticky", "range"}},
		{MemberID: "b", Protocols: []string{"cooperative-sticky", "range"}},
		{MemberID: "c", Protocols: []string{"range"}},
	})
	fmt.Println(name, err)
	p, err := assignor.RebalanceProtocol([]assignor.Assignor{assignor.Range(), assignor.CooperativeSticky()})
	fmt.Println(p, err)
	// Output:
	// range <nil>
	// EAGER <nil>
}
