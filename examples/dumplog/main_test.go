package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata: the fixture directory and the golden outputs")

// runDumplog runs the command and returns its exit status and outputs.
func runDumplog(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestGolden compares the output of each mode over the fixture with a
// golden file in testdata/golden; -update rewrites them.
func TestGolden(t *testing.T) {
	orders := filepath.Join(fixtureDir, "orders-0")
	cases := []struct {
		golden string
		args   []string
	}{
		{"logdir.txt", []string{fixtureDir}},
		{"logdir-records.txt", []string{"-records", fixtureDir}},
		{"logdir.json", []string{"-json", fixtureDir}},
		{"logdir-read-committed.json", []string{"-json", "-isolation", "read_committed", fixtureDir}},
		{"orders-read-committed.txt", []string{"-records", "-isolation", "read_committed", orders}},
		{"clicks.json", []string{"-json", "-topic", "clicks", fixtureDir}},
		{"segment-renamed.json", []string{"-json", "-topic", "renamed", "-partition", "7", filepath.Join(orders, "00000000000000000023.log")}},
		{"segment-index.txt", []string{filepath.Join(orders, "00000000000000000000.index")}},
		{"segment-timeindex.txt", []string{filepath.Join(orders, "00000000000000000000.timeindex")}},
		{"segment-txnindex.txt", []string{filepath.Join(orders, "00000000000000000000.txnindex")}},
		{"snapshot.txt", []string{filepath.Join(orders, "00000000000000000037.snapshot")}},
		{"verify.txt", []string{"-verify", fixtureDir}},
	}
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			code, stdout, stderr := runDumplog(tc.args...)
			require.Equal(t, 0, code, stderr)
			require.Empty(t, stderr)
			path := filepath.Join("testdata", "golden", tc.golden)
			if *update {
				writeFile(t, path, []byte(stdout))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, string(want), stdout, "regenerate with: go test ./examples/dumplog -update")
		})
	}
}

// jsonLine is one line of -json output, decoded.
type jsonLine struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Timestamp int64  `json:"timestamp"`
	Key       []byte `json:"key"`
	Value     []byte `json:"value"`
	Headers   []struct {
		Key   string `json:"key"`
		Value []byte `json:"value"`
	} `json:"headers"`
}

func parseJSONLines(t *testing.T, out string) []jsonLine {
	t.Helper()
	var lines []jsonLine
	for line := range strings.SplitSeq(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		var l jsonLine
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&l), line)
		lines = append(lines, l)
	}
	return lines
}

// TestJSONMatchesOtherEncoders checks the -json output of the batches other
// encoders wrote against the records those encoders were given
// (record/testdata/interop/expected.json), independently of the golden
// files: timestamps (LogAppendTime applied), null versus empty keys, values
// and header values, header keys.
func TestJSONMatchesOtherEncoders(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "record", "testdata", "interop", "expected.json"))
	require.NoError(t, err)
	var expected []struct {
		File    string     `json:"file"`
		Records []jsonLine `json:"records"`
	}
	require.NoError(t, json.Unmarshal(raw, &expected))
	byFile := make(map[string][]jsonLine)
	for _, e := range expected {
		byFile[e.File] = e.Records
	}

	code, stdout, stderr := runDumplog("-json", fixtureDir)
	require.Equal(t, 0, code, stderr)
	got := make(map[string]jsonLine)
	for _, l := range parseJSONLines(t, stdout) {
		got[fmt.Sprintf("%s-%d@%d", l.Topic, l.Partition, l.Offset)] = l
	}
	placed := []struct {
		topic string
		file  string
		first int64
	}{
		{"orders", "gzip-two-members.hex", 0},
		{"orders", "kmsg-uncompressed.hex", 7},
		{"orders", "zstd-no-content-size.hex", 14},
		{"orders", "snappy-xerial-concat.hex", 23},
		{"clicks", "kmsg-log-append-time.hex", 0},
	}
	for _, p := range placed {
		recs := byFile[p.file]
		require.NotEmpty(t, recs, p.file)
		shift := p.first - recs[0].Offset
		for _, want := range recs {
			want.Topic, want.Offset = p.topic, want.Offset+shift
			l, ok := got[fmt.Sprintf("%s-0@%d", p.topic, want.Offset)]
			require.True(t, ok, "%s offset %d missing", p.file, want.Offset)
			require.Equal(t, want, l, p.file)
		}
	}
	// The marker offsets are never data.
	for _, off := range []int64{21, 22} {
		_, ok := got[fmt.Sprintf("orders-0@%d", off)]
		require.False(t, ok, "control record at offset %d printed as data", off)
	}
}

// TestReadCommitted checks which offsets each isolation level shows.
func TestReadCommitted(t *testing.T) {
	offsets := func(args ...string) []int64 {
		code, stdout, stderr := runDumplog(append(args, filepath.Join(fixtureDir, "orders-0"))...)
		require.Equal(t, 0, code, stderr)
		var offs []int64
		for _, l := range parseJSONLines(t, stdout) {
			offs = append(offs, l.Offset)
		}
		return offs
	}
	span := func(from, to int64) []int64 {
		var s []int64
		for o := from; o <= to; o++ {
			s = append(s, o)
		}
		return s
	}
	all := append(span(0, 20), span(23, 36)...)
	require.Equal(t, all, offsets("-json"))
	require.Equal(t, all, offsets("-json", "-isolation", "read_uncommitted"))
	committed := append(append(span(0, 6), span(14, 20)...), span(23, 34)...)
	require.Equal(t, committed, offsets("-json", "-isolation", "read_committed"))
}

// TestVerifyFindsDamage damages a copy of the fixture in one way per case
// and checks that -verify exits with status 1 and says what is wrong.
func TestVerifyFindsDamage(t *testing.T) {
	const seg0 = "orders-0/00000000000000000000"
	const seg23 = "orders-0/00000000000000000023"
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"CRC", func(t *testing.T, dir string) {
			flipByte(t, filepath.Join(dir, seg0+".log"), 1641+300) // inside the second batch's records
		}, "orders-0/00000000000000000000.log: batch at position 1641 (offsets 7-13): record: CRC mismatch"},
		{"index entry not at a batch", func(t *testing.T, dir string) {
			patchUint32(t, filepath.Join(dir, seg0+".index"), 4, 1642)
		}, "00000000000000000000.index: entry 0 (offset 13) points at position 1642, which is not where a batch starts"},
		{"index entry names another batch", func(t *testing.T, dir string) {
			patchUint32(t, filepath.Join(dir, seg0+".index"), 0, 12)
		}, "00000000000000000000.index: entry 0 names offset 12, but the batch at position 1641 ends at offset 13"},
		{"index entry past the log", func(t *testing.T, dir string) {
			patchUint32(t, filepath.Join(dir, seg0+".index"), 4, 1<<20)
		}, "points at position 1048576, past the end of the .log's batches"},
		{"index entries out of order", func(t *testing.T, dir string) {
			patchUint32(t, filepath.Join(dir, seg0+".index"), 8, 5)
		}, "00000000000000000000.index: entry 1 (offset 5, position 5666) does not increase from entry 0"},
		{"time index timestamp", func(t *testing.T, dir string) {
			patchUint32(t, filepath.Join(dir, seg23+".timeindex"), 4, 1)
		}, "00000000000000000023.timeindex: entry 0 has timestamp"},
		{"sealed index not trimmed", func(t *testing.T, dir string) {
			appendBytes(t, filepath.Join(dir, seg0+".index"), make([]byte, 16))
		}, "00000000000000000000.index: 2 unused slots at the end: not trimmed"},
		{"txnindex entry missing", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, seg0+".txnindex")))
		}, "the ABORT marker at offset 21 (producer 8001, transaction from offset 7) has no entry"},
		{"txnindex entry wrong", func(t *testing.T, dir string) {
			patchUint32(t, filepath.Join(dir, seg0+".txnindex"), 10+4, 8) // firstOffset 7 → 8
		}, "the aborted transaction starts at offset 7"},
		{"torn tail", func(t *testing.T, dir string) {
			appendBytes(t, filepath.Join(dir, seg23+".log"), []byte{0, 0, 0, 0, 0, 0, 0, 37, 0, 0, 1, 0, 0, 0, 0, 1, 2, 9, 9})
		}, "19 invalid bytes at the end of"},
		{"leader epochs", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "orders-0", "leader-epoch-checkpoint"), []byte("0\n1\n0 0\n"))
		}, "the batch at offset 23 has leader epoch 1, but the checkpoint gives epoch 0 from offset 0"},
		{"checkpoint file", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "recovery-point-offset-checkpoint"), []byte("0\n3\norders 0 37\n"))
		}, "recovery-point-offset-checkpoint: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyFixture(t)
			tc.damage(t, dir)
			code, stdout, stderr := runDumplog("-verify", dir)
			require.Equal(t, 1, code, "stdout:\n%s", stdout)
			require.Contains(t, stderr, tc.want)
			require.Contains(t, stderr, "problem(s) found")
		})
	}
}

// copyFixture copies the fixture directory into a temporary directory.
func copyFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for rel, data := range treeFiles(t, fixtureDir) {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(rel)), []byte(data))
	}
	return dir
}

func flipByte(t *testing.T, path string, at int) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[at] ^= 0xff
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func patchUint32(t *testing.T, path string, at int, v uint32) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	binary.BigEndian.PutUint32(b[at:], v)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func appendBytes(t *testing.T, path string, extra []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(b, extra...), 0o644))
}

// TestUsage checks the exit status of bad command lines.
func TestUsage(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no path", nil, 2, "usage: dumplog"},
		{"bad isolation", []string{"-isolation", "serializable", fixtureDir}, 2, "-isolation must be"},
		{"verify with json", []string{"-verify", "-json", fixtureDir}, 2, "does not combine"},
		{"missing path", []string{filepath.Join(fixtureDir, "nope-0")}, 1, "no such file"},
		{"unknown file", []string{filepath.Join(fixtureDir, "meta.properties")}, 1, "not a file dumplog reads"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runDumplog(tc.args...)
			require.Equal(t, tc.code, code)
			require.Contains(t, stderr, tc.want)
		})
	}
}

// TestPathProblems checks paths that hold nothing to dump: each is said on
// stderr, naming the path, and makes the exit status 1 in every mode; under
// -verify it counts as a problem and "no problems" is never printed.
func TestPathProblems(t *testing.T) {
	cases := []struct {
		name string
		// setup returns the path to dump, made under a temporary directory.
		setup func(t *testing.T, tmp string) string
		args  []string // before the path
		want  string   // on stderr, after the path is substituted for %s
	}{
		{"missing", func(t *testing.T, tmp string) string {
			return filepath.Join(tmp, "nonexistent")
		}, nil, "stat %s: no such file or directory"},
		{"symlink loop", func(t *testing.T, tmp string) string {
			path := filepath.Join(tmp, "loop")
			require.NoError(t, os.Symlink(path, path))
			return path
		}, nil, "stat %s: too many levels of symbolic links"},
		{"empty directory", func(t *testing.T, tmp string) string {
			return tmp
		}, nil, "no log segments found under %s"},
		{"log directory without partitions", func(t *testing.T, tmp string) string {
			data, err := os.ReadFile(filepath.Join(fixtureDir, "meta.properties"))
			require.NoError(t, err)
			writeFile(t, filepath.Join(tmp, "meta.properties"), data)
			return tmp
		}, nil, "no log segments found under %s"},
		{"partition directory without segments", func(t *testing.T, tmp string) string {
			path := filepath.Join(tmp, "orders-0")
			writeFile(t, filepath.Join(path, "leader-epoch-checkpoint"), []byte("0\n0\n"))
			return path
		}, nil, "no log segments found under %s"},
		{"no partition of -topic", func(t *testing.T, tmp string) string {
			return fixtureDir
		}, []string{"-topic", "nosuch"}, "no log segments found under %s (with -topic nosuch)"},
		{"unreadable segment", func(t *testing.T, tmp string) string {
			// A directory where the .log should be: it opens, but reading fails.
			require.NoError(t, os.MkdirAll(filepath.Join(tmp, "orders-0", "00000000000000000000.log"), 0o755))
			return filepath.Join(tmp, "orders-0")
		}, nil, "%s/00000000000000000000.log: is a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.setup(t, t.TempDir())
			want := strings.ReplaceAll(tc.want, "%s", path)
			for _, mode := range [][]string{{"-verify"}, nil, {"-records"}, {"-json"}} {
				args := append(append(append([]string{}, mode...), tc.args...), path)
				code, stdout, stderr := runDumplog(args...)
				require.Equal(t, 1, code, "%v: stdout:\n%s\nstderr:\n%s", args, stdout, stderr)
				require.Contains(t, stderr, want, args)
				require.NotContains(t, stdout, "no problems", args)
				if mode != nil && mode[0] == "-verify" {
					require.Contains(t, stderr, "dumplog: 1 problem(s) found", args)
				}
			}
		})
	}

	// A bad path among good ones: the good ones are dumped, the status is 1.
	missing := filepath.Join(t.TempDir(), "nonexistent")
	code, stdout, stderr := runDumplog("-verify", fixtureDir, missing)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, missing)
	require.Contains(t, stderr, "dumplog: 1 problem(s) found")
	require.NotContains(t, stdout, "no problems")
	code, stdout, stderr = runDumplog("-json", fixtureDir, missing)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, missing)
	require.Equal(t, 40, len(parseJSONLines(t, stdout)), "the fixture's records are printed all the same")
}

// TestJSONWarnings checks what -json, which has no field for them, says on
// stderr: records whose partition has no topic or number, and records of a
// batch that is not valid. Neither changes the records printed or the exit
// status; -verify still fails on the invalid batch.
func TestJSONWarnings(t *testing.T) {
	const seg0, seg23 = "00000000000000000000", "00000000000000000023"
	unnamedWarning := `is not named <topic>-<partition>: its records print with "topic":"" and "partition":-1; name them with -topic and -partition`
	cases := []struct {
		name string
		// setup returns the arguments, paths made under dir (a copy of
		// the fixture).
		setup    func(t *testing.T, dir string) []string
		records  int    // JSON lines printed
		warning  string // in stderr exactly once, "" for an empty stderr
		verifyOK bool   // whether -verify over the paths passes
	}{
		{"segments outside a partition directory", func(t *testing.T, dir string) []string {
			segs := filepath.Join(dir, "segments")
			for _, seg := range []string{seg0, seg23} {
				for _, ext := range []string{".log", ".index", ".timeindex"} {
					data, err := os.ReadFile(filepath.Join(dir, "orders-0", seg+ext))
					require.NoError(t, err)
					writeFile(t, filepath.Join(segs, seg+ext), data)
				}
			}
			return []string{filepath.Join(segs, seg0+".log"), filepath.Join(segs, seg23+".log")}
		}, 35, unnamedWarning, true},
		{"named by the flags", func(t *testing.T, dir string) []string {
			segs := filepath.Join(dir, "segments")
			data, err := os.ReadFile(filepath.Join(dir, "orders-0", seg23+".log"))
			require.NoError(t, err)
			writeFile(t, filepath.Join(segs, seg23+".log"), data)
			return []string{"-topic", "orders", "-partition", "0", filepath.Join(segs, seg23+".log")}
		}, 14, "", true},
		{"invalid CRC", func(t *testing.T, dir string) []string {
			flipByte(t, filepath.Join(dir, "orders-0", seg0+".log"), 1641+17) // the CRC of the batch of offsets 7-13
			return []string{filepath.Join(dir, "orders-0")}
		}, 35, "/orders-0/" + seg0 + ".log: batch at position 1641 (base offset 7) is invalid: record: CRC mismatch", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.setup(t, copyFixture(t))
			code, stdout, stderr := runDumplog(append([]string{"-json"}, args...)...)
			require.Equal(t, 0, code, stderr)
			require.Equal(t, tc.records, len(parseJSONLines(t, stdout)), "records printed")
			if tc.warning == "" {
				require.Empty(t, stderr)
			} else {
				require.Equal(t, 1, strings.Count(stderr, tc.warning), "stderr:\n%s", stderr)
				require.Equal(t, 1, strings.Count(stderr, "\n"), "one warning; stderr:\n%s", stderr)
			}
			var paths []string
			for i := 0; i < len(args); i++ {
				if strings.HasPrefix(args[i], "-") {
					i++ // a flag's value
					continue
				}
				paths = append(paths, args[i])
			}
			code, _, stderr = runDumplog(append([]string{"-verify"}, paths...)...)
			if tc.verifyOK {
				require.Equal(t, 0, code, stderr)
			} else {
				require.Equal(t, 1, code)
				require.Contains(t, stderr, "batch at position 1641 (offsets 7-13): record: CRC mismatch")
			}
		})
	}
}
