package server_test

import (
	"context"
	"encoding/base64"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// findCoordinator sends a FindCoordinator for one key at version v and
// returns its answer: error code, node, host and port.
func findCoordinator(t *testing.T, c net.Conn, kind int8, key string, v int16) (int16, int32, string, int32) {
	t.Helper()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = kind, key, []string{key}
	resp := versionedRequest(t, c, req, v).(*kmsg.FindCoordinatorResponse)
	if v >= 4 {
		require.Len(t, resp.Coordinators, 1)
		co := resp.Coordinators[0]
		return co.ErrorCode, co.NodeID, co.Host, co.Port
	}
	return resp.ErrorCode, resp.NodeID, resp.Host, resp.Port
}

// TestFindCoordinatorCreatesInternalTopic: as Kafka 4.4's getCoordinator,
// the first lookup of a coordinator whose internal topic does not exist
// makes the topic and answers COORDINATOR_NOT_AVAILABLE with no node (-1,
// "", -1); the next lookups, at every version, name the broker. Groups,
// transactional ids and share partitions alike, each on a server of its
// own; kafka-python's admin client, which does not retry it, reports
// describing a group on a fresh broker as that error.
func TestFindCoordinatorCreatesInternalTopic(t *testing.T) {
	for _, tc := range []struct {
		name     string
		kind     int8
		topic    string
		versions []int16 // the first is the first lookup's
	}{
		{"group", 0, "__consumer_offsets", []int16{0, 1, 2, 3, 4, 5, 6}},
		{"group v4", 0, "__consumer_offsets", []int16{4, 0, 6}},
		{"transaction", 1, "__transaction_state", []int16{1, 0, 2, 3, 4, 5, 6}},
		{"share", 2, "__share_group_state", []int16{6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, cl, id := newVersionsConn(t)
			key := "k"
			if tc.kind == 2 {
				key = "g:" + base64.RawURLEncoding.EncodeToString(id[:]) + ":0"
			}
			code, node, host, port := findCoordinator(t, c, tc.kind, key, tc.versions[0])
			require.Equal(t, kerr.CoordinatorNotAvailable.Code, code, "first lookup")
			require.Equal(t, int32(-1), node)
			require.Empty(t, host)
			require.Equal(t, int32(-1), port)
			topics, err := kadm.NewClient(cl).ListTopicsWithInternal(context.Background(), tc.topic)
			require.NoError(t, err)
			require.True(t, topics.Has(tc.topic), "the lookup made %s", tc.topic)
			for _, v := range append(tc.versions, tc.versions[0]) {
				code, node, host, port = findCoordinator(t, c, tc.kind, key, v)
				require.Zero(t, code, "v%d", v)
				require.NotEqual(t, int32(-1), node, "v%d", v)
				require.NotEmpty(t, host, "v%d", v)
				require.Positive(t, port, "v%d", v)
			}
		})
	}
}

// TestFindCoordinatorAfterRestart: a coordinator whose internal topic
// exists already (on disk across a restart) is found at the first lookup.
func TestFindCoordinatorAfterRestart(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	lookup := func() (int16, int32) {
		c, err := net.Dial("tcp", srv.Addr)
		require.NoError(t, err)
		defer c.Close()
		code, node, _, _ := findCoordinator(t, c, 0, "g", 3)
		return code, node
	}
	code, _ := lookup()
	require.Equal(t, kerr.CoordinatorNotAvailable.Code, code, "the lookup makes __consumer_offsets")
	srv.Restart(t)
	code, node := lookup()
	require.Zero(t, code, "__consumer_offsets is in the directory")
	require.NotEqual(t, int32(-1), node)
}
