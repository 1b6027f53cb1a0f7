package checkpoint

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fuzz targets feed arbitrary bytes to the parsers. Invariants checked
// by every target:
//
//   - nothing panics; an error is a *FormatError matching ErrCorrupt;
//   - what parses is accepted by the matching writer, whose bytes parse
//     again to the same value, and writing that value again gives the same
//     bytes (the writers are deterministic).
//
// Seeds: every file in testdata/ and the inputs below.

// addSeeds adds the files in testdata/ and extra to the corpus.
func addSeeds(f *testing.F, extra ...string) {
	f.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "*"))
	require.NoError(f, err)
	for _, name := range names {
		if fi, err := os.Stat(name); err != nil || fi.IsDir() {
			continue
		}
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

func requireFormatError(t *testing.T, err error) {
	t.Helper()
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	require.ErrorIs(t, err, ErrCorrupt)
}

func FuzzOffsets(f *testing.F) {
	addSeeds(f, "", "0", "0\n", "0\r\n1\r\nt 0 1\r\n", "0\n1\nt 0 1 \n", "0\n2147483647\n", "0\n1\n t 0 1\n",
		"0\n2\na 2147483647 9223372036854775807\nb 0 -9223372036854775808", "0\n1\nt -1 0\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseOffsets("f", data)
		if err != nil {
			requireFormatError(t, err)
			return
		}
		enc, err := appendOffsets(nil, got)
		require.NoError(t, err)
		again, err := parseOffsets("f", enc)
		require.NoError(t, err)
		require.Equal(t, got, again)
		enc2, err := appendOffsets(nil, again)
		require.NoError(t, err)
		require.Equal(t, enc, enc2)
	})
}

func FuzzLeaderEpochs(f *testing.F) {
	addSeeds(f, "0\n2\n5 10\n3 20\n", "0\n3\n0 0\n1 0\n2 5\n", "0\n1\n2147483647 9223372036854775807\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseLeaderEpochs("f", data)
		if err != nil {
			requireFormatError(t, err)
			return
		}
		enc, err := appendLeaderEpochs(nil, entries)
		require.NoError(t, err)
		again, err := parseLeaderEpochs("f", enc)
		require.NoError(t, err)
		require.Equal(t, entries, again)

		// The cache, loaded as Kafka loads the file and then driven by
		// operations drawn from the entries, agrees at every step with a
		// model built on a map keyed by epoch, as Kafka's TreeMap is.
		c, err := NewLeaderEpochCache(entries)
		require.NoError(t, err)
		m := epochModel{}
		for _, e := range entries {
			m.assign(e)
		}
		require.Equal(t, m.entries(), c.Entries())
		requireMonotonic(t, c.Entries())
		for i, e := range entries {
			before := c.Entries()
			var changed bool
			switch i % 4 {
			case 0, 1:
				e := EpochEntry{e.Epoch / 2, e.StartOffset / 3}
				changed, err = c.Assign(e.Epoch, e.StartOffset)
				require.NoError(t, err)
				m.assign(e)
			case 2:
				changed = c.TruncateFromEnd(e.StartOffset)
				m.truncateFromEnd(e.StartOffset)
			case 3:
				changed = c.TruncateFromStart(e.StartOffset)
				m.truncateFromStart(e.StartOffset)
			}
			require.Equal(t, m.entries(), c.Entries(), "op %d on %v", i, before)
			require.Equal(t, !slices.Equal(before, c.Entries()), changed, "op %d on %v", i, before)
			requireMonotonic(t, c.Entries())
			if epoch, ok := c.LatestEpoch(); ok {
				got, end := c.EndOffsetFor(epoch, 1<<62)
				require.Equal(t, epoch, got)
				require.Equal(t, int64(1<<62), end)
			}
		}
	})
}

// epochModel is Kafka's LeaderEpochFileCache rules over a map, the shape
// of Kafka's TreeMap<Integer, EpochEntry>, for FuzzLeaderEpochs.
type epochModel map[int32]int64

func (m epochModel) entries() []EpochEntry {
	var out []EpochEntry
	for _, epoch := range slices.Sorted(maps.Keys(m)) {
		out = append(out, EpochEntry{epoch, m[epoch]})
	}
	return out
}

func (m epochModel) assign(e EpochEntry) {
	all := m.entries()
	if len(all) > 0 {
		if last := all[len(all)-1]; last.Epoch == e.Epoch && e.StartOffset >= last.StartOffset {
			return
		}
	}
	for i := len(all) - 1; i >= 0 && (all[i].Epoch >= e.Epoch || all[i].StartOffset >= e.StartOffset); i-- {
		delete(m, all[i].Epoch)
	}
	m[e.Epoch] = e.StartOffset
}

func (m epochModel) truncateFromEnd(end int64) {
	all := m.entries()
	if end < 0 || len(all) == 0 || all[len(all)-1].StartOffset < end {
		return
	}
	for i := len(all) - 1; i >= 0 && all[i].StartOffset >= end; i-- {
		delete(m, all[i].Epoch)
	}
}

func (m epochModel) truncateFromStart(start int64) {
	var last *EpochEntry
	for _, e := range m.entries() {
		if e.StartOffset > start {
			break
		}
		delete(m, e.Epoch)
		last = &e
	}
	if last != nil {
		m[last.Epoch] = start
	}
}

func FuzzPartitionMetadata(f *testing.F) {
	addSeeds(f, "version: 0\ntopic_id: scQOWnwvTT6aG2yNLk9wgQ==\n", "version:\t9\r\ntopic_id: _____________________w\nx",
		"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "scQOWnwvTT6aG2yNLk9wgR")
	f.Fuzz(func(t *testing.T, data []byte) {
		// The id parser on its own: what parses prints canonically and
		// parses back to the same id.
		if id, err := ParseTopicID(string(data)); err == nil {
			s := id.String()
			require.Len(t, s, 22)
			back, err := ParseTopicID(s)
			require.NoError(t, err)
			require.Equal(t, id, back)
		} else {
			require.ErrorIs(t, err, ErrInvalid)
		}

		id, err := parsePartitionMetadata("f", data)
		if err != nil {
			requireFormatError(t, err)
			return
		}
		require.False(t, id.IsZero())
		enc, err := appendPartitionMetadata(nil, id)
		require.NoError(t, err)
		require.Equal(t, "version: 0\ntopic_id: "+id.String(), string(enc))
		again, err := parsePartitionMetadata("f", enc)
		require.NoError(t, err)
		require.Equal(t, id, again)
	})
}

func FuzzMetaProperties(f *testing.F) {
	addSeeds(f, "a=x\\\n  y\n", "\\\n\n#c\nb=2\n", "a=\\uD83D\\uDE00\\uD83D\n", "k\\ e\\=y:v\\u00e9\\\r\n \\\\", "\\",
		"version=0\nbroker.id=5\ncluster.id= c \n", "version=1\nnode.id=1\ncluster.id=c\ndirectory.id=DH4dKzpPTl2ci3ppWEc2JQ==\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		// The properties format on its own.
		props, err := parseProperties("f", data)
		if err != nil {
			requireFormatError(t, err)
		} else {
			enc := appendProperties(nil, props, goldenDate)
			again, err := parseProperties("f", enc)
			require.NoError(t, err)
			require.Equal(t, props, again, "%q", enc)
			require.Equal(t, enc, appendProperties(nil, again, goldenDate))
		}

		mp, err := parseMetaProperties("f", data)
		if err != nil {
			requireFormatError(t, err)
			return
		}
		require.NoError(t, mp.Validate())
		enc, err := appendMetaProperties(nil, mp, goldenDate)
		require.NoError(t, err)
		again, err := parseMetaProperties("f", enc)
		require.NoError(t, err)
		require.Equal(t, mp, again, "%q", enc)
		enc2, err := appendMetaProperties(nil, again, goldenDate)
		require.NoError(t, err)
		require.Equal(t, enc, enc2)
	})
}

func FuzzCleanShutdown(f *testing.F) {
	addSeeds(f, `{"brokerEpoch":-0}`, `{"brokerEpoch":1,"brokerEpoch":2}`, `{"version":"x","brokerEpoch":3}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		epoch, err := parseCleanShutdown("f", data)
		if err != nil {
			requireFormatError(t, err)
			return
		}
		enc := appendCleanShutdown(nil, epoch)
		again, err := parseCleanShutdown("f", enc)
		require.NoError(t, err)
		require.Equal(t, epoch, again)
	})
}
