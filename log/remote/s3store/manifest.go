package s3store

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"

	"github.com/kafkalite/kafkalite/log/remote"
)

// The copy's objects, by extension, in the order they are uploaded; the
// manifest (extManifest) goes after them. These names are part of the
// stored layout and must not change.
var objectExts = []string{"log", "index", "timeindex", "txnindex", "snapshot", "leader-epoch-checkpoint"}

const extManifest = "manifest"

var indexExts = map[remote.IndexType]string{
	remote.OffsetIndex: "index", remote.TimeIndex: "timeindex", remote.ProducerSnapshot: "snapshot",
	remote.TransactionIndex: "txnindex", remote.LeaderEpochIndex: "leader-epoch-checkpoint",
}

// maxManifestBytes bounds a manifest read back: six lines of at most
// about 60 bytes each fit many times over.
const maxManifestBytes = 4096

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// entry is a copied object's size and CRC-32C.
type entry struct {
	size int64
	crc  uint32
}

// manifest lists a copy's objects by extension. Its text form is a line
// per object, in objectExts' order:
//
//	<ext> <size in bytes> <CRC-32C, decimal>
//
// the same as the filesystem store's manifest.
type manifest map[string]entry

func (m manifest) encode() []byte {
	var b bytes.Buffer
	for _, ext := range objectExts {
		if e, ok := m[ext]; ok {
			fmt.Fprintf(&b, "%s %d %d\n", ext, e.size, e.crc)
		}
	}
	return b.Bytes()
}

// parseManifest reads a manifest's text; anything but known extensions,
// each once, with sizes and checksums in range, and a log, is
// remote.ErrCorrupt.
func parseManifest(key string, b []byte) (manifest, error) {
	known := map[string]bool{}
	for _, ext := range objectExts {
		known[ext] = true
	}
	out := manifest{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || !known[f[0]] {
			return nil, fmt.Errorf("%w: %s: line %q", remote.ErrCorrupt, key, sc.Text())
		}
		size, err1 := strconv.ParseInt(f[1], 10, 64)
		sum, err2 := strconv.ParseUint(f[2], 10, 32)
		if _, dup := out[f[0]]; err1 != nil || err2 != nil || size < 0 || dup {
			return nil, fmt.Errorf("%w: %s: line %q", remote.ErrCorrupt, key, sc.Text())
		}
		out[f[0]] = entry{size: size, crc: uint32(sum)}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", remote.ErrCorrupt, key, err)
	}
	if _, ok := out["log"]; !ok {
		return nil, fmt.Errorf("%w: %s: no log", remote.ErrCorrupt, key)
	}
	return out, nil
}
