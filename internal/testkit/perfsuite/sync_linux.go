package perfsuite

import (
	"errors"
	"os"
	"syscall"
)

// fdatasync writes f's data (and the metadata needed to read it) to the
// device, as a log's durable flush needs.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
