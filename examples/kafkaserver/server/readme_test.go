package server_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
)

// TestREADMEListsTheAPIs: the module's README's table of the APIs served
// (examples/kafkaserver/README.md, between its <!-- apis --> marks) names every API SupportedAPIs advertises, with
// the same versions, and no other.
func TestREADMEListsTheAPIs(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(readme), "<!-- apis -->")
	require.True(t, ok, "the README has no <!-- apis --> mark")
	table, _, ok = strings.Cut(table, "<!-- /apis -->")
	require.True(t, ok, "the README has no <!-- /apis --> mark")

	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(table), "\n")[2:] { // after the header and its rule
		cells := strings.Split(line, "|")
		require.GreaterOrEqual(t, len(cells), 4, "a row of the table: %q", line)
		names := strings.Split(strings.TrimSpace(cells[1]), ", ")
		versions := strings.Split(strings.TrimSpace(cells[2]), ", ")
		if v, ok := strings.CutSuffix(versions[0], " each"); ok {
			versions = nil
			for range names {
				versions = append(versions, v)
			}
		}
		require.Len(t, versions, len(names), "a version range per API: %q", line)
		for i, name := range names {
			v := versions[i]
			if !strings.Contains(v, "–") {
				v += "–" + v
			}
			listed[strings.ToLower(name)] = v
		}
	}
	advertised := map[string]string{}
	for _, k := range server.SupportedAPIs() {
		advertised[strings.ToLower(kmsg.NameForKey(k.ApiKey))] = fmt.Sprintf("%d–%d", k.MinVersion, k.MaxVersion)
	}
	require.Equal(t, advertised, listed)
}
