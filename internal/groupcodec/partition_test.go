package groupcodec

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The vectors were computed from Kafka's rule (see PartitionFor) by a
// separate Python program, independent of this package:
//
//	def jhash(s):                      # Java String.hashCode
//	    b = s.encode('utf-16-be'); h = 0
//	    for i in range(0, len(b), 2):
//	        h = (31*h + (b[i] << 8 | b[i+1])) & 0xffffffff
//	    return h - 2**32 if h >= 2**31 else h
//	def part(s, n):                    # Utils.abs(hash) % n
//	    h = jhash(s); return (0 if h == -2**31 else abs(h)) % n
func TestPartitionFor(t *testing.T) {
	for _, tc := range []struct {
		group        string
		hash         int32
		p50, p7, p1  int32
		illustrating string
	}{
		{"", 0, 0, 0, 0, "empty group id"},
		{"a", 97, 47, 6, 0, "one ASCII character"},
		{"ab", 3105, 5, 4, 0, "31*97 + 98"},
		{"my-group", -1906497762, 12, 1, 0, "negative hash"},
		{"console-consumer-12345", 158455506, 6, 6, 0, "positive hash"},
		{"polygenelubricants", math.MinInt32, 0, 0, 0, "hash MinInt32: Utils.abs gives 0"},
		{"\U0001F600", 1772899, 49, 2, 0, "non-BMP: surrogates D83D DE00"},
		{"grüße", 98768023, 23, 4, 0, "Latin-1 characters, two UTF-8 bytes each"},
		{"组", 32452, 2, 0, 0, "CJK, one UTF-16 unit"},
		{"g\U0001F600\U00010348x", -14426650, 0, 0, 0, "two non-BMP characters"},
		{"\uffff", 65535, 35, 1, 0, "highest BMP code unit"},
		{"connect-cluster", 1440343063, 13, 5, 0, "Kafka Connect's default group"},
		{"orders-app", 772757305, 5, 5, 0, "the group of the golden files"},
		{"zzzzzzzzzzzzzzzz", -509494784, 34, 1, 0, "wrapping int32 arithmetic"},
	} {
		t.Run(tc.illustrating, func(t *testing.T) {
			require.Equal(t, tc.hash, javaStringHashCode(tc.group))
			require.Equal(t, tc.p50, PartitionFor(tc.group, DefaultOffsetsTopicPartitions))
			require.Equal(t, tc.p7, PartitionFor(tc.group, 7))
			require.Equal(t, tc.p1, PartitionFor(tc.group, 1))
		})
	}
}

func TestPartitionForInvalidCount(t *testing.T) {
	require.Equal(t, int32(-1), PartitionFor("g", 0))
	require.Equal(t, int32(-1), PartitionFor("g", -50))
}

func TestPartitionForInvalidUTF8(t *testing.T) {
	// An invalid byte counts as U+FFFD.
	require.Equal(t, javaStringHashCode("a\uFFFDb"), javaStringHashCode("a\xffb"))
}
