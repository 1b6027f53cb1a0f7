package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJava compares this package's re-implementations of JDK behaviour with
// the JDK itself, where a java launcher (11 or later; the program uses
// java.util.HexFormat, so 17 or later) is installed: Properties.load and
// Properties.store (meta.properties), Base64 (topic ids), BufferedReader
// line splitting, String.split and Integer/Long.parseInt (checkpoints),
// Date.toString (the meta.properties date). The JDK is the reference Kafka
// runs on; these are the parts of Kafka's readers and writers that are not
// in Kafka's own source. With -update it also regenerates
// testdata/meta-java17.properties, a meta.properties written by the JDK as
// Kafka writes it.
func TestJava(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java launcher in PATH")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CHECKPOINT_JAVA_SEED"); s != "" {
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("random inputs from seed %d (replay with CHECKPOINT_JAVA_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x636b7074))

	var j javaBatch
	checkPropertiesLoad(t, &j, rng)
	checkPropertiesStore(t, &j, rng)
	checkTopicIDs(t, &j, rng)
	checkCheckpointPrimitives(t, &j, rng)
	checkDates(t, &j)
	fixture, err := filepath.Abs(filepath.Join("testdata", "meta-java17.properties"))
	require.NoError(t, err)
	if *update {
		j.add(func(string) {}, "store-file", hexArg([]byte(fixture)),
			hexArg([]byte("version")), hexArg([]byte("1")),
			hexArg([]byte("cluster.id")), hexArg([]byte("XzqcDhKrTH2OnwARIjOquw")),
			hexArg([]byte("node.id")), hexArg([]byte("1")),
			hexArg([]byte("directory.id")), hexArg([]byte("DH4dKzpPTl2ci3ppWEc2JQ")))
	}
	j.run(t, java)
}

// javaBatch collects commands for testdata/java/Interop.java and the checks
// to run on their answers.
type javaBatch struct {
	cmds   []string
	checks []func(answer string)
}

func (j *javaBatch) add(check func(answer string), cmd ...string) {
	j.cmds = append(j.cmds, strings.Join(cmd, " "))
	j.checks = append(j.checks, check)
}

func (j *javaBatch) run(t *testing.T, java string) {
	t.Helper()
	dir := t.TempDir()
	cmdFile := filepath.Join(dir, "commands")
	require.NoError(t, os.WriteFile(cmdFile, []byte(strings.Join(j.cmds, "\n")+"\n"), 0o644))
	src, err := filepath.Abs(filepath.Join("testdata", "java", "Interop.java"))
	require.NoError(t, err)
	cmd := exec.Command(java, src, cmdFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && strings.Contains(stderr.String(), "UnsupportedClassVersion") {
		t.Skipf("java too old: %s", stderr.String())
	}
	require.NoError(t, err, "java: %s", stderr.String())
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	i := 0
	for sc.Scan() {
		require.Less(t, i, len(j.checks), "more answers than commands")
		j.checks[i](sc.Text())
		i++
	}
	require.NoError(t, sc.Err())
	require.Equal(t, len(j.cmds), i, "one answer per command")
}

func hexArg(b []byte) string {
	if len(b) == 0 {
		return "-"
	}
	return hex.EncodeToString(b)
}

func unhexArg(t testing.TB, s string) string {
	if s == "-" {
		return ""
	}
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return string(b)
}

// randomBytes returns up to max bytes drawn from alphabet.
func randomBytes(rng *rand.Rand, alphabet []string, max int) []byte {
	var b []byte
	for n := rng.IntN(max + 1); n > 0; n-- {
		b = append(b, alphabet[rng.IntN(len(alphabet))]...)
	}
	return b
}

// propsAnswer renders a parse result as Interop.java's "load" does, pairs
// sorted by the hex of their key (see normalizeLoad).
func propsAnswer(props map[string]string, err error) string {
	if err != nil {
		return "error"
	}
	var pairs []string
	for k, v := range props {
		pairs = append(pairs, hexArg([]byte(k))+" "+hexArg([]byte(v)))
	}
	slices.Sort(pairs)
	return strings.Join(append([]string{"ok", strconv.Itoa(len(props))}, pairs...), " ")
}

// normalizeLoad sorts the key/value pairs of a "load" answer by the hex of
// their key: Java sorts by UTF-16 code units, in which unpaired surrogates
// (U+FFFD in the answer, as in Go) still have their own values.
func normalizeLoad(answer string) string {
	f := strings.Fields(answer)
	if len(f) < 2 || f[0] != "ok" {
		return answer
	}
	var pairs []string
	for i := 2; i+1 < len(f); i += 2 {
		pairs = append(pairs, f[i]+" "+f[i+1])
	}
	slices.Sort(pairs)
	return strings.Join(append(f[:2:2], pairs...), " ")
}

// collidingKeys reports whether a "load" answer lists a key twice (after
// Interop.java replaced unpaired surrogates with U+FFFD).
func collidingKeys(answer string) bool {
	f := strings.Fields(answer)
	seen := make(map[string]bool)
	for i := 2; i < len(f); i += 2 {
		if seen[f[i]] {
			return true
		}
		seen[f[i]] = true
	}
	return false
}

var propsAlphabet = []string{
	"a", "b", "k", "=", ":", " ", "  ", "\t", "\f", "\\", "\\\\", "\r", "\n", "\r\n", "#", "!",
	"\\u0041", "\\u00e9", "\\uD83D", "\\uDE00", "\\u12", "\\uZZZZ", "\\t", "\\n", "\\ ", "\xe9", "\xc3\xa9", "\x00", "\v",
}

func checkPropertiesLoad(t *testing.T, j *javaBatch, rng *rand.Rand) {
	var inputs [][]byte
	for _, s := range []string{
		"", "a=1\nb:2\nc 3\n", "a=x\\\n  y\n", "\\\n\n#c\nb=2\n", "a=x\\\n#y\n", "a=x\\", "a=x\\\n  ",
		"a\\=b\\:c\\ d=1\n", "a=\\uD83D\\uDE00\n", "a=\\u12G4\n", "a=caf\xe9\n", "  # c\\\n a=1",
		"a=1\r\r\nb=2", "\\\r\n\r\nc=3", "key  :value\n", "c  =  = 3\n", "a=\\\\\\\n b",
	} {
		inputs = append(inputs, []byte(s))
	}
	for range 400 {
		inputs = append(inputs, randomBytes(rng, propsAlphabet, 24))
	}
	for _, in := range inputs {
		want := propsAnswer(parseProperties("f", in))
		j.add(func(answer string) {
			if collidingKeys(answer) {
				// Two keys that differ only in unpaired surrogates, which
				// a Go string cannot hold: both are U+FFFD here.
				return
			}
			assert.Equal(t, normalizeLoad(answer), want, "Properties.load of %q", in)
		}, "load", hexArg(in))
	}
}

var storeAlphabet = []string{"a", "Z", "0", ".", " ", "=", ":", "#", "!", "\\", "\t", "\n", "\r", "\f", "~", "é", "€", "😀", "\x01", "\x7f"}

func checkPropertiesStore(t *testing.T, j *javaBatch, rng *rand.Rand) {
	for i := range 150 {
		props := make(map[string]string)
		for n := rng.IntN(4); n > 0; n-- {
			props[string(randomBytes(rng, storeAlphabet, 8))] = string(randomBytes(rng, storeAlphabet, 8))
		}
		if i == 0 {
			props = map[string]string{"version": "1", "cluster.id": "XzqcDhKrTH2OnwARIjOquw", "node.id": "1", "directory.id": "DH4dKzpPTl2ci3ppWEc2JQ"}
		}
		ours := appendProperties(nil, props, goldenDate)

		// Kafka's reader reads back exactly what we wrote.
		j.add(func(answer string) {
			assert.Equal(t, propsAnswer(props, nil), normalizeLoad(answer), "Properties.load of our %q", ours)
		}, "load", hexArg(ours))

		// Without characters that store(Writer) leaves unescaped and we
		// escape, the lines are the JDK's, in some order.
		plain := true
		for k, v := range props {
			for _, r := range k + v {
				if (r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f') || r > 0x7e {
					plain = false
				}
			}
		}
		args := []string{"store"}
		for k, v := range props {
			args = append(args, hexArg([]byte(k)), hexArg([]byte(v)))
		}
		j.add(func(answer string) {
			theirs := []byte(unhexArg(t, answer))
			ourLines := strings.Split(string(ours), "\n")
			theirLines := strings.Split(string(theirs), "\n")
			require.Greater(t, len(theirLines), 2, "%q", theirs)
			assert.Equal(t, "#", theirLines[0])
			_, err := time.Parse(javaDateLayout, strings.TrimPrefix(theirLines[1], "#"))
			assert.NoError(t, err, "the JDK's date line %q parses with our layout", theirLines[1])
			if plain {
				slices.Sort(ourLines[2:])
				slices.Sort(theirLines[2:])
				assert.Equal(t, theirLines[2:], ourLines[2:], "store of %q", props)
			}
			// And we read what the JDK wrote, whatever the characters, when
			// they are ASCII (the JDK writes others in UTF-8, which its own
			// load then reads as ISO-8859-1; so do we).
			got, err := parseProperties("f", theirs)
			require.NoError(t, err)
			if plain {
				assert.Equal(t, props, got, "our reading of the JDK's %q", theirs)
			}
		}, args...)
	}
}

var topicIDAlphabet = []string{"A", "Q", "w", "z", "0", "9", "-", "_", "=", "+", "/", " ", "\n", "\r", "é"}

func checkTopicIDs(t *testing.T, j *javaBatch, rng *rand.Rand) {
	for range 100 {
		var id TopicID
		for i := range id {
			id[i] = byte(rng.Uint32())
		}
		if rng.IntN(4) == 0 {
			id[0] = 0xf8 | byte(rng.IntN(4)) // a string starting with '-'
		}
		want := id.String()
		j.add(func(answer string) { assert.Equal(t, answer, want, "Base64 of %x", id[:]) }, "b64", hexArg(id[:]))
	}
	var inputs []string
	for _, v := range topicIDVectors {
		inputs = append(inputs, v.str, v.str+"==", v.str[:21], v.str+"=", v.str[:21]+"R")
	}
	for range 300 {
		s := []byte("scQOWnwvTT6aG2yNLk9wgQ")[:18+rng.IntN(4)]
		s = append(s, randomBytes(rng, topicIDAlphabet, 6)...)
		inputs = append(inputs, string(s))
	}
	for _, in := range inputs {
		id, err := ParseTopicID(in)
		want := "error"
		if err == nil {
			want = "ok " + hex.EncodeToString(id[:])
		}
		j.add(func(answer string) { assert.Equal(t, answer, want, "Uuid.fromString(%q)", in) }, "uuid", hexArg([]byte(in)))
	}
}

var lineAlphabet = []string{"a", "0", "-", "+", ":", " ", "\t", "\v", "\f", "\r", "\n", "\r\n", "\x1c"}

func checkCheckpointPrimitives(t *testing.T, j *javaBatch, rng *rand.Rand) {
	for range 200 {
		in := randomBytes(rng, lineAlphabet, 16)

		s := lineScanner{data: in}
		wantLines := "lines"
		for {
			line, ok := s.next()
			if !ok {
				break
			}
			wantLines += " " + hexArg(line)
		}
		j.add(func(answer string) { assert.Equal(t, answer, wantLines, "readLine of %q", in) }, "lines", hexArg(in))

		line := bytes.Map(func(r rune) rune { // a line has no terminator
			if r == '\r' || r == '\n' {
				return ' '
			}
			return r
		}, in)
		fields := splitFields(nil, line)
		wantSplit := strconv.Itoa(len(fields))
		for _, f := range fields {
			wantSplit += " " + hexArg(f)
		}
		j.add(func(answer string) { assert.Equal(t, answer, wantSplit, "split of %q", line) }, "split", hexArg(line))

		k, v, ok := splitKeyValue(line)
		wantKV := "1 " + hexArg(line)
		if ok {
			wantKV = "2 " + hexArg(k) + " " + hexArg(v)
		}
		j.add(func(answer string) { assert.Equal(t, answer, wantKV, "split(\":\\\\s+\", 2) of %q", line) }, "splitkv", hexArg(line))
	}
	numbers := []string{"0", "+0", "-0", "007", "+", "-", "", " 1", "1 ", "2147483647", "2147483648", "-2147483648", "-2147483649",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "1_0", "0x1", "1e3", "١٢"}
	for range 100 {
		numbers = append(numbers, string(randomBytes(rng, []string{"0", "1", "9", "+", "-", " "}, 21)))
	}
	for _, n := range numbers {
		for _, bits := range []int{32, 64} {
			v, ok := parseInt([]byte(n), bits)
			want := "error"
			if ok {
				want = "ok " + strconv.FormatInt(v, 10)
			}
			cmd := map[int]string{32: "int", 64: "long"}[bits]
			j.add(func(answer string) {
				if n == "١٢" { // Java takes Unicode digits; we do not, on purpose
					assert.Equal(t, "ok 12", answer)
					assert.Equal(t, "error", want)
					return
				}
				assert.Equal(t, answer, want, "%s %q", cmd, n)
			}, cmd, hexArg([]byte(n)))
		}
	}
}

func checkDates(t *testing.T, j *javaBatch) {
	for _, ms := range []int64{0, 1772798400000, 1704787626000, 951782400000} {
		want := time.UnixMilli(ms).In(time.UTC).Format(javaDateLayout)
		j.add(func(answer string) { assert.Equal(t, answer, want, "Date(%d)", ms) }, "date", strconv.FormatInt(ms, 10), "UTC")
		if loc, err := time.LoadLocation("America/New_York"); err == nil {
			want := time.UnixMilli(ms).In(loc).Format(javaDateLayout)
			j.add(func(answer string) { assert.Equal(t, answer, want, "Date(%d) in New York", ms) }, "date", strconv.FormatInt(ms, 10), "America/New_York")
		}
	}
}
