package checkpoint

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustHex(t testing.TB, s string) TopicID {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	require.Len(t, b, 16)
	return TopicID(b)
}

// Vectors computed independently (Python's base64.urlsafe_b64encode of the
// 16 bytes, padding stripped).
var topicIDVectors = []struct{ hex, str string }{
	{"00000000000000000000000000000000", "AAAAAAAAAAAAAAAAAAAAAA"},
	{"00000000000000000000000000000001", "AAAAAAAAAAAAAAAAAAAAAQ"},
	{"b1c40e5a7c2f4d3e9a1b6c8d2e4f7081", "scQOWnwvTT6aG2yNLk9wgQ"},
	{"5f3a9c0e12ab4c7d8e9f00112233aabb", "XzqcDhKrTH2OnwARIjOquw"},
	{"0c7e1d2b3a4f4e5d9c8b7a6958473625", "DH4dKzpPTl2ci3ppWEc2JQ"},
	{"ffffffffffffffffffffffffffffffff", "_____________________w"},
	{"fbefbefbefbefbefbefbefbefbefbefb", "---------------------w"},
}

func TestTopicIDString(t *testing.T) {
	for _, v := range topicIDVectors {
		id := mustHex(t, v.hex)
		assert.Equal(t, v.str, id.String())
		got, err := ParseTopicID(v.str)
		require.NoError(t, err)
		assert.Equal(t, id, got)
		text, err := id.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, v.str, string(text))
	}
	assert.Equal(t, "AAAAAAAAAAAAAAAAAAAAAA", ZeroTopicID.String())
	assert.Equal(t, "AAAAAAAAAAAAAAAAAAAAAQ", MetadataTopicID.String())
	assert.True(t, ZeroTopicID.IsZero())
	assert.False(t, MetadataTopicID.IsZero())
}

func TestParseTopicID(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want string // hex; "" for an error
	}{
		{"canonical", "scQOWnwvTT6aG2yNLk9wgQ", "b1c40e5a7c2f4d3e9a1b6c8d2e4f7081"},
		{"padded", "scQOWnwvTT6aG2yNLk9wgQ==", "b1c40e5a7c2f4d3e9a1b6c8d2e4f7081"},
		{"unused low bits set", "scQOWnwvTT6aG2yNLk9wgR", "b1c40e5a7c2f4d3e9a1b6c8d2e4f7081"},
		{"zero", "AAAAAAAAAAAAAAAAAAAAAA", "00000000000000000000000000000000"},
		{"empty", "", ""},
		{"21 characters", "scQOWnwvTT6aG2yNLk9wg", ""},
		{"23 characters", "scQOWnwvTT6aG2yNLk9wgQA", ""},
		{"single padding", "scQOWnwvTT6aG2yNLk9wgQ=", ""},
		{"too long", "scQOWnwvTT6aG2yNLk9wgQ===", ""},
		{"24 characters of data", "scQOWnwvTT6aG2yNLk9wgQAA", ""},
		{"standard alphabet", "scQOWnwvTT6aG2yNLk9w+Q", ""},
		{"slash", "scQOWnwvTT6aG2yNLk9w/Q", ""},
		{"newline inside", "scQOWnwvTT6aG2yN\nk9wgQ", ""},
		{"trailing newline", "scQOWnwvTT6aG2yNLk9wgQ\n", ""},
		{"space", "scQOWnwvTT6aG2yNLk9wg ", ""},
		{"uuid with dashes", "b1c40e5a-7c2f-4d3e-9a1b-6c8d2e4f7081", ""},
		{"padding in the middle", "scQOWnwvTT6aG2yNLk9w==", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTopicID(tc.in)
			if tc.want == "" {
				require.ErrorIs(t, err, ErrInvalid)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, mustHex(t, tc.want), got)
		})
	}
}

func TestTopicIDJSON(t *testing.T) {
	id := mustHex(t, "b1c40e5a7c2f4d3e9a1b6c8d2e4f7081")
	b, err := json.Marshal(map[string]TopicID{"id": id})
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"scQOWnwvTT6aG2yNLk9wgQ"}`, string(b))
	var back map[string]TopicID
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, id, back["id"])
	require.ErrorIs(t, json.Unmarshal([]byte(`{"id":"nope"}`), &back), ErrInvalid)
}

func TestNewTopicID(t *testing.T) {
	// crypto/rand: many ids, all version 4, none reserved or starting with '-'.
	seen := make(map[TopicID]bool)
	for range 2000 {
		id, err := NewTopicID(nil)
		require.NoError(t, err)
		require.False(t, seen[id])
		seen[id] = true
		assert.Equal(t, byte(0x40), id[6]&0xf0, "version 4")
		assert.Equal(t, byte(0x80), id[8]&0xc0, "variant 2")
		s := id.String()
		assert.Len(t, s, 22)
		assert.False(t, strings.HasPrefix(s, "-"), s)
		assert.False(t, reservedDirectoryID(id))
		back, err := ParseTopicID(s)
		require.NoError(t, err)
		assert.Equal(t, id, back)
	}

	// A first draw whose string starts with '-' (first byte 0xf8) is drawn
	// again.
	dash := bytes.Repeat([]byte{0xf8}, 16)
	good, _ := hex.DecodeString("b1c40e5a7c2f4d3e9a1b6c8d2e4f7081")
	id, err := NewTopicID(bytes.NewReader(append(dash, good...)))
	require.NoError(t, err)
	assert.Equal(t, "scQOWnwvTT6aG2yNLk9wgQ", id.String(), "these bytes are already version 4, variant 2")

	// Zero bytes become a version 4 id, not the zero id.
	id, err = NewTopicID(bytes.NewReader(make([]byte, 16)))
	require.NoError(t, err)
	assert.False(t, id.IsZero())
	assert.NotEqual(t, MetadataTopicID, id)

	// A reader that only makes '-' ids, and one that fails.
	_, err = NewTopicID(bytes.NewReader(bytes.Repeat([]byte{0xf8}, 16*maxRandomTries)))
	require.Error(t, err)
	_, err = NewTopicID(bytes.NewReader(make([]byte, 5)))
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	boom := errors.New("boom")
	_, err = NewTopicID(failingReader{boom})
	require.ErrorIs(t, err, boom)
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestReservedDirectoryID(t *testing.T) {
	assert.True(t, reservedDirectoryID(ZeroTopicID))
	assert.True(t, reservedDirectoryID(MetadataTopicID))
	assert.True(t, reservedDirectoryID(TopicID{15: 99}))
	assert.False(t, reservedDirectoryID(TopicID{15: 100}))
	assert.False(t, reservedDirectoryID(TopicID{14: 1}))
	assert.False(t, reservedDirectoryID(TopicID{0: 1}))
}
