package log

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKRaftMetadataLogLeftAlone: a KRaft broker's log directory holds the
// metadata log, __cluster_metadata-0 (the raft client's: quorum-state,
// snapshot .checkpoint files, its own segments), and with tiered storage a
// remote-log-index-cache directory. Kafka's LogManager.loadLogs loads
// neither as a partition; kafkalite must not either. It adopted the
// metadata log as a topic "__cluster_metadata", warned about the raft
// client's files as strays, wrote producer snapshots and index files into
// the raft client's directory, and would have applied its retention and
// recovery to it. The fixture is a real broker's directory
// (testdata/README.md).
func TestKRaftMetadataLogLeftAlone(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "kafka-logs")
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "kraft-broker"))))
	cache := filepath.Join(dir, "remote-log-index-cache")
	require.NoError(t, os.Mkdir(cache, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cache, "42_MmuP5jq9QZeKhqiV0xk3fw.index"), []byte{0, 0, 0, 0}, 0o644))
	metadataLog := filepath.Join(dir, "__cluster_metadata-0")
	before := treeSums(t, metadataLog, cache)

	var logs bytes.Buffer
	cfg := DefaultConfig()
	cfg.NodeID = 1 // the broker's node.id
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// Not adopted unless asked: refused before a byte is written.
	whole := treeSums(t, dir)
	_, err := Open(ctx, dir, cfg)
	require.ErrorIs(t, err, ErrNotLogDir)
	require.Equal(t, whole, treeSums(t, dir), "a refused Open writes nothing")
	cfg.AdoptBrokerDirectory = true
	for i := range 3 {
		// Adopting the directory, reopening what kafkalite wrote, and
		// opening a topic store in which an earlier kafkalite listed the
		// metadata log as the topic it adopted.
		if i == 2 {
			store := `{"version":1,"topics":{"__cluster_metadata":{"id":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":1}}}`
			require.NoError(t, os.WriteFile(filepath.Join(dir, topicStoreFile), []byte(store), 0o644))
		}
		d, err := Open(ctx, dir, cfg)
		require.NoError(t, err)
		require.Empty(t, d.Topics())
		_, err = d.Partition("__cluster_metadata", 0)
		require.ErrorIs(t, err, ErrUnknownTopicOrPartition)
		require.NoError(t, d.Close())
		require.Empty(t, logs.String(), "warnings")
		require.Equal(t, before, treeSums(t, metadataLog, cache), "the raft client's files and the index cache are untouched")
	}
}

// treeSums maps every file under dirs to the SHA-256 of its contents.
func treeSums(t *testing.T, dirs ...string) map[string][sha256.Size]byte {
	t.Helper()
	out := map[string][sha256.Size]byte{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[path] = sha256.Sum256(b)
			return nil
		})
		require.NoError(t, err)
	}
	return out
}
