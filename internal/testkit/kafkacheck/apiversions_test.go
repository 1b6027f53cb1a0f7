package kafkacheck

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiRanges asks the node at addr for its ApiVersions: key → [min, max].
func apiRanges(t *testing.T, addr string) map[int16][2]int16 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, resp.ErrorCode)
	out := map[int16][2]int16{}
	for _, k := range resp.ApiKeys {
		out[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	return out
}

// TestAPIVersionsAsKafka compares the server's ApiVersions answer with
// Kafka 4.4's broker's, API by API: every API both serve has Kafka's
// range, and the APIs Kafka's broker serves that the server does not are
// the list below, so that a change on either side is noticed.
func TestAPIVersionsAsKafka(t *testing.T) {
	k := Get(t)
	b := k.NewBroker(t, nil)
	b.Start()
	kafka := apiRanges(t, b.Bootstrap())
	b.Stop()
	s := startKafkaServer(t, k)
	ours := apiRanges(t, s.addr)

	var report []string
	var differ []string
	keys := make([]int16, 0, len(kafka))
	for key := range kafka {
		keys = append(keys, key)
	}
	for key := range ours {
		if _, ok := kafka[key]; !ok {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	var notServed, notKafkas []string
	for _, key := range keys {
		name := kmsg.NameForKey(key)
		kr, inKafka := kafka[key]
		or, inOurs := ours[key]
		switch {
		case !inOurs:
			notServed = append(notServed, name)
		case !inKafka:
			notKafkas = append(notKafkas, name)
		case kr != or:
			differ = append(differ, fmt.Sprintf("%s: Kafka %d–%d, server %d–%d", name, kr[0], kr[1], or[0], or[1]))
		}
		report = append(report, fmt.Sprintf("%d %s kafka=%v server=%v", key, name, kr, or))
	}
	t.Logf("ApiVersions:\n%s", strings.Join(report, "\n"))
	t.Logf("Kafka's broker serves, the server does not: %s", strings.Join(notServed, ", "))
	t.Logf("the server serves, Kafka's broker does not: %s", strings.Join(notKafkas, ", "))
	require.Empty(t, differ, "ranges that differ from Kafka 4.4's")
	// What Kafka's broker serves and the server leaves out, each for a
	// reason the server's README gives: transaction markers between
	// brokers, delegation tokens, changes to the brokers and KRaft
	// voters, the share coordinator's state RPCs (brokers to the share
	// coordinator) and KIP-1071's streams groups.
	require.Equal(t, []string{
		"WriteTxnMarkers", "CreateDelegationToken", "RenewDelegationToken", "ExpireDelegationToken",
		"DescribeDelegationToken", "UnregisterBroker", "AddRaftVoter", "RemoveRaftVoter",
		"InitializeShareGroupState", "ReadShareGroupState", "WriteShareGroupState", "DeleteShareGroupState",
		"ReadShareGroupStateSummary", "StreamsGroupHeartbeat", "StreamsGroupDescribe",
		"StreamsGroupTopologyDescriptionUpdate", "UnregisterController",
	}, notServed, "the APIs Kafka's broker serves that the server does not")
	require.Empty(t, notKafkas, "the server serves only APIs Kafka's broker serves")
}
