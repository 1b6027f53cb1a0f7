package perfsuite

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/record"
)

// TestEveryWorkloadOnEveryPath runs the workloads at a small size on each
// path with each codec: every record read back is checked against the one
// written, so a path that lost, reordered or changed one fails.
func TestEveryWorkloadOnEveryPath(t *testing.T) {
	ctx := context.Background()
	for _, codec := range []record.Compression{record.None, record.LZ4} {
		for _, w := range Workloads {
			for _, p := range []Path{Baseline, Raw, Client} {
				t.Run(fmt.Sprintf("%s/%s/%s", codec, w, p), func(t *testing.T) {
					o := Options{Records: 5_000, PointReads: 300, Codec: codec, Dir: t.TempDir()}
					res, err := Run(ctx, w, p, o)
					require.NoError(t, err)
					require.Equal(t, RecordsOf(w, o), res.Records)
					require.Positive(t, res.Elapsed)
				})
			}
		}
	}
}

// TestReadsCatchChangedRecords: a value other than the one written is an
// ErrMismatch.
func TestReadsCatchChangedRecords(t *testing.T) {
	vals := values(3, 100)
	require.NoError(t, check(1, Key(1), vals[1], vals))
	require.ErrorIs(t, check(1, Key(1), vals[2], vals), ErrMismatch)
	require.ErrorIs(t, check(1, Key(2), vals[1], vals), ErrMismatch)
}

// TestValuesVary: values are about the size asked, JSON-like, and differ
// from record to record (a codec sees realistic ratios).
func TestValuesVary(t *testing.T) {
	a, b := Value(1, 100), Value(2, 100)
	require.Len(t, a, 100)
	require.Len(t, Value(3, 1024), 1024)
	require.NotEqual(t, a, b)
	require.Equal(t, byte('{'), a[0])
	require.Len(t, Key(7), 16)
}

// BenchmarkWorkloads runs each workload on each path at docs/performance.md's sizes,
// reporting records/s and CPU per record; a benchmark iteration is one
// whole run; records/s counts only the timed part of each run (not the
// writes before a read workload). The ratio table, with the baseline
// interleaved, is go run ./internal/testkit/cmd/perfsuite.
func BenchmarkWorkloads(b *testing.B) {
	ctx := context.Background()
	for _, codec := range []record.Compression{record.None, record.LZ4} {
		for _, w := range Workloads {
			for _, p := range []Path{Baseline, Raw, Client} {
				if p == Baseline && codec != record.None {
					continue // the baseline does not compress
				}
				b.Run(fmt.Sprintf("%s/%s/%s", w, p, codec), func(b *testing.B) {
					o := DefaultOptions()
					o.Codec, o.Dir = codec, b.TempDir()
					b.ReportAllocs()
					b.SetBytes(int64(RecordsOf(w, o) * (16 + ValueSize(w))))
					var recs int
					var elapsed, cpu float64
					for b.Loop() {
						res, err := Run(ctx, w, p, o)
						if err != nil {
							b.Fatal(err)
						}
						recs += res.Records
						elapsed += res.Elapsed.Seconds()
						cpu += float64(res.CPU)
					}
					b.ReportMetric(float64(recs)/elapsed, "records/s")
					b.ReportMetric(cpu/float64(recs), "cpu-ns/record")
				})
			}
		}
	}
}

// TestShared: many goroutines through one producer, every record in the
// topic once.
func TestShared(t *testing.T) {
	res, err := Shared(context.Background(), t.TempDir(), 6, 4, 4_000, 200, record.None)
	require.NoError(t, err)
	require.Equal(t, 4_000, res.Records)
}
