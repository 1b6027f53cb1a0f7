//go:build unix

package vfs

import (
	"errors"
	"os"
)

// syncDir opens the directory and fsyncs it, which makes its entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(fsync(d), d.Close())
}
