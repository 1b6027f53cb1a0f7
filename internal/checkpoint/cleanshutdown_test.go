package checkpoint

import (
	"io/fs"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

func TestParseCleanShutdown(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		epoch int64
		err   bool
	}{
		{name: "kafka", in: `{"version":0,"brokerEpoch":42}`, epoch: 42},
		{name: "negative epoch", in: `{"version":0,"brokerEpoch":-1}`, epoch: -1},
		{name: "max epoch", in: `{"version":0,"brokerEpoch":9223372036854775807}`, epoch: 1<<63 - 1},
		{name: "whitespace and order", in: " {\n \"brokerEpoch\" : 7 ,\n \"version\" : 0 }\n", epoch: 7},
		{name: "unknown keys", in: `{"version":0,"brokerEpoch":5,"future":{"a":[1,2]}}`, epoch: 5},
		{name: "other version", in: `{"version":3,"brokerEpoch":5}`, epoch: 5},
		{name: "no version", in: `{"brokerEpoch":5}`, epoch: 5},
		{name: "trailing data ignored", in: `{"brokerEpoch":5} garbage`, epoch: 5},

		{name: "empty", in: "", err: true},
		{name: "no brokerEpoch", in: `{"version":0}`, err: true},
		{name: "brokerEpoch case", in: `{"BrokerEpoch":5}`, err: true},
		{name: "null epoch", in: `{"brokerEpoch":null}`, err: true},
		{name: "string epoch", in: `{"brokerEpoch":"5"}`, err: true},
		{name: "float epoch", in: `{"brokerEpoch":5.0}`, err: true},
		{name: "exponent epoch", in: `{"brokerEpoch":5e3}`, err: true},
		{name: "epoch over int64", in: `{"brokerEpoch":9223372036854775808}`, err: true},
		{name: "array", in: `[1]`, err: true},
		{name: "null", in: `null`, err: true},
		{name: "torn", in: `{"version":0,"broker`, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			epoch, err := parseCleanShutdown("f", []byte(tc.in))
			if tc.err {
				requireCorrupt(t, err, "f", 0)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.epoch, epoch)
		})
	}
}

func TestCleanShutdown(t *testing.T) {
	for _, e := range filesystems(t) {
		t.Run(e.name, func(t *testing.T) {
			found, epoch, err := ReadCleanShutdown(e.fs, e.dir)
			require.NoError(t, err)
			assert.False(t, found)
			assert.Equal(t, int64(-1), epoch)
			require.NoError(t, RemoveCleanShutdown(e.fs, e.dir), "removing a missing marker")

			require.NoError(t, WriteCleanShutdown(e.fs, e.dir, 42))
			assert.Equal(t, `{"version":0,"brokerEpoch":42}`, string(readAll(t, e.fs, e.path(CleanShutdownFile))))
			found, epoch, err = ReadCleanShutdown(e.fs, e.dir)
			require.NoError(t, err)
			assert.True(t, found)
			assert.Equal(t, int64(42), epoch)

			require.NoError(t, RemoveCleanShutdown(e.fs, e.dir))
			found, _, err = ReadCleanShutdown(e.fs, e.dir)
			require.NoError(t, err)
			assert.False(t, found)

			// A torn marker (Kafka writes it in place) still means clean.
			writeRaw(t, e.fs, e.path(CleanShutdownFile), []byte(`{"vers`))
			writeRaw(t, e.fs, e.path(CleanShutdownFile+TempSuffix), []byte(`stale`))
			found, epoch, err = ReadCleanShutdown(e.fs, e.dir)
			assert.True(t, found)
			assert.Equal(t, int64(-1), epoch)
			requireCorrupt(t, err, e.path(CleanShutdownFile), 0)
			require.NoError(t, RemoveCleanShutdown(e.fs, e.dir))
			for _, name := range []string{CleanShutdownFile, CleanShutdownFile + TempSuffix} {
				_, err = e.fs.Stat(e.path(name))
				require.ErrorIs(t, err, fs.ErrNotExist, name)
			}
		})
	}
}

// TestRemoveCleanShutdownDurable checks that the removal survives a crash,
// and that a failure to remove is reported.
func TestRemoveCleanShutdownDurable(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/d"))
	require.NoError(t, mem.SyncDir("/"))
	require.NoError(t, WriteCleanShutdown(mem, "/d", 1))
	found, _, err := ReadCleanShutdown(mem.CrashClone(), "/d")
	require.NoError(t, err)
	require.True(t, found, "the marker is durable")

	require.NoError(t, RemoveCleanShutdown(mem, "/d"))
	found, _, err = ReadCleanShutdown(mem.CrashClone(), "/d")
	require.NoError(t, err)
	require.False(t, found, "the removal is durable")

	require.NoError(t, WriteCleanShutdown(mem, "/d", 1))
	ffs := vfs.NewFaultFS(mem)
	ffs.Inject(vfs.EIO(vfs.OpRemove, CleanShutdownFile, 1))
	require.ErrorIs(t, RemoveCleanShutdown(ffs, "/d"), syscall.EIO)
	ffs.Clear()
	ffs.Inject(vfs.EIO(vfs.OpSyncDir, "", 1))
	require.ErrorIs(t, RemoveCleanShutdown(ffs, "/d"), syscall.EIO)

	// An I/O error reading the marker is not "found".
	ffs.Clear()
	require.NoError(t, WriteCleanShutdown(mem, "/d", 1))
	ffs.Inject(vfs.EIO(vfs.OpRead, CleanShutdownFile, 1))
	found, _, err = ReadCleanShutdown(ffs, "/d")
	require.ErrorIs(t, err, syscall.EIO)
	require.False(t, found)
}
