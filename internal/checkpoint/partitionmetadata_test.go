package checkpoint

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePartitionMetadata(t *testing.T) {
	const id = "scQOWnwvTT6aG2yNLk9wgQ"
	for _, tc := range []struct {
		name string
		in   string
		ok   bool
		line int
	}{
		{name: "canonical", in: "version: 0\ntopic_id: " + id, ok: true},
		{name: "final newline", in: "version: 0\ntopic_id: " + id + "\n", ok: true},
		{name: "crlf", in: "version: 0\r\ntopic_id: " + id + "\r\n", ok: true},
		{name: "newer version", in: "version: 7\ntopic_id: " + id, ok: true},
		{name: "tabs and runs of whitespace", in: "version:\t \t0\ntopic_id:   " + id, ok: true},
		{name: "padded id", in: "version: 0\ntopic_id: " + id + "==", ok: true},
		{name: "trailing lines ignored", in: "version: 0\ntopic_id: " + id + "\ngarbage\n\x00", ok: true},
		{name: "plus sign", in: "version: +0\ntopic_id: " + id, ok: true},

		{name: "empty", in: "", line: 1},
		{name: "version only", in: "version: 0\n", line: 2},
		{name: "no space after colon", in: "version:0\ntopic_id: " + id, line: 1},
		{name: "space before colon", in: "version : 0\ntopic_id: " + id, line: 1},
		{name: "wrong key", in: "versions: 0\ntopic_id: " + id, line: 1},
		{name: "negative version", in: "version: -1\ntopic_id: " + id, line: 1},
		{name: "version not a number", in: "version: x\ntopic_id: " + id, line: 1},
		{name: "version with trailing space", in: "version: 0 \ntopic_id: " + id, line: 1},
		{name: "lines swapped", in: "topic_id: " + id + "\nversion: 0", line: 1},
		{name: "wrong id key", in: "version: 0\ntopicId: " + id, line: 2},
		{name: "id with trailing space", in: "version: 0\ntopic_id: " + id + " ", line: 2},
		{name: "short id", in: "version: 0\ntopic_id: scQOWnwvTT6aG2yN", line: 2},
		{name: "empty id", in: "version: 0\ntopic_id: ", line: 2},
		{name: "zero id", in: "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", line: 2},
		{name: "blank line first", in: "\nversion: 0\ntopic_id: " + id, line: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsePartitionMetadata("f", []byte(tc.in))
			if !tc.ok {
				requireCorrupt(t, err, "f", tc.line)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, id, got.String())
		})
	}
}

func TestPartitionMetadataReadWrite(t *testing.T) {
	id := mustHex(t, "b1c40e5a7c2f4d3e9a1b6c8d2e4f7081")
	for _, e := range filesystems(t) {
		t.Run(e.name, func(t *testing.T) {
			name := e.path(PartitionMetadataFile)
			_, err := ReadPartitionMetadata(e.fs, name)
			require.ErrorIs(t, err, fs.ErrNotExist)

			require.NoError(t, WritePartitionMetadata(e.fs, name, id))
			assert.Equal(t, "version: 0\ntopic_id: scQOWnwvTT6aG2yNLk9wgQ", string(readAll(t, e.fs, name)))
			got, err := ReadPartitionMetadata(e.fs, name)
			require.NoError(t, err)
			assert.Equal(t, id, got)

			require.ErrorIs(t, WritePartitionMetadata(e.fs, name, ZeroTopicID), ErrInvalid)
			got, err = ReadPartitionMetadata(e.fs, name)
			require.NoError(t, err)
			assert.Equal(t, id, got)

			writeRaw(t, e.fs, name, []byte("version: 0\n"))
			_, err = ReadPartitionMetadata(e.fs, name)
			requireCorrupt(t, err, name, 2)
		})
	}
}
