package record

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// fixtureRecord is one record of testdata/interop/expected.json; []byte
// fields are base64 in JSON and null stays nil.
type fixtureRecord struct {
	Offset    int64  `json:"offset"`
	Timestamp int64  `json:"timestamp"`
	Key       []byte `json:"key"`
	Value     []byte `json:"value"`
	Headers   []struct {
		Key   string `json:"key"`
		Value []byte `json:"value"`
	} `json:"headers"`
}

// TestInteropFixtures decodes batches written by other encoders (franz-go's
// kmsg, stdlib gzip, golang/snappy, lz4 and zstd with other options; see
// testdata/interop/README.md) and compares them with the records they
// hold.
func TestInteropFixtures(t *testing.T) {
	raw, err := os.ReadFile("testdata/interop/expected.json")
	require.NoError(t, err)
	var cases []struct {
		File    string          `json:"file"`
		Records []fixtureRecord `json:"records"`
	}
	require.NoError(t, json.Unmarshal(raw, &cases))
	files, err := filepath.Glob("testdata/interop/*.hex")
	require.NoError(t, err)
	require.Len(t, cases, len(files), "every fixture file is listed in expected.json")
	for _, tc := range cases {
		t.Run(tc.File, func(t *testing.T) {
			_, got := decodeAll(t, readHex(t, filepath.Join("testdata", "interop", tc.File)))
			want := make([]Record, len(tc.Records))
			for i, r := range tc.Records {
				want[i] = Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value}
				for _, h := range r.Headers {
					want[i].Headers = append(want[i].Headers, Header{Key: []byte(h.Key), Value: h.Value})
				}
			}
			// encoding/json decodes "" to an empty, non-nil slice and null
			// to nil, so null and empty stay distinct.
			requireSameRecords(t, want, got)
		})
	}
}
