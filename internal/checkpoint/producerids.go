package checkpoint

import (
	"fmt"
	"strconv"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// ProducerIDsFile is the name of kafkalite's producer id allocator file in a
// log directory. Kafka has no such file (its controller allocates producer
// ids in the KRaft metadata log) and ignores it.
//
// Format, in the style of Kafka's checkpoints: a version line "0", then the
// first producer id not yet reserved:
//
//	0
//	3000
const ProducerIDsFile = "kafkalite-producer-ids"

// ReadNextProducerID reads the first unreserved producer id from path. A
// missing file is an error matching fs.ErrNotExist; anything but a version
// line 0 and a line with a non-negative int64 (decimal, as
// strconv.ParseInt reads it) is a [*FormatError] matching [ErrCorrupt].
func ReadNextProducerID(fsys vfs.FS, path string) (int64, error) {
	data, err := readFile(fsys, path, maxSmallFileBytes)
	if err != nil {
		return 0, err
	}
	return parseNextProducerID(path, data)
}

// appendNextProducerID appends the file's contents for next.
func appendNextProducerID(dst []byte, next int64) []byte { return fmt.Appendf(dst, "0\n%d\n", next) }

func parseNextProducerID(path string, data []byte) (int64, error) {
	s := lineScanner{data: data}
	line, ok := s.next()
	if !ok || string(line) != "0" {
		return 0, corruptf(path, 1, "want version line 0, got %q", line)
	}
	line, ok = s.next()
	if !ok {
		return 0, corruptf(path, 2, "missing the next producer id")
	}
	n, err := strconv.ParseInt(string(line), 10, 64)
	if err != nil || n < 0 {
		return 0, corruptf(path, 2, "next producer id %q is not a non-negative int64", line)
	}
	if line, ok := s.next(); ok || len(line) > 0 {
		return 0, corruptf(path, 3, "unexpected line %q after the producer id", line)
	}
	return n, nil
}

// WriteNextProducerID durably replaces path with next as the first
// unreserved producer id ([WriteFileAtomic]).
func WriteNextProducerID(fsys vfs.FS, path string, next int64) error {
	if next < 0 {
		return fmt.Errorf("%w: negative next producer id %d", ErrInvalid, next)
	}
	return WriteFileAtomic(fsys, path, appendNextProducerID(nil, next))
}
