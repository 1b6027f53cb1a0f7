package checkpoint

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLineScanner(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"lf", "a\nb\n", []string{"a", "b"}},
		{"no final terminator", "a\nb", []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"lone cr", "a\rb\r", []string{"a", "b"}},
		{"cr cr lf", "a\r\r\nb", []string{"a", "", "b"}},
		{"lf cr", "a\n\rb", []string{"a", "", "b"}},
		{"blank lines", "\n\n", []string{"", ""}},
		{"only terminator", "\n", []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := lineScanner{data: []byte(tc.in)}
			var got []string
			for {
				line, ok := s.next()
				if !ok {
					break
				}
				got = append(got, string(line))
				require.Equal(t, len(got), s.line)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestSplitFields pins Java's String.split("\\s+") semantics.
func TestSplitFields(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", []string{""}},
		{"a", []string{"a"}},
		{"a b c", []string{"a", "b", "c"}},
		{"a  \t b\fc\vd", []string{"a", "b", "c", "d"}},
		{"a b ", []string{"a", "b"}},
		{"a b \t ", []string{"a", "b"}},
		{" a b", []string{"", "a", "b"}},
		{"\ta", []string{"", "a"}},
		{"   ", nil},
		{" ", nil},
	} {
		var got []string
		for _, f := range splitFields(nil, []byte(tc.in)) {
			got = append(got, string(f))
		}
		assert.Equal(t, tc.want, got, "%q", tc.in)
	}
}

func TestParseInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		bits int
		want int64
		ok   bool
	}{
		{"0", 32, 0, true},
		{"+7", 32, 7, true},
		{"-7", 32, -7, true},
		{"007", 32, 7, true},
		{"2147483647", 32, 1<<31 - 1, true},
		{"2147483648", 32, 0, false},
		{"-2147483648", 32, -1 << 31, true},
		{"9223372036854775807", 64, 1<<63 - 1, true},
		{"9223372036854775808", 64, 0, false},
		{"", 32, 0, false},
		{"+", 32, 0, false},
		{"-", 32, 0, false},
		{"1_000", 32, 0, false},
		{"0x10", 32, 0, false},
		{" 1", 32, 0, false},
		{"1 ", 32, 0, false},
		{"1.0", 32, 0, false},
		{"١", 32, 0, false}, // Java accepts Unicode digits; Kafka never writes them
	} {
		got, ok := parseInt([]byte(tc.in), tc.bits)
		assert.Equal(t, tc.ok, ok, "%q", tc.in)
		if ok {
			assert.Equal(t, tc.want, got, "%q", tc.in)
		}
	}
}
