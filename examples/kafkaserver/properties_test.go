package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseProperties: a file with comments (one ending in a backslash),
// "key value", "key: value" and "key=value", continuations (one through
// "\r\n", one left open at the end of the file), escapes in keys and
// values, \u escapes with a surrogate pair, a UTF-8 byte pair (read as
// two ISO 8859-1 characters, as Kafka reads its file), a duplicate key
// and a bare key gives, key for key, what Java 17's Properties.load gives
// for the same bytes.
func TestParseProperties(t *testing.T) {
	b, err := os.ReadFile("testdata/tricky.properties")
	require.NoError(t, err)
	props, keys, err := parseProperties(b)
	require.NoError(t, err)
	require.Equal(t, map[string]string{
		"":                "novalue",
		"colonfirst":      "=v",
		"cr":              "x",
		"crlf":            "onetwo",
		"dup":             "second",
		"empty":           "",
		"esc":             "tab\there\nnl\\backslashq",
		"evenback":        "a\\",
		"key with spaces": "v",
		"key1":            "value1",
		"key2":            "value2   ",
		"key3":            "value3",
		"key4":            "multiline value",
		"key=eq:colon":    "x=y:z",
		"last":            "continued at EOF",
		"latin":           "caf\u00c3\u00a9",
		"next":            "b",
		"not.continued":   "1",
		"onlykey":         "",
		"trail":           "ends with backslashes \\\\",
		"uni":             "caf\u00e9 \u00fcber \U0001F600 end",
	}, props)
	require.Equal(t, "not.continued", keys[0], "keys in the order they first appear")
	require.Len(t, keys, len(props), "a key given twice is listed once")

	for _, bad := range []string{`a=\u12`, `a=\uzzzz`, "a=\\u00e"} {
		_, _, err := parseProperties([]byte(bad))
		require.ErrorIs(t, err, errMalformedUnicode, bad)
	}
}
