package interop

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// Fixtures for the main module: the batches of independentCases as hex
// files in record/testdata/interop, with the records they hold in
// expected.json, so that the record package's own tests can check its
// decoder against bytes it did not write without depending on kmsg or the
// other codecs.

var update = flag.Bool("update", false, "rewrite record/testdata/interop from the independent encoders")

const fixtureDir = "../../../record/testdata/interop"

// fixtureFile, fixtureRecord and fixtureHeader are the schema of
// expected.json. encoding/json writes a nil []byte as null and an empty one
// as "" (base64 otherwise), and reads them back the same way, so null and
// empty stay distinct.
type fixtureFile struct {
	File    string          `json:"file"`
	Records []fixtureRecord `json:"records"`
}

type fixtureRecord struct {
	Offset    int64           `json:"offset"`
	Timestamp int64           `json:"timestamp"`
	Key       []byte          `json:"key"`
	Value     []byte          `json:"value"`
	Headers   []fixtureHeader `json:"headers"`
}

type fixtureHeader struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// expectedRecords is what a reader must report for the case: offsets from
// the base offset, timestamps from the records or, for LogAppendTime, the
// batch's maxTimestamp.
func (c *indepCase) expectedRecords(spec batchSpec) []fixtureRecord {
	recs := make([]fixtureRecord, len(c.records))
	for i, r := range c.records {
		ts := r.Timestamp
		if spec.Attributes&attrLogAppendTime != 0 {
			ts = spec.MaxTimestamp
		}
		hs := make([]fixtureHeader, len(r.Headers))
		for j, h := range r.Headers {
			hs[j] = fixtureHeader{Key: h.Key, Value: h.Value}
		}
		recs[i] = fixtureRecord{Offset: spec.BaseOffset + int64(r.OffsetDelta), Timestamp: ts, Key: r.Key, Value: r.Value, Headers: hs}
	}
	return recs
}

func marshalExpected(files []fixtureFile) []byte {
	b, err := json.MarshalIndent(files, "", "  ")
	if err != nil {
		panic(err) // only []byte, string and int64 fields
	}
	return append(b, '\n')
}

// moduleVersion returns the version of a dependency as go.mod of this
// module requires it (test binaries carry no dependency list in their build
// information).
func moduleVersion(path string) string {
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		return "(unknown version)"
	}
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == path {
			return f[1]
		}
	}
	return "(unknown version)"
}

// hexComment is the comment block of a fixture file.
func (c *indepCase) hexComment(spec batchSpec, size int) string {
	versions := fmt.Sprintf("%s, kmsg %s, golang/snappy %s, pierrec/lz4 %s, klauspost/compress %s",
		runtime.Version(), moduleVersion("github.com/twmb/franz-go/pkg/kmsg"), moduleVersion("github.com/golang/snappy"),
		moduleVersion("github.com/pierrec/lz4/v4"), moduleVersion("github.com/klauspost/compress"))
	return strings.Join([]string{
		c.file + ": " + c.desc,
		"",
		"Generator: " + c.generator + ".",
		"Built with " + versions + ".",
		fmt.Sprintf("One batch, %d bytes: baseOffset %d, attributes %#04x, %d records; expected records in expected.json.",
			size, spec.BaseOffset, spec.Attributes, spec.NumRecords),
		"Regenerate: cd internal/testkit/interop && go test -run TestFixtures -update (never by hand).",
	}, "\n")
}

// writeHexFile writes b as hex, 16 bytes a line, under '#' comment lines.
func writeHexFile(path, comment string, b []byte) error {
	var sb strings.Builder
	for _, line := range strings.Split(comment, "\n") {
		sb.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
	for i := 0; i < len(b); i += 16 {
		line := b[i:min(i+16, len(b))]
		for j, c := range line {
			if j > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(hex.EncodeToString([]byte{c}))
		}
		sb.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}

// readHexFile reads the hex format: lines starting with '#' are comments,
// the rest is white-space separated hex bytes.
func readHexFile(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var digits strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if len(f) != 2 {
				return nil, fmt.Errorf("%s: %q is not one hex byte", path, f)
			}
			digits.WriteString(f)
		}
	}
	return hex.DecodeString(digits.String())
}

func fixtureReadme(cases []indepCase) string {
	var sb strings.Builder
	sb.WriteString(`# Interoperability fixtures

Record batches written without kafkalite's record package, by franz-go's
kmsg and by compressors other than the ones kafkalite uses, to check that
the record package reads what other Kafka clients write. Each .hex file holds
one RecordBatch v2; expected.json lists, per file, the records a reader must
report (offset, timestamp, key, value, headers; bytes in base64, null for a
null key, value or header value, "" for an empty one).

Format of the .hex files: lines starting with '#' are comments (what the case
is, what made it, the tool versions); the rest is white-space separated hex
bytes, 16 a line.

Generated by the test-only module internal/testkit/interop (its own go.mod, so that
kafkalite does not depend on kmsg or the extra codecs):

    cd internal/testkit/interop && go test -run TestFixtures -update

Never edit these files by hand. Without -update, that test checks that every
file still decodes to expected.json (with the record package and with the
independent decoders) and that regenerating gives the same bytes, exactly for
the encoders pinned by internal/testkit/interop/go.mod alone (kmsg, golang/snappy),
by decoded content for those whose output may change with the Go toolchain
or a library the root module also pins (compress/gzip, pierrec/lz4,
klauspost zstd).

| File | Case | Generator |
|------|------|-----------|
`)
	for _, c := range cases {
		fmt.Fprintf(&sb, "| `%s` | %s | %s |\n", c.file, c.desc, c.generator)
	}
	sb.WriteString("\n`expected.json`: the expected records of every file above, written by the same test.\n")
	return sb.String()
}

func TestFixtures(t *testing.T) {
	cases := independentCases()
	var expected []fixtureFile
	batches := make(map[string][]byte)
	for i := range cases {
		c := &cases[i]
		b, spec := c.build(t)
		batches[c.file] = b
		expected = append(expected, fixtureFile{File: c.file, Records: c.expectedRecords(spec)})
	}
	wantJSON := marshalExpected(expected)
	readme := fixtureReadme(cases)

	if *update {
		require.NoError(t, os.MkdirAll(fixtureDir, 0o755))
		for i := range cases {
			c := &cases[i]
			spec := specFor(c.spec, c.records)
			b := batches[c.file]
			require.NoError(t, writeHexFile(filepath.Join(fixtureDir, c.file), c.hexComment(spec, len(b)), b))
		}
		require.NoError(t, os.WriteFile(filepath.Join(fixtureDir, "expected.json"), wantJSON, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(fixtureDir, "README.md"), []byte(readme), 0o644))
	}

	// The directory holds exactly the cases, expected.json and the README.
	entries, err := os.ReadDir(fixtureDir)
	require.NoError(t, err, "run with -update to create the fixtures")
	var names, want []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, c := range cases {
		want = append(want, c.file)
	}
	want = append(want, "README.md", "expected.json")
	slices.Sort(names)
	slices.Sort(want)
	require.Equal(t, want, names, "stale or missing fixtures: run with -update")

	gotReadme, err := os.ReadFile(filepath.Join(fixtureDir, "README.md"))
	require.NoError(t, err)
	require.Equal(t, readme, string(gotReadme), "README.md is stale: run with -update")

	rawJSON, err := os.ReadFile(filepath.Join(fixtureDir, "expected.json"))
	require.NoError(t, err)
	require.Equal(t, string(wantJSON), string(rawJSON), "expected.json is stale: run with -update")
	var files []fixtureFile
	require.NoError(t, json.Unmarshal(rawJSON, &files))
	require.Len(t, files, len(cases))

	for i := range cases {
		c := &cases[i]
		t.Run(c.file, func(t *testing.T) {
			got, err := readHexFile(filepath.Join(fixtureDir, c.file))
			require.NoError(t, err)
			regenerated := batches[c.file]
			if c.exact {
				require.Equal(t, regenerated, got, "fixture differs from its generator: run with -update")
			} else if !bytes.Equal(regenerated, got) {
				t.Logf("%s: the encoder's output changed (toolchain or library upgrade?); checking decoded content only. Regenerate with -update.", c.file)
			}
			if c.check != nil {
				c.check(t, got)
			}
			spec := specFor(c.spec, c.records)
			requireKmsgHeader(t, got, spec)
			requireIndependentSection(t, got, spec, c.records)
			require.Equal(t, c.file, files[i].File)
			requireMatchesExpected(t, got, files[i].Records)
		})
	}
}

// requireMatchesExpected decodes batch with record.Reader and compares it
// with records as read from expected.json: what the main module's tests do.
func requireMatchesExpected(t *testing.T, batch []byte, want []fixtureRecord) {
	t.Helper()
	r := record.NewReader(record.ReaderOptions{})
	require.NoError(t, r.Reset(batch))
	for i, w := range want {
		require.True(t, r.Next(), "record %d: %v", i, r.Err())
		got := r.Record()
		require.Equal(t, w.Offset, got.Offset, "record %d: offset", i)
		require.Equal(t, w.Timestamp, got.Timestamp, "record %d: timestamp", i)
		requireNullable(t, w.Key, got.Key, "record %d: key", i)
		requireNullable(t, w.Value, got.Value, "record %d: value", i)
		require.Len(t, got.Headers, len(w.Headers), "record %d: headers", i)
		for j, h := range w.Headers {
			require.Equal(t, h.Key, string(got.Headers[j].Key), "record %d header %d: key", i, j)
			requireNullable(t, h.Value, got.Headers[j].Value, "record %d header %d: value", i, j)
		}
	}
	require.False(t, r.Next(), "more records than expected.json lists")
	require.NoError(t, r.Err())
}

// TestFixtureJSONNullness pins the property expected.json relies on: nil
// and empty []byte survive a round trip through encoding/json distinctly.
func TestFixtureJSONNullness(t *testing.T) {
	in := []fixtureRecord{{Key: nil, Value: []byte{}, Headers: []fixtureHeader{{Key: "h", Value: nil}, {Key: "", Value: []byte{}}}}}
	b := marshalExpected([]fixtureFile{{File: "x", Records: in}})
	require.Contains(t, string(b), `"key": null`)
	require.Contains(t, string(b), `"value": ""`)
	var out []fixtureFile
	require.NoError(t, json.Unmarshal(b, &out))
	r := out[0].Records[0]
	require.Nil(t, r.Key)
	require.NotNil(t, r.Value)
	require.Empty(t, r.Value)
	require.Nil(t, r.Headers[0].Value)
	require.NotNil(t, r.Headers[1].Value)
}
