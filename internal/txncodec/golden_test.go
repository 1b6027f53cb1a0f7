package txncodec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/golden"
	"github.com/stretchr/testify/require"
)

func goldenCases() []golden.Case {
	dec := func(b []byte) (any, error) { return ParseValue(b) }
	return []golden.Case{
		{File: "key-v0.hex", Decode: func(b []byte) (any, error) { return ParseKey(b) },
			Want:   Key{TransactionalID: "orders-txn"},
			Encode: func() ([]byte, error) { return AppendKey(nil, Key{TransactionalID: "orders-txn"}) }},
		{File: "value-v0.hex", Decode: dec, Want: goldenOngoing(),
			Encode: func() ([]byte, error) { return AppendValueVersion(nil, goldenOngoing(), 0) }},
		{File: "value-v1.hex", Decode: dec, Want: goldenOngoing(),
			Encode: func() ([]byte, error) { return AppendValue(nil, goldenOngoing()) }},
		{File: "value-v1-tagged.hex", Decode: dec, Want: goldenTagged(),
			Encode: func() ([]byte, error) { return AppendValue(nil, goldenTagged()) }},
		{File: "value-v1-empty.hex", Decode: dec, Want: goldenEmpty(),
			Encode: func() ([]byte, error) { return AppendValue(nil, goldenEmpty()) }},
		{File: "value-v1-unknown-tag.hex", Decode: dec, Want: goldenEmpty()},
	}
}

func TestGolden(t *testing.T) {
	cases := goldenCases()
	names, err := filepath.Glob(filepath.Join(golden.Dir, "*.hex"))
	require.NoError(t, err)
	require.Len(t, names, len(cases), "every golden file has a case")
	golden.Check(t, cases)
}

func TestGoldenFilesHaveComments(t *testing.T) {
	for _, c := range goldenCases() {
		raw, err := os.ReadFile(filepath.Join(golden.Dir, c.File))
		require.NoError(t, err)
		require.Contains(t, string(raw), "#", c.File)
	}
}
