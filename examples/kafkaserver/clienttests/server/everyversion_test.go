package server_test

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// TestEveryAPIEveryVersion sends every version the server advertises of
// every API it serves, each a default request (kmsg's), and checks that
// the response has kmsg's shape at that version; a version below the
// advertised range closes the connection, as Kafka 4.4's broker refuses
// a version it does not serve.
func TestEveryAPIEveryVersion(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", srv.Addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	c := dial()
	sent := 0
	for _, k := range server.SupportedAPIs() {
		for v := k.MinVersion; v <= k.MaxVersion; v++ {
			req := kmsg.RequestForKey(k.ApiKey)
			switch r := req.(type) {
			case *kmsg.FetchRequest:
				r.MaxWaitMillis = 0
			case *kmsg.DescribeACLsRequest:
				// ANY: a filter with UNKNOWN elements is refused.
				r.ResourceType, r.ResourcePatternType, r.Operation, r.PermissionType = 1, 1, 1, 1
			case *kmsg.ProduceRequest:
				r.Acks = -1 // acks=0 has no response
			case *kmsg.SASLAuthenticateRequest, *kmsg.SASLHandshakeRequest:
				continue // the connection's SASL state; sasl tests cover every version
			}
			versionedRequest(t, c, req, v)
			sent++
		}
		if k.MinVersion > 0 {
			old := dial()
			req := kmsg.RequestForKey(k.ApiKey)
			req.SetVersion(k.MinVersion - 1)
			_, err := rawRequest(t, old, requestFrame(k.ApiKey, k.MinVersion-1, req.AppendTo(nil)))
			require.Error(t, err, "%s v%d below the range was answered", kmsg.NameForKey(k.ApiKey), k.MinVersion-1)
		}
	}
	require.Equal(t, 251, sent, "versions sent (every served version but SASL's)")
}
