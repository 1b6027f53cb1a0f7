package assignor

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJavaCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"a", "", 1},
		{"consumer1", "consumer10", -1},
		{"consumer2", "consumer10", 1},
		{"Z", "a", -1},
		{"é", "z", 1},
		{"éa", "éb", -1},
		// U+1F600 is the surrogate pair D83D DE00: before U+E000..U+FFFF
		// in Java, after them in UTF-8.
		{"\U0001F600", "\uFFFD", -1},
		{"x\U0001F600", "x\uE000", -1},
		{"\U0001F600", "\U0001F601", -1},
		{"\U0001F600", "\U0001F600", 0},
		{"\u00ff", "\u0100", -1},
	} {
		assert.Equal(t, tc.want, javaCompare(tc.a, tc.b), "%q vs %q", tc.a, tc.b)
		assert.Equal(t, -tc.want, javaCompare(tc.b, tc.a), "%q vs %q", tc.b, tc.a)
	}
}

func TestJavaStringHash(t *testing.T) {
	// Values of String.hashCode.
	assert.Equal(t, int32(0), javaStringHash(""))
	assert.Equal(t, int32(97), javaStringHash("a"))
	assert.Equal(t, int32(96354), javaStringHash("abc"))
	assert.Equal(t, int32(108280125), javaStringHash("range"))
	// "\U0001F600" is two code units: 31*0xD83D + 0xDE00.
	assert.Equal(t, int32(31*0xD83D+0xDE00), javaStringHash("\U0001F600"))
}

func TestJavaHashMapCapacity(t *testing.T) {
	for n, want := range map[int]int{0: 16, 12: 16, 13: 32, 24: 32, 25: 64, 48: 64, 49: 128, 100: 256} {
		assert.Equal(t, want, javaHashMapCapacity(n), "n=%d", n)
	}
}

// javaOrderProgram prints what the JDK does with the keys and set
// operations javaOrderInput writes: String.hashCode and compareTo order of
// each key, HashMap iteration order, and the first element of a HashSet of
// (topic, partition) pairs hashed as Kafka's TopicPartition after each
// operation.
const javaOrderProgram = `
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

public class JavaOrder {
    record TP(String topic, int partition) {
        @Override public int hashCode() { return 31 * (31 + partition) + topic.hashCode(); }
    }

    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        int n = Integer.parseInt(lines.get(0));
        List<String> keys = lines.subList(1, 1 + n);
        StringBuilder out = new StringBuilder();
        for (String k : keys) out.append(k.hashCode()).append('\n');
        Map<String, Integer> map = new HashMap<>();
        for (int i = 0; i < n; i++) map.put(keys.get(i), i);
        for (int i : map.values()) out.append(i).append(' ');
        out.append('\n');
        Integer[] idx = new Integer[n];
        for (int i = 0; i < n; i++) idx[i] = i;
        Arrays.sort(idx, (a, b) -> keys.get(a).compareTo(keys.get(b)));
        for (int i : idx) out.append(i).append(' ');
        out.append('\n');
        Set<TP> set = new HashSet<>();
        for (String op : lines.subList(1 + n, lines.size())) {
            String[] f = op.split(" ");
            TP tp = new TP(keys.get(Integer.parseInt(f[1])), Integer.parseInt(f[2]));
            if (f[0].equals("a")) set.add(tp); else set.remove(tp);
            if (set.isEmpty()) { out.append("-\n"); continue; }
            TP first = set.iterator().next();
            out.append(first.topic().hashCode()).append(' ').append(first.partition()).append('\n');
        }
        Files.writeString(Path.of(args[1]), out.toString(), StandardCharsets.UTF_8);
    }
}
`

// TestJavaOrderMatchesJDK runs the JDK, when one is installed, on random
// keys and set operations and compares with this package's model of it.
func TestJavaOrderMatchesJDK(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java in PATH")
	}
	if testing.Short() {
		t.Skip("starts a JVM")
	}
	version, _ := exec.Command(java, "-version").CombinedOutput()
	major := 0 // "1.8.0_x" is Java 8
	if m := regexp.MustCompile(`version "(\d+)`).FindSubmatch(version); m != nil {
		major, _ = strconv.Atoi(string(m[1]))
	}
	if major < 17 {
		t.Skipf("needs Java 17 or later (records, source launch): %s", version)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	alphabet := []rune("abcXYZ019-._é\u00ff\u0100\uE000\uFFFD\U0001F600\U00010000")
	keySet := map[string]bool{}
	var keys []string
	for len(keys) < 300 {
		var b strings.Builder
		if rng.IntN(3) == 0 {
			fmt.Fprintf(&b, "consumer-%d", rng.IntN(1000))
		} else {
			for range 1 + rng.IntN(8) {
				b.WriteRune(alphabet[rng.IntN(len(alphabet))])
			}
		}
		if k := b.String(); !keySet[k] {
			keySet[k] = true
			keys = append(keys, k)
		}
	}

	// Set operations on (key, partition) pairs of a few keys, so that the
	// set grows through several capacities and shrinks again.
	type tp struct{ key, partition int }
	var ops []string
	model := &javaPartitionSet{}
	var inSet []tp
	var wantFirst []string
	for range 3000 {
		var op string
		var e tp
		if len(inSet) > 0 && rng.IntN(5) < 2 {
			e = inSet[rng.IntN(len(inSet))]
			op = "r"
		} else {
			e = tp{rng.IntN(4), rng.IntN(200)}
			if slices.Contains(inSet, e) {
				continue
			}
			op = "a"
		}
		ops = append(ops, fmt.Sprintf("%s %d %d", op, e.key, e.partition))
		pid := int32(e.key*1000 + e.partition)
		if op == "a" {
			inSet = append(inSet, e)
			model.add(pid, topicPartitionHash(javaStringHash(keys[e.key]), int32(e.partition)))
		} else {
			inSet = slices.DeleteFunc(inSet, func(x tp) bool { return x == e })
			model.remove(pid)
		}
		if len(inSet) == 0 {
			wantFirst = append(wantFirst, "-")
			continue
		}
		f := model.first()
		wantFirst = append(wantFirst, fmt.Sprintf("%d %d", javaStringHash(keys[f/1000]), f%1000))
	}

	dir := t.TempDir()
	src := filepath.Join(dir, "JavaOrder.java")
	require.NoError(t, os.WriteFile(src, []byte(javaOrderProgram), 0o600))
	input := strconv.Itoa(len(keys)) + "\n" + strings.Join(keys, "\n") + "\n" + strings.Join(ops, "\n") + "\n"
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	require.NoError(t, os.WriteFile(in, []byte(input), 0o600))
	cmd := exec.Command(java, src, in, out)
	output, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", output)
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	line := func() string {
		require.True(t, sc.Scan())
		return sc.Text()
	}

	for _, k := range keys {
		assert.Equal(t, line(), strconv.Itoa(int(javaStringHash(k))), "hashCode of %q", k)
	}
	hashes := make([]int32, len(keys))
	for i, k := range keys {
		hashes[i] = javaStringHash(k)
	}
	assert.Equal(t, line(), ints(javaHashMapOrder(hashes)), "HashMap iteration order")
	byCompare := make([]int, len(keys))
	for i := range byCompare {
		byCompare[i] = i
	}
	slices.SortStableFunc(byCompare, func(a, b int) int { return javaCompare(keys[a], keys[b]) })
	assert.Equal(t, line(), ints(byCompare), "compareTo order")
	for i, w := range wantFirst {
		if !assert.Equal(t, line(), w, "first element after %s (op %d)", ops[i], i) {
			break
		}
	}
}

func ints(xs []int) string {
	var b strings.Builder
	for _, x := range xs {
		fmt.Fprintf(&b, "%d ", x)
	}
	return b.String()
}
