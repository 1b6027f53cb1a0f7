//go:build !unix

package vfs

import (
	"io/fs"
	"os"
	"syscall"
)

// syncDir does nothing where a directory cannot be fsynced (Windows journals
// directory changes itself and cannot open a directory as a file; the wasm
// ports have no such call). It still reports a missing directory or a name
// that is not one, so callers see the same errors everywhere.
func syncDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "sync", Path: dir, Err: syscall.ENOTDIR}
	}
	return nil
}
