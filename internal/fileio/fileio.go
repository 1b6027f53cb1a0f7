package fileio

import (
	"errors"
	"os"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// ErrNotSupported is returned by [Map] and [MapGrowing] where the file or
// platform cannot be memory-mapped; callers fall back to reads.
var ErrNotSupported = errors.New("fileio: operation not supported")

// OSFile returns the *os.File behind f, if f is an operating-system file, so
// that callers can use sendfile or mmap. It returns nil otherwise, including
// for files of a [vfs.FaultFS], whose I/O must stay visible to the injector.
func OSFile(f vfs.File) *os.File {
	if o, ok := f.(interface{ OSFile() *os.File }); ok {
		return o.OSFile()
	}
	return nil
}
