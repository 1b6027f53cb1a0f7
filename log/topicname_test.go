package log

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTopicNameValidate(t *testing.T) {
	tests := []struct {
		name  string
		topic string
		ok    bool
	}{
		{"simple", "orders", true},
		{"all legal characters", "aZ09._-", true},
		{"dots and dashes", "a.b-c_d", true},
		{"leading dash", "-x", true},
		{"internal", "__consumer_offsets", true},
		{"three dots", "...", true},
		{"249 chars", strings.Repeat("a", 249), true},
		{"empty", "", false},
		{"dot", ".", false},
		{"dot dot", "..", false},
		{"250 chars", strings.Repeat("a", 250), false},
		{"parent escape", "../x", false},
		{"slash", "a/b", false},
		{"backslash", `a\b`, false},
		{"absolute", "/etc", false},
		{"space", "a b", false},
		{"tab", "a\tb", false},
		{"newline", "a\nb", false},
		{"NUL", "a\x00b", false},
		{"unicode", "zürich", false},
		{"unicode lookalike dot", "a\u2024b", false},
		{"colon", "a:b", false},
		{"star", "*", false},
		{"invalid UTF-8", "a\xffb", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateTopicName(tc.topic)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidTopicName)
			var te *TopicNameError
			require.ErrorAs(t, err, &te)
			require.Equal(t, tc.topic, te.Name)
			require.NotEmpty(t, te.Reason)
		})
	}
}

func TestTopicNamesCollide(t *testing.T) {
	tests := []struct {
		a, b    string
		collide bool
	}{
		{"a.b", "a_b", true},
		{"a_b", "a.b", true},
		{"a.b", "a.b", true},
		{"a.b_c", "a_b.c", true},
		{"a.b", "a-b", false},
		{"ab", "a_b", false},
		{"a.b", "a.bc", false},
		{"x", "y", false},
	}
	for _, tc := range tests {
		require.Equal(t, tc.collide, TopicNamesCollide(tc.a, tc.b), "%q %q", tc.a, tc.b)
	}
}

func TestTopicNameInternal(t *testing.T) {
	for _, n := range []string{"__consumer_offsets", "__transaction_state", "__share_group_state", "__cluster_metadata"} {
		require.True(t, IsInternalTopic(n), n)
		require.NoError(t, ValidateTopicName(n))
	}
	for _, n := range []string{"orders", "__consumer_offsets2", "_consumer_offsets", "__CONSUMER_OFFSETS", ""} {
		require.False(t, IsInternalTopic(n), n)
	}
}

const dirTestUUID = "0123456789abcdef0123456789abcdef"

func TestTopicNamePartitionDir(t *testing.T) {
	tests := []struct {
		name string
		want PartitionDir
		err  error // nil: valid
	}{
		{"orders-0", PartitionDir{Topic: "orders", Partition: 0}, nil},
		{"orders-3", PartitionDir{Topic: "orders", Partition: 3}, nil},
		{"my-topic-12", PartitionDir{Topic: "my-topic", Partition: 12}, nil},
		{"x--1", PartitionDir{Topic: "x-", Partition: 1}, nil},
		{"__consumer_offsets-49", PartitionDir{Topic: "__consumer_offsets", Partition: 49}, nil},
		{"a.b-2147483647", PartitionDir{Topic: "a.b", Partition: 2147483647}, nil},
		{"my-stray-3", PartitionDir{Topic: "my-stray", Partition: 3}, nil},
		{strings.Repeat("t", 249) + "-0", PartitionDir{Topic: strings.Repeat("t", 249)}, nil},
		{"orders-3." + dirTestUUID + "-delete", PartitionDir{Topic: "orders", Partition: 3, Kind: DeletedPartitionDir, UniqueID: dirTestUUID}, nil},
		{"orders-3." + dirTestUUID + "-future", PartitionDir{Topic: "orders", Partition: 3, Kind: FuturePartitionDir, UniqueID: dirTestUUID}, nil},
		{"a-b-0." + dirTestUUID + "-stray", PartitionDir{Topic: "a-b", Partition: 0, Kind: StrayPartitionDir, UniqueID: dirTestUUID}, nil},
		{"a.b.c-7." + dirTestUUID + "-delete", PartitionDir{Topic: "a.b.c", Partition: 7, Kind: DeletedPartitionDir, UniqueID: dirTestUUID}, nil},

		{"", PartitionDir{}, ErrInvalidPartitionDir},
		{".", PartitionDir{}, ErrInvalidPartitionDir},
		{"..", PartitionDir{}, ErrInvalidPartitionDir},
		{"orders", PartitionDir{}, ErrInvalidPartitionDir},
		{"-0", PartitionDir{}, ErrInvalidTopicName},
		{".-0", PartitionDir{}, ErrInvalidTopicName},
		{"..-0", PartitionDir{}, ErrInvalidTopicName},
		{"../x-0", PartitionDir{}, ErrInvalidTopicName},
		{"a/b-0", PartitionDir{}, ErrInvalidTopicName},
		{`a\b-0`, PartitionDir{}, ErrInvalidTopicName},
		{"a\x00b-0", PartitionDir{}, ErrInvalidTopicName},
		{"zürich-0", PartitionDir{}, ErrInvalidTopicName},
		{strings.Repeat("t", 250) + "-0", PartitionDir{}, ErrInvalidTopicName},
		{"orders-", PartitionDir{}, ErrInvalidPartitionDir},
		{"orders-x", PartitionDir{}, ErrInvalidPartitionDir},
		{"orders-+1", PartitionDir{}, ErrInvalidPartitionDir},
		{"orders- 1", PartitionDir{}, ErrInvalidPartitionDir},
		{"orders-01", PartitionDir{}, ErrInvalidPartitionDir},
		{"orders-1.5", PartitionDir{}, ErrInvalidPartitionDir},
		{"orders-0x1", PartitionDir{}, ErrInvalidPartitionDir},
		{"orders-2147483648", PartitionDir{}, ErrInvalidPartitionDir},
		{"orders-99999999999999999999", PartitionDir{}, ErrInvalidPartitionDir},
		{"orders-٣", PartitionDir{}, ErrInvalidPartitionDir}, // Arabic-Indic digit three
		{"orders-3-delete", PartitionDir{}, ErrInvalidPartitionDir},
		{"orders-3.abc-delete", PartitionDir{}, ErrInvalidPartitionDir},
		{"orders-3." + strings.ToUpper(dirTestUUID) + "-delete", PartitionDir{}, ErrInvalidPartitionDir},
		{"orders-3." + dirTestUUID + "0-future", PartitionDir{}, ErrInvalidPartitionDir},
		{"orders." + dirTestUUID + "-delete", PartitionDir{}, ErrInvalidPartitionDir},
		{"-1." + dirTestUUID + "-delete", PartitionDir{}, ErrInvalidTopicName},
		{"../x-1." + dirTestUUID + "-stray", PartitionDir{}, ErrInvalidTopicName},
		{"orders-3." + dirTestUUID + "-deleted", PartitionDir{}, ErrInvalidPartitionDir},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParsePartitionDir(tc.name)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				require.ErrorIs(t, err, ErrInvalidPartitionDir)
				require.NotErrorIs(t, err, ErrSpecialPartitionDir)
				var pe *PartitionDirError
				require.ErrorAs(t, err, &pe)
				require.Equal(t, tc.name, pe.Name)
				_, _, err2 := ParsePartitionDirName(tc.name)
				require.ErrorIs(t, err2, ErrInvalidPartitionDir)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, d)
			require.Equal(t, tc.name, d.String(), "formats back to the same name")

			topic, p, err := ParsePartitionDirName(tc.name)
			require.Equal(t, tc.want.Topic, topic)
			require.Equal(t, tc.want.Partition, p)
			if d.Kind == LivePartitionDir {
				require.NoError(t, err)
				require.Equal(t, tc.name, PartitionDirName(topic, p))
				return
			}
			require.ErrorIs(t, err, ErrSpecialPartitionDir)
			require.NotErrorIs(t, err, ErrInvalidPartitionDir)
			for kind, sentinel := range map[PartitionDirKind]error{DeletedPartitionDir: ErrDeletedPartitionDir,
				FuturePartitionDir: ErrFuturePartitionDir, StrayPartitionDir: ErrStrayPartitionDir} {
				require.Equal(t, kind == d.Kind, errors.Is(err, sentinel), "%s vs %v", d.Kind, sentinel)
			}
			var pe *PartitionDirError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, d.Kind, pe.Kind)
			require.Contains(t, err.Error(), d.Kind.String())
		})
	}
}

func TestTopicNamePartitionDirRoundTrip(t *testing.T) {
	for _, topic := range []string{"a", "orders", "a-b-c", "x-", "-", "__transaction_state", strings.Repeat("z", 249)} {
		for _, p := range []int32{0, 1, 9, 10, 1 << 20, 2147483647} {
			name := PartitionDirName(topic, p)
			gotTopic, gotP, err := ParsePartitionDirName(name)
			require.NoError(t, err, name)
			require.Equal(t, topic, gotTopic)
			require.Equal(t, p, gotP)
		}
	}
}

func TestTopicNamePartitionDirKindString(t *testing.T) {
	require.Equal(t, "live", LivePartitionDir.String())
	require.Equal(t, "delete", DeletedPartitionDir.String())
	require.Equal(t, "future", FuturePartitionDir.String())
	require.Equal(t, "stray", StrayPartitionDir.String())
	require.Equal(t, "PartitionDirKind(9)", PartitionDirKind(9).String())
}

// FuzzTopicNamePartitionDir: ParsePartitionDir never panics; what it accepts
// is a single safe path element that formats back to the same name.
func FuzzTopicNamePartitionDir(f *testing.F) {
	for _, s := range []string{"orders-0", "a--1", "../x-0", "x-1." + dirTestUUID + "-delete", "", "-", "x-01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		d, err := ParsePartitionDir(name)
		if err != nil {
			return
		}
		require.Equal(t, name, d.String())
		require.NotContains(t, name, "/")
		require.NotContains(t, name, `\`)
		require.NotEqual(t, ".", name)
		require.NotEqual(t, "..", name)
		require.NoError(t, ValidateTopicName(d.Topic))
		require.GreaterOrEqual(t, d.Partition, int32(0))
	})
}
