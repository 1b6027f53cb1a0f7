package s3store

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/log/remote/remotetest"
	"github.com/stretchr/testify/require"
)

// benchSegmentBytes is the size of the benchmarks' segment: a 64 MiB .log.
const benchSegmentBytes = 64 << 20

// BenchmarkCopy copies a segment with a 64 MiB .log (in four 16 MiB
// parts, the defaults) to the in-memory S3 server on loopback, over HTTP:
// the store's own cost (checksum pass, SigV4's SHA-256 of each body,
// HTTP) and the server's. Compare with BenchmarkPlainCopy.
func BenchmarkCopy(b *testing.B) {
	ctx := context.Background()
	srv := startServer(b)
	store := srv.newStore(b, srv.testConfig())
	s := remotetest.NewSegment("bench", 0, 0, benchSegmentBytes, false)
	data := s.Data()
	b.SetBytes(benchSegmentBytes)
	b.ReportAllocs()
	for b.Loop() {
		_, err := store.CopyLogSegmentData(ctx, s.Meta, data)
		require.NoError(b, err)
	}
}

// BenchmarkPlainCopy writes the same 64 MiB to a file and fsyncs it: what
// keeping the segment on a local disk costs.
func BenchmarkPlainCopy(b *testing.B) {
	s := remotetest.NewSegment("bench", 0, 0, benchSegmentBytes, false)
	name := filepath.Join(b.TempDir(), "segment.log")
	b.SetBytes(benchSegmentBytes)
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Create(name)
		require.NoError(b, err)
		_, err = f.Write(s.Log)
		require.NoError(b, err)
		require.NoError(b, f.Sync())
		require.NoError(b, f.Close())
	}
}
