package matrix

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCases(t *testing.T) {
	for _, tc := range []struct {
		dims  Dims
		count int
		first string
		last  string
	}{
		{0, 1, "default", "default"},
		{Codecs, 5, "codec=none", "codec=zstd"},
		{Isolations, 2, "isolation=read_uncommitted", "isolation=read_committed"},
		{Codecs | Polls, 10, "codec=none/poll=multi-batch", "codec=zstd/poll=single-batch"},
		{All, 40, "codec=none/isolation=read_uncommitted/poll=multi-batch/fs=mem", "codec=zstd/isolation=read_committed/poll=single-batch/fs=os"},
	} {
		cases := Cases(tc.dims)
		require.Len(t, cases, tc.count)
		require.Equal(t, tc.first, cases[0].String())
		require.Equal(t, tc.last, cases[len(cases)-1].String())
		names := map[string]bool{}
		for _, c := range cases {
			names[c.String()] = true
		}
		require.Len(t, names, tc.count, "names are distinct")
	}
}

func TestCaseSizing(t *testing.T) {
	multi, single := Case{Poll: MultiBatch}, Case{Poll: SingleBatch}
	require.Greater(t, single.BatchSize(), multi.BatchSize())
	require.GreaterOrEqual(t, single.RecordsPerBatch(), single.MaxPollRecords(), "a single-batch poll ends inside its batch")
	require.Less(t, multi.RecordsPerBatch()*10, multi.MaxPollRecords(), "a multi-batch poll spans many batches")
}

func TestRunNamesSubtests(t *testing.T) {
	var seen []string
	Run(t, Codecs|FSes, func(t *testing.T, c Case) {
		seen = append(seen, t.Name())
		fsys, dir := c.Dir(t)
		require.NotNil(t, fsys)
		require.NotEmpty(t, dir)
	})
	require.Len(t, seen, 10)
	require.Equal(t, "TestRunNamesSubtests/codec=none/fs=mem", seen[0])
	require.Equal(t, "TestRunNamesSubtests/codec=zstd/fs=os", seen[9])
}
