// Package golden reads the hex golden files of the codec packages' tests:
// bytes written as hex, with any whitespace, and '#' comments to the end
// of a line (the annotations that say which field each byte belongs to).
package golden

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ParseHex decodes annotated hex.
func ParseHex(raw []byte) ([]byte, error) {
	var sb strings.Builder
	for line := range strings.SplitSeq(string(raw), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		sb.WriteString(strings.Join(strings.Fields(line), ""))
	}
	return hex.DecodeString(sb.String())
}

// Read returns the bytes of the annotated hex file testdata/golden/name,
// failing t if it cannot.
func Read(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseHex(raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}
