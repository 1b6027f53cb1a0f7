package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// CleanShutdownFile is the name of the clean shutdown marker in the root of
// a log directory (Kafka's CleanShutdownFileHandler; the package doc gives
// its contents and what it means to Kafka). Part of the on-disk format.
const CleanShutdownFile = ".kafka_cleanshutdown"

// WriteCleanShutdown writes the clean shutdown marker into the log
// directory dir: the JSON {"version":0,"brokerEpoch":<brokerEpoch>} with no
// final newline, as Kafka writes it at clean shutdown, after every log of
// the directory has been flushed and closed. It uses [WriteFileAtomic]:
// when it returns nil the marker is durable; a crash before leaves no
// marker (Kafka writes the file in place, so a crash can leave it torn,
// which Kafka still counts as clean).
//
// With the marker, Kafka trusts the directory's indexes, producer snapshots
// and checkpoints as they are and recovers nothing; without it, it
// rebuilds every segment after the recovery point. Write it only if those
// files are exactly what Kafka would have written.
func WriteCleanShutdown(fsys vfs.FS, dir string, brokerEpoch int64) error {
	return WriteFileAtomic(fsys, filepath.Join(dir, CleanShutdownFile), appendCleanShutdown(nil, brokerEpoch))
}

func appendCleanShutdown(dst []byte, brokerEpoch int64) []byte {
	dst = append(dst, `{"version":0,"brokerEpoch":`...)
	dst = strconv.AppendInt(dst, brokerEpoch, 10)
	return append(dst, '}')
}

// ReadCleanShutdown reports whether the log directory dir has a clean
// shutdown marker and, if so, the broker epoch in it.
//
// A missing marker returns (false, -1, nil). A marker that is present is
// found, whatever its contents: Kafka decides "clean" on its existence
// alone. If its contents are not a JSON object with an integer brokerEpoch
// (other keys, including version, are ignored, as Kafka ignores them), the
// result is (true, -1, err) with err a [*FormatError] matching
// [ErrCorrupt], which the caller may ignore as Kafka does. Any other error
// is an I/O error, with found false.
func ReadCleanShutdown(fsys vfs.FS, dir string) (found bool, brokerEpoch int64, err error) {
	path := filepath.Join(dir, CleanShutdownFile)
	data, err := readFile(fsys, path, maxSmallFileBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, -1, nil
	case errors.Is(err, ErrCorrupt):
		return true, -1, err
	case err != nil:
		return false, -1, err
	}
	epoch, err := parseCleanShutdown(path, data)
	if err != nil {
		return true, -1, err
	}
	return true, epoch, nil
}

func parseCleanShutdown(file string, data []byte) (int64, error) {
	// Jackson reads the first value and ignores what follows it; so does a
	// json.Decoder.
	var content map[string]json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&content); err != nil || content == nil {
		return -1, corruptf(file, 0, "not a JSON object")
	}
	raw, ok := content["brokerEpoch"]
	if !ok {
		return -1, corruptf(file, 0, "no brokerEpoch")
	}
	epoch, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return -1, corruptf(file, 0, "brokerEpoch %q is not an int64", clip(raw))
	}
	return epoch, nil
}

// RemoveCleanShutdown removes the clean shutdown marker of the log
// directory dir (and a stale temporary copy) and syncs dir, as Kafka removes
// it at startup once it has noted the shutdown was clean: a crash while
// loading then counts as unclean. A missing marker is not an error. Kafka
// does not sync the directory, so a power loss may bring its marker back;
// here the removal is durable when RemoveCleanShutdown returns nil.
func RemoveCleanShutdown(fsys vfs.FS, dir string) error {
	path := filepath.Join(dir, CleanShutdownFile)
	for _, name := range []string{path, path + TempSuffix} {
		if err := fsys.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return fsys.SyncDir(dir)
}
