package fileio_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/fileio"
	"github.com/kafkalite/kafkalite/log/vfs"
)

func TestMapRoundTrip(t *testing.T) {
	const size = 4096
	name := filepath.Join(t.TempDir(), "00000000000000000000.index")
	f, err := vfs.Default.Create(name)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	require.NoError(t, f.Truncate(size))

	m, err := fileio.Map(f, size, true)
	if err != nil {
		require.ErrorIs(t, err, fileio.ErrNotSupported)
		t.Skip("no mmap on this system")
	}
	require.Len(t, m.Bytes(), size)
	copy(m.Bytes()[100:], "kafka")
	require.NoError(t, m.Sync())
	buf := make([]byte, 5)
	_, err = f.ReadAt(buf, 100)
	require.NoError(t, err)
	assert.Equal(t, "kafka", string(buf), "stores reach the file")

	_, err = f.WriteAt([]byte("lite"), 200)
	require.NoError(t, err)
	assert.Equal(t, "lite", string(m.Bytes()[200:204]), "writes reach the mapping")

	require.NoError(t, m.Close())
	assert.Nil(t, m.Bytes())
	assert.ErrorIs(t, m.Sync(), vfs.ErrClosed)
	require.NoError(t, m.Close(), "a second Close returns nil")

	r, err := vfs.Default.Open(name)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	ro, err := fileio.Map(r, size, false)
	require.NoError(t, err)
	assert.Equal(t, "kafka", string(ro.Bytes()[100:105]))
	require.NoError(t, ro.Sync(), "Sync of a read-only mapping does nothing")
	require.NoError(t, ro.Close())

	empty, err := fileio.Map(r, 0, false)
	require.NoError(t, err)
	assert.Empty(t, empty.Bytes())
	require.NoError(t, empty.Close())
}

func TestMapErrors(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	writeFile(t, vfs.Default, name, "abc")
	mem := vfs.NewMem()
	writeFile(t, mem, "/f", "abc")
	tests := []struct {
		name        string
		fsys        vfs.FS
		path        string
		size        int64
		unsupported bool
	}{
		{"memory file", mem, "/f", 3, true},
		{"fault file over OS", vfs.NewFaultFS(vfs.Default), name, 3, true},
		{"beyond the end", vfs.Default, name, 4, false},
		{"negative size", vfs.Default, name, -1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.fsys.Open(tc.path)
			require.NoError(t, err)
			defer func() { require.NoError(t, f.Close()) }()
			m, err := fileio.Map(f, tc.size, false)
			require.Error(t, err)
			assert.Nil(t, m)
			if tc.unsupported {
				assert.ErrorIs(t, err, fileio.ErrNotSupported)
			}
		})
	}
}

func TestMapGrowing(t *testing.T) {
	name := filepath.Join(t.TempDir(), "00000000000000000000.log")
	f, err := vfs.Default.Create(name)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	_, err = f.Write([]byte("kafka"))
	require.NoError(t, err)

	m, err := fileio.MapGrowing(f, 1<<20)
	if err != nil {
		require.ErrorIs(t, err, fileio.ErrNotSupported)
		t.Skip("no growing mappings on this system")
	}
	defer func() { require.NoError(t, m.Close()) }()
	require.Len(t, m.Bytes(), 1<<20, "mapped beyond the end of the file")
	assert.Equal(t, "kafka", string(m.Bytes()[:5]))
	_, err = f.WriteAt([]byte("lite"), 5)
	require.NoError(t, err)
	assert.Equal(t, "kafkalite", string(m.Bytes()[:9]), "appended bytes show in the mapping")
	big := make([]byte, 100_000)
	big[len(big)-1] = 'x'
	_, err = f.WriteAt(big, 9)
	require.NoError(t, err)
	assert.Equal(t, byte('x'), m.Bytes()[9+len(big)-1], "also pages past the first")

	mem := vfs.NewMem()
	writeFile(t, mem, "/f", "abc")
	mf, err := mem.Open("/f")
	require.NoError(t, err)
	defer func() { require.NoError(t, mf.Close()) }()
	_, err = fileio.MapGrowing(mf, 3)
	require.ErrorIs(t, err, fileio.ErrNotSupported)
}

// writeFile creates name in fsys holding contents, synced and closed.
func writeFile(t *testing.T, fsys vfs.FS, name, contents string) {
	t.Helper()
	f, err := fsys.Create(name)
	require.NoError(t, err)
	_, err = f.Write([]byte(contents))
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

func TestOSFile(t *testing.T) {
	mem := vfs.NewMem()
	f, err := mem.Create("/f")
	require.NoError(t, err)
	assert.Nil(t, fileio.OSFile(f))

	name := filepath.Join(t.TempDir(), "f")
	f, err = vfs.Default.Create(name)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	osf := fileio.OSFile(f)
	require.NotNil(t, osf)
	assert.Equal(t, name, osf.Name())

	ff, err := vfs.NewFaultFS(vfs.Default).Open(name)
	require.NoError(t, err)
	defer func() { require.NoError(t, ff.Close()) }()
	assert.Nil(t, fileio.OSFile(ff), "fault files hide the OS file")
}
