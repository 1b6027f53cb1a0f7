package server

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// authzPending are the APIs served without authorization only: with
// Config.AuthorizerClassName set they are neither advertised nor
// answered, until each has its row in authzRules.
var authzPending = map[int16]bool{}

// TestEveryAPIHasAnAuthzRule: an API added to the table gets its
// authorization rule, or is listed as pending (and then not served with
// authorization on).
func TestEveryAPIHasAnAuthzRule(t *testing.T) {
	for key := range apis {
		_, ruled := authzRules[key]
		require.True(t, ruled != authzPending[key], "%s: a rule in authzRules or a line in authzPending, not both", kmsg.NameForKey(key))
	}
	for key := range authzRules {
		_, served := apis[key]
		require.True(t, served, "%s has a rule but is not served", kmsg.NameForKey(key))
	}
	s := &Server{authz: nil}
	require.True(t, s.served(kmsg.ShareFetch.Int16()))
}

func TestJavaHost(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.7":         "10.0.0.7",
		"::1":              "0:0:0:0:0:0:0:1",
		"fd00::ab:1":       "fd00:0:0:0:0:0:ab:1",
		"::ffff:127.0.0.1": "127.0.0.1",
		"not-an-address":   "not-an-address",
	} {
		require.Equal(t, want, javaHost(in), in)
	}
}
