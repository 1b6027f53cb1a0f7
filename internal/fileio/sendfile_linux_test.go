//go:build linux

package fileio

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/stretchr/testify/require"
)

// TestCopyRangeUsesSendfile checks that, on Linux, a range of an OS file
// sent to a TCP connection goes through sendfile(2) (handled, every byte
// moved by the kernel), not the io.Copy fallback, and that a destination
// without a file descriptor is left to the fallback.
func TestCopyRangeUsesSendfile(t *testing.T) {
	data := bytes.Repeat([]byte("kafkalite"), 10000)
	f, err := vfs.Default.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Write(data)
	require.NoError(t, err)

	c, got := loopback(t)
	done, handled, err := copyRangeKernel(c, f, 9, 50000)
	require.NoError(t, err)
	require.True(t, handled, "sendfile(2) was not used")
	require.Equal(t, int64(50000), done)
	require.NoError(t, c.Close())
	require.Equal(t, data[9:50009], <-got)

	var buf bytes.Buffer
	done, handled, err = copyRangeKernel(&buf, f, 0, 10)
	require.NoError(t, err)
	require.False(t, handled, "a bytes.Buffer has no file descriptor")
	require.Zero(t, done)
}
