package kafkacheck

import (
	"encoding/base64"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// KafkaRecord is a data record as Kafka's record classes decode it from a
// .log file (testdata/java/RecordDump.java): what DumpLogSegments does not
// print, header values and the exact bytes of keys and values.
type KafkaRecord struct {
	File      string
	Offset    int64
	Timestamp int64
	// Key and Value are nil for null.
	Key, Value []byte
	Headers    []record.Header
}

// RecordBytes decodes every data record of the .log files with Kafka's
// FileRecords (checking each batch's CRC), by running RecordDump.java with
// Java's source-file launcher against Kafka's jars: one JVM for all files.
func (k *Kafka) RecordBytes(t testing.TB, files []string) []KafkaRecord {
	t.Helper()
	var out []KafkaRecord
	for _, l := range k.runJavaSource(t, "RecordDump", files...) {
		f := strings.Split(l, "\t")
		require.True(t, len(f) >= 6 && len(f)%2 == 0 && f[0] == "rec", "RecordDump line %q", l)
		r := KafkaRecord{File: f[1], Key: unb64(t, f[4]), Value: unb64(t, f[5])}
		var err error
		r.Offset, err = strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, err)
		r.Timestamp, err = strconv.ParseInt(f[3], 10, 64)
		require.NoError(t, err)
		for i := 6; i < len(f); i += 2 {
			r.Headers = append(r.Headers, record.Header{Key: unb64(t, f[i]), Value: unb64(t, f[i+1])})
		}
		out = append(out, r)
	}
	return out
}

// unb64 decodes RecordDump's field: "-" is null, "" empty.
func unb64(t testing.TB, s string) []byte {
	t.Helper()
	if s == "-" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	if b == nil {
		b = []byte{}
	}
	return b
}

// runJavaSource runs testdata/java/<name>.java with Java's source-file
// launcher and returns the lines it printed before its last, which must be
// "ok"; it fails t if the program wrote anything to stderr but SLF4J's
// notices.
func (k *Kafka) runJavaSource(t testing.TB, name string, args ...string) []string {
	t.Helper()
	src := filepath.Join(moduleDir(), "testdata", "java", name+".java")
	stdout, stderr := k.runBoth(t, src, args...)
	for _, l := range scanLines(stderr) {
		require.True(t, strings.HasPrefix(l, "SLF4J: "), "%s wrote to stderr: %s", name, l)
	}
	lines := scanLines(stdout)
	require.NotEmpty(t, lines)
	require.Equal(t, "ok", lines[len(lines)-1], "%s finished:\n%s", name, tail(stdout))
	return lines[:len(lines)-1]
}
