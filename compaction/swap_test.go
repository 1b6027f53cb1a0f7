package compaction

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

func writeFile(t *testing.T, fsys vfs.FS, name string, data []byte) {
	t.Helper()
	f, err := fsys.Create(name)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func names(t *testing.T, fsys vfs.FS, dir string) []string {
	t.Helper()
	es, err := fsys.List(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out
}

func batchAt(t *testing.T, base int64, n int) []byte {
	t.Helper()
	b, err := record.AppendBatch(nil, record.BatchHeader{BaseOffset: base, PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		record.DefaultLevel, []record.Record{{Key: []byte("k"), Value: []byte("v"), OffsetDelta: 0}})
	require.NoError(t, err)
	_ = n
	return b
}

func TestRecoverDir(t *testing.T) {
	fn := segment.FileName
	tests := []struct {
		name  string
		files map[string][]byte
		want  []string
	}{
		{"nothing to do", map[string][]byte{fn(0, ".log"): nil, fn(0, ".index"): nil}, []string{fn(0, ".index"), fn(0, ".log")}},
		{"cleaned files removed", map[string][]byte{fn(0, ".log"): nil, fn(0, ".log.cleaned"): nil, fn(0, ".index.cleaned"): nil},
			[]string{fn(0, ".log")}},
		{"incomplete swap rolled back", map[string][]byte{fn(0, ".log"): nil, fn(0, ".index"): nil, fn(0, ".index.swap"): nil, fn(0, ".log.cleaned"): nil},
			[]string{fn(0, ".index"), fn(0, ".log")}},
		{"swap completed, the segments it covers removed", map[string][]byte{
			fn(0, ".log"): nil, fn(0, ".index"): nil, fn(0, ".txnindex"): nil, fn(5, ".log"): nil, fn(5, ".timeindex"): nil, fn(20, ".log"): nil,
			fn(0, ".log.swap"): batchAt(t, 12, 1), fn(0, ".index.swap"): nil, fn(3, ".snapshot"): nil},
			[]string{fn(0, ".index"), fn(0, ".log"), fn(20, ".log"), fn(3, ".snapshot")}},
		{"empty swap replaces its own base", map[string][]byte{fn(0, ".log"): nil, fn(0, ".txnindex"): nil, fn(0, ".log.swap"): nil},
			[]string{fn(0, ".log")}},
		{"half renamed swap", map[string][]byte{fn(0, ".log"): batchAt(t, 3, 1), fn(0, ".index.swap"): nil, fn(0, ".timeindex.swap"): nil, fn(9, ".log"): nil},
			[]string{fn(0, ".index"), fn(0, ".log"), fn(0, ".timeindex"), fn(9, ".log")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			require.NoError(t, mem.MkdirAll("/p"))
			for name, data := range tc.files {
				writeFile(t, mem, filepath.Join("/p", name), data)
			}
			_, err := RecoverDir(mem, "/p")
			require.NoError(t, err)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			require.Equal(t, want, names(t, mem, "/p"))
		})
	}
}

func TestGroupSegments(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/p"))
	var segs []*segment.Segment
	for i, base := range []int64{0, 10, 20, 30} {
		s, err := segment.Create(mem, "/p", base, segment.DefaultConfig(), 0)
		require.NoError(t, err)
		b := batchAt(t, base, 1)
		h, err := record.ParseHeader(b)
		require.NoError(t, err)
		for range i + 1 {
			require.NoError(t, s.Append(b, &h))
			h.BaseOffset++
			require.NoError(t, record.SetBaseOffset(b, h.BaseOffset))
		}
		segs = append(segs, s)
		defer s.Close()
	}
	size := func(i int) int64 { return segs[i].Size() }
	g := groupSegments(segs, 40, size(0)+size(1), 40)
	require.Len(t, g, 3)
	require.Equal(t, []*segment.Segment{segs[0], segs[1]}, g[0])
	g = groupSegments(segs, 25, 1<<30, 40)
	require.Len(t, g, 1)
	require.Len(t, g[0], 3, "only segments below the end")
}
