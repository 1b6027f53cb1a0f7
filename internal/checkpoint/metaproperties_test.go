package checkpoint

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseProperties pins Java's Properties.load rules.
func TestParseProperties(t *testing.T) {
	type m = map[string]string
	for _, tc := range []struct {
		name string
		in   string
		want m
		line int // > 0: a malformed file, reported on this line
	}{
		{name: "empty", in: "", want: m{}},
		{name: "separators", in: "a=1\nb:2\nc 3\nd\t4\ne\f5\n", want: m{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"}},
		{name: "whitespace around separators", in: "a = 1\nb\t:\t2\nc  =  = 3\n", want: m{"a": "1", "b": "2", "c": "= 3"}},
		{name: "space then separator", in: "key  :value\n", want: m{"key": "value"}},
		{name: "value keeps trailing whitespace", in: "a=1  \t\n", want: m{"a": "1  \t"}},
		{name: "leading whitespace skipped", in: "   \t a=1\n", want: m{"a": "1"}},
		{name: "comments", in: "#c\n!c\n  # indented comment\na=1 # not a comment\n", want: m{"a": "1 # not a comment"}},
		{name: "comment ending in backslash does not continue", in: "# c \\\na=1\n", want: m{"a": "1"}},
		{name: "blank lines", in: "\n\n  \n\t\na=1\n\n", want: m{"a": "1"}},
		{name: "key only", in: "a\nb=\nc:\n", want: m{"a": "", "b": "", "c": ""}},
		{name: "empty key", in: "=v\n", want: m{"": "v"}},
		{name: "crlf", in: "a=1\r\nb=2\r\n", want: m{"a": "1", "b": "2"}},
		{name: "lone cr", in: "a=1\rb=2\r", want: m{"a": "1", "b": "2"}},
		{name: "no final newline", in: "a=1", want: m{"a": "1"}},
		{name: "last wins", in: "a=1\na=2\n", want: m{"a": "2"}},
		{name: "continuation", in: "a=one \\\n    two\\\n\tthree\n", want: m{"a": "one twothree"}},
		{name: "continuation crlf", in: "a=x\\\r\n  y\r\n", want: m{"a": "xy"}},
		{name: "continuation into blank line", in: "a=x\\\n\nb=2\n", want: m{"a": "x", "b": "2"}},
		{name: "continuation at end of file", in: "a=x\\", want: m{"a": "x"}},
		{name: "continuation then end of file", in: "a=x\\\n  ", want: m{"a": "x"}},
		{name: "continued line starting with hash", in: "a=x\\\n#y\n", want: m{"a": "x#y"}},
		{name: "lone backslash line then blank", in: "\\\n\n#c\nb=2\n", want: m{"b": "2"}},
		{name: "lone backslash at end", in: "\\", want: m{"": ""}},
		{name: "lone backslash line at end", in: "a=1\n\\\n", want: m{"a": "1", "": ""}},
		{name: "lone backslash crlf at end", in: "a=1\n\\\r\n", want: m{"a": "1"}},
		{name: "comment after emptied continuation", in: "\\\n#c=1\n", want: m{}},
		{name: "escaped backslash ends no line", in: "a=x\\\\\nb=2\n", want: m{"a": "x\\", "b": "2"}},
		{name: "escaped separators in key", in: "a\\=b\\:c\\ d=1\n", want: m{"a=b:c d": "1"}},
		{name: "escapes", in: "a=\\t\\n\\r\\f\\\\\\x\\=\n", want: m{"a": "\t\n\r\f\\x="}},
		{name: "unicode escapes", in: "a=\\u0041\\u00e9\\u20AC\n", want: m{"a": "Aé€"}},
		{name: "surrogate pair", in: "a=\\uD83D\\uDE00\n", want: m{"a": "😀"}},
		{name: "lone surrogate", in: "a=\\uD83D\n", want: m{"a": "\uFFFD"}},
		{name: "iso-8859-1 bytes", in: "a=caf\xe9\n", want: m{"a": "café"}},
		{name: "utf-8 bytes read as iso-8859-1", in: "a=caf\xc3\xa9\n", want: m{"a": "cafÃ©"}},
		{name: "nul", in: "a=\x00\n", want: m{"a": "\x00"}},

		{name: "short unicode escape", in: "a=1\nb=\\u12\n", line: 2},
		{name: "bad unicode escape", in: "a=\\u12G4\n", line: 1},
		{name: "bad unicode escape in key", in: "\\uXXXX=1\n", line: 1},
		{name: "bad escape after continuation", in: "a=1\\\n \\u\n", line: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProperties("f", []byte(tc.in))
			if tc.line > 0 {
				requireCorrupt(t, err, "f", tc.line)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestEscapeProperty(t *testing.T) {
	for _, tc := range []struct {
		in, key, value string
	}{
		{"plain.key", "plain.key", "plain.key"},
		{"a b", `a\ b`, "a b"},
		{" lead", `\ lead`, `\ lead`},
		{"trail ", `trail\ `, "trail "},
		{"=:#!", `\=\:\#\!`, `\=\:\#\!`},
		{`back\slash`, `back\\slash`, `back\\slash`},
		{"\t\n\r\f", `\t\n\r\f`, `\t\n\r\f`},
		{"\x00\x1f\x7f", `\u0000\u001F\u007F`, `\u0000\u001F\u007F`},
		{"café€", `caf\u00E9\u20AC`, `caf\u00E9\u20AC`},
		{"😀", `\uD83D\uDE00`, `\uD83D\uDE00`},
		{"~}|{", "~}|{", "~}|{"},
	} {
		assert.Equal(t, tc.key, string(escapeProperty(nil, tc.in, true)), "key %q", tc.in)
		assert.Equal(t, tc.value, string(escapeProperty(nil, tc.in, false)), "value %q", tc.in)
	}
}

var goldenDate = time.Date(2026, 3, 6, 12, 0, 0, 0, time.UTC)

func TestAppendProperties(t *testing.T) {
	got := appendProperties(nil, map[string]string{"version": "1", "b key": " v=1", "a": ""}, goldenDate)
	assert.Equal(t, "#\n#Fri Mar 06 12:00:00 UTC 2026\na=\nb\\ key=\\ v\\=1\nversion=1\n", string(got))
	got = appendProperties(nil, nil, time.Date(2024, 1, 9, 8, 7, 6, 0, time.FixedZone("CET", 3600)))
	assert.Equal(t, "#\n#Tue Jan 09 08:07:06 CET 2024\n", string(got))
}

func kraftMeta() MetaProperties {
	return MetaProperties{
		Version:     MetaPropertiesV1,
		ClusterID:   "XzqcDhKrTH2OnwARIjOquw",
		NodeID:      1,
		DirectoryID: "DH4dKzpPTl2ci3ppWEc2JQ",
	}
}

func TestParseMetaProperties(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want MetaProperties
		err  bool
	}{
		{name: "kraft", in: "#\n#Fri Mar 06 12:00:00 UTC 2026\ncluster.id=XzqcDhKrTH2OnwARIjOquw\ndirectory.id=DH4dKzpPTl2ci3ppWEc2JQ\nnode.id=1\nversion=1\n",
			want: kraftMeta()},
		{name: "any order, other separators, padding whitespace",
			in:   "version : 1 \nnode.id  1\n  cluster.id=XzqcDhKrTH2OnwARIjOquw\t\ndirectory.id:DH4dKzpPTl2ci3ppWEc2JQ\n",
			want: kraftMeta()},
		{name: "padded directory id is made canonical",
			in:   "version=1\nnode.id=1\ncluster.id=XzqcDhKrTH2OnwARIjOquw\ndirectory.id=DH4dKzpPTl2ci3ppWEc2JQ==\n",
			want: kraftMeta()},
		{name: "no directory id", in: "version=1\nnode.id=0\ncluster.id=c\n",
			want: MetaProperties{Version: 1, ClusterID: "c", NodeID: 0}},
		{name: "unknown keys kept", in: "version=1\nnode.id=3\ncluster.id=c\nbroker.id=3\nx.y=z\n",
			want: MetaProperties{Version: 1, ClusterID: "c", NodeID: 3, Extra: map[string]string{"broker.id": "3", "x.y": "z"}}},
		{name: "v0 with broker.id", in: "version=0\nbroker.id=5\ncluster.id=c\n",
			want: MetaProperties{Version: 0, ClusterID: "c", NodeID: 5}},
		{name: "v0 implicit, nothing else", in: "#empty\n",
			want: MetaProperties{Version: 0, NodeID: -1}},
		{name: "v0 keeps node.id as unknown", in: "node.id=4\n",
			want: MetaProperties{Version: 0, NodeID: -1, Extra: map[string]string{"node.id": "4"}}},

		{name: "version 2 unsupported", in: "version=2\nnode.id=1\ndirectory.id=DH4dKzpPTl2ci3ppWEc2JQ\n", err: true},
		{name: "version not a number", in: "version=one\n", err: true},
		{name: "v1 without node.id", in: "version=1\ncluster.id=c\n", err: true},
		{name: "v1 without cluster.id", in: "version=1\nnode.id=1\n", err: true},
		{name: "v1 with empty cluster.id", in: "version=1\nnode.id=1\ncluster.id=  \n", err: true},
		{name: "negative node.id", in: "version=1\nnode.id=-1\ncluster.id=c\n", err: true},
		{name: "node.id over int32", in: "version=1\nnode.id=2147483648\ncluster.id=c\n", err: true},
		{name: "node.id not a number", in: "version=1\nnode.id=one\ncluster.id=c\n", err: true},
		{name: "negative broker.id", in: "version=0\nbroker.id=-1\n", err: true},
		{name: "bad directory.id", in: "version=1\nnode.id=1\ncluster.id=c\ndirectory.id=nope\n", err: true},
		{name: "reserved directory.id", in: "version=1\nnode.id=1\ncluster.id=c\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAQ\n", err: true},
		{name: "malformed escape", in: "version=1\nnode.id=1\ncluster.id=\\u00\n", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMetaProperties("f", []byte(tc.in))
			if tc.err {
				requireCorrupt(t, err, "f", -1)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestMetaPropertiesValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(*MetaProperties)
		ok     bool
	}{
		{"kraft", func(*MetaProperties) {}, true},
		{"no directory id", func(mp *MetaProperties) { mp.DirectoryID = "" }, true},
		{"extra", func(mp *MetaProperties) { mp.Extra = map[string]string{"k": "v", "broker.id": "1"} }, true},
		{"v0 without ids", func(mp *MetaProperties) { *mp = MetaProperties{NodeID: -1} }, true},
		{"v0 broker.id", func(mp *MetaProperties) { mp.Version = 0 }, true},

		{"version 2", func(mp *MetaProperties) { mp.Version = 2 }, false},
		{"negative version", func(mp *MetaProperties) { mp.Version = -1 }, false},
		{"v1 no cluster id", func(mp *MetaProperties) { mp.ClusterID = "" }, false},
		{"v1 negative node id", func(mp *MetaProperties) { mp.NodeID = -1 }, false},
		{"v0 node id below -1", func(mp *MetaProperties) { mp.Version = 0; mp.NodeID = -2 }, false},
		{"cluster id with space", func(mp *MetaProperties) { mp.ClusterID = "abc " }, false},
		{"cluster id with newline", func(mp *MetaProperties) { mp.ClusterID = "\nabc" }, false},
		{"cluster id not utf-8", func(mp *MetaProperties) { mp.ClusterID = "a\xffb" }, false},
		{"directory id not canonical", func(mp *MetaProperties) { mp.DirectoryID += "==" }, false},
		{"directory id garbage", func(mp *MetaProperties) { mp.DirectoryID = "x" }, false},
		{"directory id reserved", func(mp *MetaProperties) { mp.DirectoryID = TopicID{15: 42}.String() }, false},
		{"extra holds a known key", func(mp *MetaProperties) { mp.Extra = map[string]string{"node.id": "2"} }, false},
		{"extra holds version", func(mp *MetaProperties) { mp.Extra = map[string]string{"version": "2"} }, false},
		{"extra value not utf-8", func(mp *MetaProperties) { mp.Extra = map[string]string{"k": "\xff"} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mp := kraftMeta()
			tc.modify(&mp)
			err := mp.Validate()
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalid)
			_, err = appendMetaProperties(nil, mp, goldenDate)
			require.ErrorIs(t, err, ErrInvalid, "the writer validates")
		})
	}
}

func TestMetaPropertiesReadWrite(t *testing.T) {
	for _, e := range filesystems(t) {
		t.Run(e.name, func(t *testing.T) {
			name := e.path(MetaPropertiesFile)
			_, err := ReadMetaProperties(e.fs, name)
			require.ErrorIs(t, err, fs.ErrNotExist)

			mp := kraftMeta()
			mp.Extra = map[string]string{"custom key": "va=lue é", "z": ""}
			before := time.Now()
			require.NoError(t, WriteMetaProperties(e.fs, name, mp))
			data := readAll(t, e.fs, name)
			lines := strings.Split(string(data), "\n")
			require.Len(t, lines, 9)
			assert.Equal(t, "#", lines[0])
			date, err := time.Parse(javaDateLayout, strings.TrimPrefix(lines[1], "#"))
			require.NoError(t, err, lines[1])
			assert.WithinDuration(t, before, date, time.Hour*24, "the date is today's")
			assert.Equal(t, []string{
				"cluster.id=XzqcDhKrTH2OnwARIjOquw",
				`custom\ key=va\=lue \u00E9`,
				"directory.id=DH4dKzpPTl2ci3ppWEc2JQ",
				"node.id=1",
				"version=1",
				"z=",
				"",
			}, lines[2:])

			got, err := ReadMetaProperties(e.fs, name)
			require.NoError(t, err)
			assert.Equal(t, mp, got)

			require.ErrorIs(t, WriteMetaProperties(e.fs, name, MetaProperties{Version: 1}), ErrInvalid)
			got, err = ReadMetaProperties(e.fs, name)
			require.NoError(t, err)
			assert.Equal(t, mp, got, "a refused write leaves the file alone")
		})
	}
}

func TestNewMetaProperties(t *testing.T) {
	mp, err := NewMetaProperties("", 3, nil)
	require.NoError(t, err)
	require.NoError(t, mp.Validate())
	assert.Equal(t, MetaPropertiesV1, mp.Version)
	assert.Equal(t, int32(3), mp.NodeID)
	assert.Len(t, mp.ClusterID, 22)
	assert.Len(t, mp.DirectoryID, 22)
	assert.NotEqual(t, mp.ClusterID, mp.DirectoryID)

	mp, err = NewMetaProperties("my-cluster", 0, bytes.NewReader(bytes.Repeat([]byte{0x11}, 16)))
	require.NoError(t, err)
	assert.Equal(t, "my-cluster", mp.ClusterID)
	assert.Equal(t, "ERERERERQRGREREREREREQ", mp.DirectoryID, "version and variant bits set")

	_, err = NewMetaProperties("", 0, bytes.NewReader(nil))
	require.Error(t, err)
	_, err = NewMetaProperties("c", -1, nil)
	require.ErrorIs(t, err, ErrInvalid)
}
