package txncodec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

type goldenCase struct {
	file   string
	decode func(b []byte) (any, error)
	want   any
	encode func() ([]byte, error) // nil: decoded only
}

func goldenCases() []goldenCase {
	dec := func(b []byte) (any, error) { return ParseValue(b) }
	return []goldenCase{
		{file: "key-v0.hex", decode: func(b []byte) (any, error) { return ParseKey(b) },
			want:   Key{TransactionalID: "orders-txn"},
			encode: func() ([]byte, error) { return AppendKey(nil, Key{TransactionalID: "orders-txn"}) }},
		{file: "value-v0.hex", decode: dec, want: goldenOngoing(),
			encode: func() ([]byte, error) { return AppendValueVersion(nil, goldenOngoing(), 0) }},
		{file: "value-v1.hex", decode: dec, want: goldenOngoing(),
			encode: func() ([]byte, error) { return AppendValue(nil, goldenOngoing()) }},
		{file: "value-v1-tagged.hex", decode: dec, want: goldenTagged(),
			encode: func() ([]byte, error) { return AppendValue(nil, goldenTagged()) }},
		{file: "value-v1-empty.hex", decode: dec, want: goldenEmpty(),
			encode: func() ([]byte, error) { return AppendValue(nil, goldenEmpty()) }},
		{file: "value-v1-unknown-tag.hex", decode: dec, want: goldenEmpty()},
	}
}

func TestGolden(t *testing.T) {
	cases := goldenCases()
	names, err := filepath.Glob(filepath.Join("testdata", "golden", "*.hex"))
	require.NoError(t, err)
	require.Len(t, names, len(cases), "every golden file has a case")
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			b := readGolden(t, c.file)
			got, err := c.decode(b)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
			if c.encode != nil {
				enc, err := c.encode()
				require.NoError(t, err)
				require.Equal(t, b, enc, "encoder bytes differ from the golden file")
			}
		})
	}
}

func TestGoldenFilesHaveComments(t *testing.T) {
	for _, c := range goldenCases() {
		raw, err := os.ReadFile(filepath.Join("testdata", "golden", c.file))
		require.NoError(t, err)
		require.Contains(t, string(raw), "#", c.file)
	}
}
