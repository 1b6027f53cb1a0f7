package checkpoint

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

func TestTopicPartitionString(t *testing.T) {
	assert.Equal(t, "orders-3", TopicPartition{"orders", 3}.String())
	assert.Equal(t, "my-topic-0", TopicPartition{"my-topic", 0}.String())
	assert.Equal(t, "__consumer_offsets-49", TopicPartition{"__consumer_offsets", 49}.String())
}

func TestCheckTopic(t *testing.T) {
	valid := []string{"a", "orders", "my-topic.v2_x", "__consumer_offsets", "..a", "...", strings.Repeat("x", 249)}
	for _, name := range valid {
		assert.Empty(t, checkTopic(name), "%q", name)
	}
	invalid := []string{"", ".", "..", strings.Repeat("x", 250), "a b", "a\tb", "tópico", "a/b", "a\x00", "a:b", "a+b"}
	for _, name := range invalid {
		assert.NotEmpty(t, checkTopic(name), "%q", name)
	}
}

// TestParseOffsets is the reader's table: what Kafka's reader accepts (and
// this one too), and what is corrupt, with the line reported.
func TestParseOffsets(t *testing.T) {
	type tps = map[TopicPartition]int64
	two := tps{{"orders", 0}: 1200, {"orders", 1}: 980}
	for _, tc := range []struct {
		name string
		in   string
		want tps
		line int // for errors: the line reported; want is ignored
		err  bool
	}{
		{name: "canonical", in: "0\n2\norders 0 1200\norders 1 980\n", want: two},
		{name: "empty file", in: "", want: tps{}},
		{name: "version line only", in: "0\n", want: tps{}},
		{name: "version line only, no newline", in: "0", want: tps{}},
		{name: "no entries", in: "0\n0\n", want: tps{}},
		{name: "crlf", in: "0\r\n2\r\norders 0 1200\r\norders 1 980\r\n", want: two},
		{name: "lone cr", in: "0\r2\rorders 0 1200\rorders 1 980\r", want: two},
		{name: "no final newline", in: "0\n2\norders 0 1200\norders 1 980", want: two},
		{name: "trailing spaces on entries", in: "0\n2\norders 0 1200 \norders 1 980\t\t\n", want: two},
		{name: "tabs and runs of spaces", in: "0\n2\norders\t0  1200\norders \f1\v980\n", want: two},
		{name: "signs and leading zeros", in: "+0\n+2\norders +0 01200\norders 1 980\n", want: two},
		{name: "negative offset", in: "0\n1\norders 0 -1\n", want: tps{{"orders", 0}: -1}},
		{name: "int64 extremes", in: "0\n2\na 0 9223372036854775807\nb 2147483647 -9223372036854775808\n",
			want: tps{{"a", 0}: 1<<63 - 1, {"b", 1<<31 - 1}: -1 << 63}},
		{name: "duplicate partition, last wins", in: "0\n2\norders 0 1\norders 0 2\n", want: tps{{"orders", 0}: 2}},

		{name: "wrong version", in: "1\n0\n", err: true, line: 1},
		{name: "negative version", in: "-1\n0\n", err: true, line: 1},
		{name: "version not a number", in: "zero\n0\n", err: true, line: 1},
		{name: "version with trailing space", in: "0 \n0\n", err: true, line: 1},
		{name: "version with leading space", in: " 0\n0\n", err: true, line: 1},
		{name: "empty version line", in: "\n0\n", err: true, line: 1},
		{name: "utf-8 bom", in: "\ufeff0\n0\n", err: true, line: 1},
		{name: "count not a number", in: "0\ntwo\n", err: true, line: 2},
		{name: "count with trailing space", in: "0\n1 \norders 0 1\n", err: true, line: 2},
		{name: "negative count", in: "0\n-1\n", err: true, line: 2},
		{name: "count over int32", in: "0\n2147483648\n", err: true, line: 2},
		{name: "huge count, no entries", in: "0\n2147483647\n", err: true, line: 2},
		{name: "count larger than entries", in: "0\n3\norders 0 1200\norders 1 980\n", err: true, line: 2},
		{name: "count smaller than entries", in: "0\n1\norders 0 1200\norders 1 980\n", err: true, line: 2},
		{name: "extra empty line", in: "0\n2\norders 0 1200\norders 1 980\n\n", err: true, line: 5},
		{name: "empty line between entries", in: "0\n2\norders 0 1200\n\norders 1 980\n", err: true, line: 4},
		{name: "leading space on entry", in: "0\n1\n orders 0 1200\n", err: true, line: 3},
		{name: "whitespace-only entry", in: "0\n1\n   \n", err: true, line: 3},
		{name: "two fields", in: "0\n1\norders 0\n", err: true, line: 3},
		{name: "four fields", in: "0\n1\norders 0 1 2\n", err: true, line: 3},
		{name: "topic with space", in: "0\n1\nmy topic 0 1\n", err: true, line: 3},
		{name: "invalid topic character", in: "0\n1\nmy/topic 0 1\n", err: true, line: 3},
		{name: "topic dot", in: "0\n1\n. 0 1\n", err: true, line: 3},
		{name: "topic too long", in: "0\n1\n" + strings.Repeat("t", 250) + " 0 1\n", err: true, line: 3},
		{name: "negative partition", in: "0\n1\norders -1 5\n", err: true, line: 3},
		{name: "partition not a number", in: "0\n1\norders x 5\n", err: true, line: 3},
		{name: "partition over int32", in: "0\n1\norders 2147483648 5\n", err: true, line: 3},
		{name: "offset not a number", in: "0\n1\norders 0 5x\n", err: true, line: 3},
		{name: "offset over int64", in: "0\n1\norders 0 9223372036854775808\n", err: true, line: 3},
		{name: "offset as float", in: "0\n1\norders 0 5.0\n", err: true, line: 3},
		{name: "garbage", in: "\x00\xff\xfe", err: true, line: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseOffsets("f", []byte(tc.in))
			if tc.err {
				requireCorrupt(t, err, "f", tc.line)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestOffsetsReadWrite(t *testing.T) {
	offsets := map[TopicPartition]int64{
		{"payments", 0}:            42,
		{"orders", 10}:             7,
		{"orders", 2}:              1,
		{"orders", 0}:              1200,
		{"__consumer_offsets", 17}: 5021,
	}
	want := "0\n5\n__consumer_offsets 17 5021\norders 0 1200\norders 2 1\norders 10 7\npayments 0 42\n"
	for _, e := range filesystems(t) {
		t.Run(e.name, func(t *testing.T) {
			name := e.path(RecoveryPointFile)

			got, err := ReadOffsets(e.fs, name)
			require.NoError(t, err, "a missing file is no checkpoint")
			require.NotNil(t, got)
			assert.Empty(t, got)

			require.NoError(t, WriteOffsets(e.fs, name, offsets))
			assert.Equal(t, want, string(readAll(t, e.fs, name)))
			got, err = ReadOffsets(e.fs, name)
			require.NoError(t, err)
			assert.Equal(t, offsets, got)

			require.NoError(t, WriteOffsets(e.fs, name, nil))
			assert.Equal(t, "0\n0\n", string(readAll(t, e.fs, name)))
			got, err = ReadOffsets(e.fs, name)
			require.NoError(t, err)
			assert.Empty(t, got)

			writeRaw(t, e.fs, name, []byte("0\n1\n"))
			_, err = ReadOffsets(e.fs, name)
			requireCorrupt(t, err, name, 2)
		})
	}
}

func TestWriteOffsetsInvalid(t *testing.T) {
	mem := vfs.NewMem()
	for _, tc := range []struct {
		name string
		tp   TopicPartition
	}{
		{"empty topic", TopicPartition{"", 0}},
		{"space in topic", TopicPartition{"my topic", 0}},
		{"newline in topic", TopicPartition{"a\nb", 0}},
		{"negative partition", TopicPartition{"orders", -1}},
		{"dot-dot topic", TopicPartition{"..", 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteOffsets(mem, "/cp", map[TopicPartition]int64{{"ok", 0}: 1, tc.tp: 5})
			require.ErrorIs(t, err, ErrInvalid)
			_, err = mem.Stat("/cp")
			require.Error(t, err, "nothing is written")
			_, err = mem.Stat("/cp.tmp")
			require.Error(t, err, "nothing is written")
		})
	}
}

func TestReadOffsetsTooLarge(t *testing.T) {
	mem := vfs.NewMem()
	f, err := mem.Create("/cp")
	require.NoError(t, err)
	require.NoError(t, f.Truncate(maxCheckpointBytes+1)) // sparse
	require.NoError(t, f.Close())
	_, err = ReadOffsets(mem, "/cp")
	requireCorrupt(t, err, "/cp", 0)
}
