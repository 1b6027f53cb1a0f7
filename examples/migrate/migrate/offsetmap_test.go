package migrate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOffsetMap checks the runs a copy builds and the two questions asked
// of them: where a source record went (lookup) and where a consumer
// position lands (translate), over gaps on either side.
func TestOffsetMap(t *testing.T) {
	var m offsetMap
	// Source 0..2 -> target 10..12; a gap at source 3; 4..5 -> 13..14;
	// then the target skips 15 (someone else's record): 6 -> 16.
	for _, p := range [][2]int64{{0, 10}, {1, 11}, {2, 12}, {4, 13}, {5, 14}, {6, 16}} {
		m.add(p[0], p[1])
	}
	require.Equal(t, []run{{0, 10, 3}, {4, 13, 2}, {6, 16, 1}}, m.runs())
	require.Equal(t, int64(6), m.count())
	require.False(t, m.identical())

	tests := []struct {
		src      int64
		lookup   int64
		copied   bool
		position int64
	}{
		{src: 0, lookup: 10, copied: true, position: 10},
		{src: 2, lookup: 12, copied: true, position: 12},
		{src: 3, copied: false, position: 13}, // the gap: the next record is source 4
		{src: 5, lookup: 14, copied: true, position: 14},
		{src: 6, lookup: 16, copied: true, position: 16},
		{src: 7, copied: false, position: 17}, // past the end: the target's end
	}
	for _, tt := range tests {
		got, ok := m.lookup(tt.src)
		require.Equal(t, tt.copied, ok, "lookup(%d)", tt.src)
		if ok {
			require.Equal(t, tt.lookup, got, "lookup(%d)", tt.src)
		}
		require.Equal(t, tt.position, m.translate(tt.src, 17), "translate(%d)", tt.src)
	}

	var same offsetMap
	for i := range int64(5) {
		same.add(i, i)
	}
	require.True(t, same.identical())
	require.Len(t, same.runs(), 1)
}

// TestStateSurvivesACrashBetweenMapAndState saves a state, appends runs
// to a map file as a save does but stops before state.json is replaced (a
// crash), and checks that loading drops the extra lines and keeps the map
// the state describes.
func TestStateSurvivesACrashBetweenMapAndState(t *testing.T) {
	store := stateStore{dir: t.TempDir()}
	st := &state{Version: stateVersion, Direction: toCluster, Partitions: map[string]*partitionState{}}
	ps := &partitionState{Topic: "t", Partition: 0}
	st.Partitions[tpKey("t", 0)] = ps
	for _, p := range [][2]int64{{0, 0}, {1, 1}, {3, 2}, {5, 3}} {
		ps.m.add(p[0], p[1])
	}
	snap := st.snapshot()
	require.NoError(t, store.save(snap))
	st.commitSnapshot(snap)

	// The crash: more runs reach the map file, state.json stays.
	f, err := os.OpenFile(store.mapPath("t-0"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("9 9 1\n10 11 1\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	got, err := store.load()
	require.NoError(t, err)
	require.Equal(t, []run{{0, 0, 2}, {3, 2, 1}, {5, 3, 1}}, got.Partitions["t-0"].m.runs())
	info, err := os.Stat(filepath.Join(store.dir, "offsets", "t-0.map"))
	require.NoError(t, err)
	require.Equal(t, got.Partitions["t-0"].MapBytes, info.Size(), "the extra lines are truncated away")
}

// TestStateRefusesDamage checks that damaged state files are refused with
// ErrState rather than read as something else.
func TestStateRefusesDamage(t *testing.T) {
	tests := []struct {
		name  string
		state string
		runs  string
	}{
		{name: "not JSON", state: "{"},
		{name: "other version", state: `{"version": 9}`},
		{name: "inconsistent partition", state: `{"version": 1, "partitions": {"t-0": {"topic": "u", "partition": 0}}}`},
		{name: "runs out of order", state: `{"version": 1, "partitions": {"t-0": {"topic": "t", "partition": 0, "map_bytes": 12}}}`,
			runs: "5 5 1\n1 1 1\n"},
		{name: "garbage run", state: `{"version": 1, "partitions": {"t-0": {"topic": "t", "partition": 0, "map_bytes": 6}}}`,
			runs: "a b c\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := stateStore{dir: t.TempDir()}
			require.NoError(t, os.WriteFile(store.statePath(), []byte(tt.state), 0o644))
			if tt.runs != "" {
				require.NoError(t, os.MkdirAll(filepath.Join(store.dir, "offsets"), 0o755))
				require.NoError(t, os.WriteFile(store.mapPath("t-0"), []byte(tt.runs), 0o644))
			}
			_, err := store.load()
			require.ErrorIs(t, err, ErrState)
		})
	}
}
