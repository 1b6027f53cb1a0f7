// Package golden holds what the codec packages' tests share: reading the
// hex golden files (bytes written as hex, with any whitespace, and '#'
// comments to the end of a line: the annotations that say which field each
// byte belongs to), checking every file against its decoded value and the
// encoder's bytes, seeding fuzz targets with the files, and checking a
// decoder's typed error.
package golden

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Dir is where a package's golden files are, relative to its directory.
const Dir = "testdata/golden"

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

// Hex decodes annotated hex written inline in a test, such as
// "0004 ffffffff"; it panics if s is not hex.
func Hex(s string) []byte {
	b, err := ParseHex([]byte(s))
	if err != nil {
		panic(err)
	}
	return b
}

// Read returns the bytes of the annotated hex file testdata/golden/name,
// failing t if it cannot.
func Read(t testing.TB, name string) []byte {
	t.Helper()
	return ReadFile(t, filepath.Join(Dir, name))
}

// ReadFile returns the bytes of the annotated hex file at path, failing t
// if it cannot.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseHex(raw)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// KafkaDir is where a package keeps the records Kafka itself serialized
// (written by internal/testkit/kafkacheck), relative to its directory.
const KafkaDir = "testdata/kafka"

// ReadRecord reads the record file testdata/kafka/<name>.hex: '#' comment
// lines, a line "key HEX" and a line "value HEX", where "-" is a null
// value (returned as nil). It fails t on anything else or an empty key.
func ReadRecord(t testing.TB, name string) (key, value []byte) {
	t.Helper()
	path := filepath.Join(KafkaDir, name+".hex")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(raw), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		field, h, ok := strings.Cut(line, " ")
		require.True(t, ok, "%s: %q", path, line)
		var b []byte
		if h != "-" {
			b, err = hex.DecodeString(h)
			require.NoError(t, err, path)
		}
		switch field {
		case "key":
			key = b
		case "value":
			value = b
		default:
			t.Fatalf("%s: unknown line %q", path, line)
		}
	}
	require.NotEmpty(t, key, path)
	return key, value
}

// AddSeeds adds the bytes of every *.hex file in dir to f's seed corpus,
// then extra. It fails f if dir has no such file.
func AddSeeds(f *testing.F, dir string, extra ...[]byte) {
	f.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.hex"))
	require.NoError(f, err)
	require.NotEmpty(f, names, "no *.hex file in %s", dir)
	for _, name := range names {
		f.Add(ReadFile(f, name))
	}
	for _, b := range extra {
		f.Add(b)
	}
}

// Case is one file of testdata/golden: what it decodes to and, where the
// package's encoder can produce it, how.
type Case struct {
	File   string
	Decode func(b []byte) (any, error)
	Want   any
	// Encode produces the file's bytes with the package's encoders; nil for
	// a file that is decoded only (legacy or future versions, unknown tags).
	Encode func() ([]byte, error)
}

// Check runs a subtest per case (named after its file, with
// "/decode-only" where Encode is nil): the file decodes to Want and, where
// Encode is set, Encode's bytes are the file's byte for byte. Then it
// checks that every file in testdata/golden has a case.
func Check(t *testing.T, cases []Case) {
	t.Helper()
	seen := map[string]bool{}
	for _, tc := range cases {
		name := tc.File
		if tc.Encode == nil {
			name += "/decode-only"
		}
		t.Run(name, func(t *testing.T) {
			seen[tc.File] = true
			b := Read(t, tc.File)
			got, err := tc.Decode(b)
			require.NoError(t, err)
			require.Equal(t, tc.Want, got)
			if tc.Encode != nil {
				enc, err := tc.Encode()
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("% x", b), fmt.Sprintf("% x", enc), "encoder output differs from %s", tc.File)
			}
		})
	}
	names, err := filepath.Glob(filepath.Join(Dir, "*.hex"))
	require.NoError(t, err)
	for _, n := range names {
		require.True(t, seen[filepath.Base(n)], "%s has no golden case", n)
	}
}

// RequireError checks that err matches sentinel and is an E (a decoder's
// typed error, such as a *DecodeError matching ErrCorrupt), and returns
// that E.
func RequireError[E error](t testing.TB, err, sentinel error) E {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, sentinel)
	var e E
	require.ErrorAs(t, err, &e)
	return e
}
