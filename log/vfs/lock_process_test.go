package vfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// helperEnv, when set in the environment, makes the test binary act as a
// helper process instead of running tests (the os/exec test pattern).
const (
	helperEnv     = "KAFKALITE_VFS_TEST_HELPER"
	helperPathEnv = "KAFKALITE_VFS_TEST_HELPER_PATH"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "lock" {
		os.Exit(lockHelper(os.Getenv(helperPathEnv)))
	}
	os.Exit(m.Run())
}

// lockHelper tries to take the lock at name and prints "acquired" or
// "locked".
func lockHelper(name string) int {
	l, err := Default.Lock(name)
	switch {
	case err == nil:
		fmt.Println("acquired")
		if err := l.Close(); err != nil {
			fmt.Println(err)
			return 2
		}
		return 0
	case errors.Is(err, ErrLocked):
		fmt.Println("locked")
		return 0
	default:
		fmt.Println(err)
		return 2
	}
}

func TestLockAcrossProcesses(t *testing.T) {
	if !crossProcessLocks {
		t.Skip("no flock on this system: Lock only excludes holders in this process")
	}
	name := filepath.Join(t.TempDir(), "LOCK")
	tryInChild := func() string {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=lock", helperPathEnv+"="+name)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "helper output: %s", out)
		return strings.TrimSpace(string(out))
	}

	l, err := Default.Lock(name)
	require.NoError(t, err)
	assert.Equal(t, "locked", tryInChild(), "the child sees our lock")
	require.NoError(t, l.Close())
	assert.Equal(t, "acquired", tryInChild(), "the child takes the released lock")

	l, err = Default.Lock(name)
	require.NoError(t, err, "the child released it on exit")
	require.NoError(t, l.Close())
}

// TestFlockWithoutRegistry checks the OS half of the lock alone: a second
// descriptor of the same file cannot take it.
func TestFlockWithoutRegistry(t *testing.T) {
	if !crossProcessLocks {
		t.Skip("no flock on this system")
	}
	name := filepath.Join(t.TempDir(), "LOCK")
	f1, err := os.Create(name)
	require.NoError(t, err)
	defer func() { require.NoError(t, f1.Close()) }()
	f2, err := os.Open(name)
	require.NoError(t, err)
	defer func() { require.NoError(t, f2.Close()) }()

	require.NoError(t, lockFile(f1))
	assert.ErrorIs(t, lockFile(f2), ErrLocked)
}
