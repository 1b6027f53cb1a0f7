package readme_test

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// root is the repository's root, from this package's directory.
const root = "../.."

// docs returns the checked markdown files, as paths from the root: the
// README, DESIGN.md, CHANGELOG.md, docs/*.md and examples/*/README.md.
func docs(t *testing.T) []string {
	t.Helper()
	out := []string{"README.md", "DESIGN.md", "CHANGELOG.md"}
	for _, pattern := range []string{"docs/*.md", "examples/*/README.md"} {
		matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		require.NoError(t, err)
		require.NotEmpty(t, matches, pattern)
		for _, m := range matches {
			rel, err := filepath.Rel(root, m)
			require.NoError(t, err)
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

// sampleFiles are the files that hold sample regions, as paths from the
// root.
func sampleFiles(t *testing.T) []string {
	t.Helper()
	matches, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	out := []string{"log/logtest/readme_test.go"}
	for _, m := range matches {
		out = append(out, "examples/readme/"+m)
	}
	return out
}

// TestSamplesAreTheREADMEs: each doc's ```go blocks and the sample regions
// that name the doc are the same texts, each block one region; every
// region names a checked doc, and the README shows two.
func TestSamplesAreTheREADMEs(t *testing.T) {
	checked := docs(t)
	regions := map[string][]string{}
	for _, file := range sampleFiles(t) {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		require.NoError(t, err)
		for doc, texts := range sampleRegions(t, file, src) {
			require.Contains(t, checked, doc, "%s: a region names %s, which is not a checked doc", file, doc)
			regions[doc] = append(regions[doc], texts...)
		}
	}
	require.Len(t, regions["README.md"], 2, "the README shows two samples")
	for _, doc := range checked {
		md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(doc)))
		require.NoError(t, err)
		require.ElementsMatch(t, regions[doc], goBlocks(t, doc, md),
			"every ```go block of %s is a sample region that names it, and every such region is in it", doc)
	}
}

// goBlocks returns a markdown file's ```go blocks, without trailing blank
// lines.
func goBlocks(t *testing.T, name string, md []byte) []string {
	t.Helper()
	var blocks []string
	var cur *strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(md))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && line == "```go":
			cur = &strings.Builder{}
		case cur != nil && line == "```":
			blocks = append(blocks, strings.TrimRight(cur.String(), "\n")+"\n")
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	require.NoError(t, sc.Err())
	require.Nil(t, cur, "%s: an unclosed ```go block", name)
	return blocks
}

// sampleRegions returns, per doc, the regions between a "// sample begin:
// <doc>" and a "// sample end" line, each with the indentation of its
// begin line taken off every line and without trailing blank lines.
func sampleRegions(t *testing.T, file string, src []byte) map[string][]string {
	t.Helper()
	regions := map[string][]string{}
	var cur *strings.Builder
	doc, indent := "", ""
	for i, line := range strings.Split(string(src), "\n") {
		trimmed := strings.TrimLeft(line, "\t")
		switch {
		case strings.HasPrefix(trimmed, "// sample begin: "):
			require.Nil(t, cur, "%s:%d: a region inside a region", file, i+1)
			doc = strings.TrimPrefix(trimmed, "// sample begin: ")
			cur, indent = &strings.Builder{}, line[:len(line)-len(trimmed)]
		case trimmed == "// sample end":
			require.NotNil(t, cur, "%s:%d: an end without a begin", file, i+1)
			regions[doc] = append(regions[doc], strings.TrimRight(cur.String(), "\n")+"\n")
			cur = nil
		case cur != nil:
			if line != "" && !strings.HasPrefix(line, indent) {
				require.Fail(t, "under-indented line", "%s:%d", file, i+1)
			}
			cur.WriteString(strings.TrimPrefix(line, indent) + "\n")
		}
	}
	require.Nil(t, cur, "%s: an unclosed region", file)
	return regions
}

// TestDocLinks: every relative link of a checked doc names a file or
// directory that exists and, where it names an anchor, a heading of that
// markdown file (or of the doc itself, for "#anchor").
func TestDocLinks(t *testing.T) {
	anchors := map[string][]string{} // markdown file -> its headings' anchors
	anchorsOf := func(file string) []string {
		if a, ok := anchors[file]; ok {
			return a
		}
		md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		require.NoError(t, err)
		anchors[file] = headingAnchors(md)
		return anchors[file]
	}
	links := 0
	for _, doc := range docs(t) {
		md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(doc)))
		require.NoError(t, err)
		for _, target := range relativeLinks(md) {
			links++
			file, anchor, _ := strings.Cut(target, "#")
			if file == "" {
				file = doc
			} else {
				file = path.Join(path.Dir(doc), file)
				if !assert.False(t, strings.HasPrefix(file, "../"), "%s: %s leaves the repository", doc, target) {
					continue
				}
				_, err := os.Stat(filepath.Join(root, filepath.FromSlash(file)))
				if !assert.NoError(t, err, "%s: the link %s names no file", doc, target) {
					continue
				}
			}
			if anchor != "" {
				if assert.True(t, strings.HasSuffix(file, ".md"), "%s: %s names an anchor in a file that is not markdown", doc, target) {
					assert.Contains(t, anchorsOf(file), anchor, "%s: the link %s names no heading of %s", doc, target, file)
				}
			}
		}
	}
	require.Positive(t, links)
}

// TestHeadingAnchors: anchors are made from headings as GitHub makes them.
func TestHeadingAnchors(t *testing.T) {
	md := "# kafkalite\n## Packages `consumer` and `consumer/assignor`\n```sh\n# not a heading\n```\n" +
		"## Exactly once: transactions and read_committed\n### 11.8 `kafkalite-topics.json` (kafkalite's own)\n" +
		"## Compaction\n## Compaction\n"
	require.Equal(t, []string{"kafkalite", "packages-consumer-and-consumerassignor",
		"exactly-once-transactions-and-read_committed", "118-kafkalite-topicsjson-kafkalites-own",
		"compaction", "compaction-1"}, headingAnchors([]byte(md)))
	require.Equal(t, []string{"docs/guide.md#produce", "#local", "../x.md"},
		relativeLinks([]byte("[a](docs/guide.md#produce) [b `c`](#local) `[not](a.md)` <!-- [no](b.md) -->\n"+
			"[web](https://example.com) [mail](mailto:a@b.c)\n```\n[not](c.md)\n```\n[up](../x.md \"title\")\n")))
}

var (
	linkTarget = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	comment    = regexp.MustCompile(`(?s)<!--.*?-->`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// relativeLinks returns the targets of a markdown file's inline links
// outside code, leaving out those with a scheme (https:, mailto:).
func relativeLinks(md []byte) []string {
	var out []string
	for _, line := range proseLines(md) {
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range linkTarget.FindAllStringSubmatch(line, -1) {
			if !scheme.MatchString(m[1]) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// headingAnchors returns the anchors GitHub gives a markdown file's ATX
// headings, in order: the heading's text without markup, lower-cased,
// without punctuation, spaces made hyphens, and "-1", "-2"... after a
// repeated one.
func headingAnchors(md []byte) []string {
	var out []string
	seen := map[string]int{}
	for _, line := range proseLines(md) {
		level := len(line) - len(strings.TrimLeft(line, "#"))
		if level == 0 || level > 6 || !strings.HasPrefix(line[level:], " ") {
			continue
		}
		text := strings.ToLower(strings.TrimSpace(line[level:]))
		var b strings.Builder
		for _, r := range text {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
				b.WriteRune(r)
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			seen[anchor]++
			anchor += "-" + strconv.Itoa(n)
		} else {
			seen[anchor] = 1
		}
		out = append(out, anchor)
	}
	return out
}

// proseLines returns a markdown file's lines outside fenced code blocks,
// with HTML comments removed.
func proseLines(md []byte) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(comment.ReplaceAllString(string(md), ""), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return slices.Clip(out)
}
