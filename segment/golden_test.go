package segment

import (
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/testkit/golden"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the segment writer")

// TestGoldenSegment pins a sealed segment written by kafkalite: 12 batches
// of 4 records from base offset 1000 with index.interval.bytes 1024. The
// .log is batches back to back; the indexes hold the entries Kafka's rule
// gives (an entry before a batch once more than 1024 bytes were appended
// since the last one), trimmed, plus the final time-index entry.
func TestGoldenSegment(t *testing.T) {
	e := fsKinds(t)[1]
	cfg := testConfig()
	s := create(t, e, 1000, cfg)
	batches := fill(t, s, 1000, 12, 4, 120, 1700000000000)
	require.NoError(t, s.Seal())
	require.NoError(t, s.Close())

	for _, suffix := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
		name := FileName(1000, suffix)
		got := readFile(t, e, filepath.Join(e.dir, name))
		golden := filepath.Join("testdata", "golden", name+".hex")
		if *update {
			writeHex(t, golden, got)
		}
		require.Equal(t, readHex(t, golden), got, name)
	}

	// The pinned files follow the index package doc: entries name the last
	// offset of the batch that starts at their position; time entries
	// increase.
	entries := readHex(t, filepath.Join("testdata", "golden", FileName(1000, IndexSuffix)+".hex"))
	require.Zero(t, len(entries)%index.OffsetIndexEntryBytes)
	starts := map[int]int64{}
	pos := 0
	for _, b := range batches {
		starts[pos] = header(t, b).LastOffset()
		pos += len(b)
	}
	for i := 0; i < len(entries); i += 8 {
		rel := int64(uint32(entries[i])<<24 | uint32(entries[i+1])<<16 | uint32(entries[i+2])<<8 | uint32(entries[i+3]))
		p := int(uint32(entries[i+4])<<24 | uint32(entries[i+5])<<16 | uint32(entries[i+6])<<8 | uint32(entries[i+7]))
		require.Equal(t, starts[p], 1000+rel, "entry %d", i/8)
	}
}

func readFile(t *testing.T, e testFS, name string) []byte {
	t.Helper()
	f, err := e.fs.Open(name)
	require.NoError(t, err)
	defer f.Close()
	size, err := f.Size()
	require.NoError(t, err)
	b := make([]byte, size)
	_, err = f.ReadAt(b, 0)
	require.NoError(t, err)
	return b
}

func writeHex(t *testing.T, path string, b []byte) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("# Written by `go test ./segment -run TestGoldenSegment -update`.\n")
	for i := 0; i < len(b); i += 16 {
		sb.WriteString(hex.EncodeToString(b[i:min(i+16, len(b))]) + "\n")
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(sb.String()), 0o644))
}

func readHex(t *testing.T, path string) []byte { return readHexBytes(t, path) }

// readHexBytes reads a hex file as writeHex writes it (package golden).
func readHexBytes(t testing.TB, path string) []byte {
	t.Helper()
	return golden.ReadFile(t, path)
}
