package logging

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOrDefault(t *testing.T) {
	var buf bytes.Buffer
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))

	l := OrDefault(nil).With("component", "consumer")
	l.Info("routine")
	l.Debug("chatter")
	l.Warn("dropped from the group", "group", "g")
	l.Error("failed")
	out := buf.String()
	require.NotContains(t, out, "routine")
	require.NotContains(t, out, "chatter")
	require.Contains(t, out, `level=WARN msg="dropped from the group" component=consumer group=g`)
	require.Contains(t, out, `level=ERROR msg=failed component=consumer`)

	given := slog.New(slog.NewTextHandler(&buf, nil))
	require.Same(t, given, OrDefault(given))
}
