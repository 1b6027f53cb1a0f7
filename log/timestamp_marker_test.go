package log

import (
	"fmt"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestOffsetForTimestampFindsMarkers: a transaction marker whose timestamp
// is the only one at or after the target answers OffsetForTimestamp with
// its offset and timestamp, as Kafka's ListOffsets does (it searches every
// batch, control batches too), and MaxTimestamp names the marker when its
// timestamp is the largest; the records after the marker are earlier.
// Local segments of a plain and of a tiered topic, and copies in remote
// storage (the marker's segment copied and deleted locally), on the
// memory and the operating system's filesystems.
func TestOffsetForTimestampFindsMarkers(t *testing.T) {
	for _, osfs := range []bool{false, true} {
		for _, where := range []string{"plain", "tiered local", "tiered remote"} {
			t.Run(fmt.Sprintf("%s/os=%v", where, osfs), func(t *testing.T) {
				e := tieredEnvOn(t, osfs)
				d := e.open(t)
				defer d.Close()
				props := map[string]string{"segment.bytes": "2000"}
				if where != "plain" {
					props["remote.storage.enable"] = "true"
					props["local.retention.bytes"] = "0"
				}
				createTopic(t, d, "t", 1, props)
				l := partition(t, d, "t", 0)
				now := e.clock.Now()
				old := now.Add(-time.Hour).UnixMilli()
				for range 4 {
					_, err := l.Append(producerBatch(t, 5, 100, old, record.None))
					require.NoError(t, err)
				}
				const pid = 7
				appendTxn(t, l, withTimestamps(t, txnBatch(t, pid, 0, 0, 3), old))
				res, err := l.AppendTxnMarker(access.Internal{}, pid, 0, record.EndTxnMarker{Type: record.ControlCommit})
				require.NoError(t, err)
				marker := res.BaseOffset
				// Earlier records after the marker: in its segment, and in
				// later ones (so that its segment is sealed and copied).
				for range 8 {
					_, err := l.Append(producerBatch(t, 5, 100, old+1, record.None))
					require.NoError(t, err)
				}
				if where == "tiered remote" {
					copiedAndTrimmed(t, d, l)
					require.Less(t, marker, l.LocalLogStartOffset(), "the marker is only in a copy")
				}
				want := OffsetAndTimestamp{Offset: marker, Timestamp: now.UnixMilli()}
				for _, target := range []int64{old + 2, now.Add(-time.Minute).UnixMilli(), now.UnixMilli()} {
					got, ok, err := l.OffsetForTimestamp(target)
					require.NoError(t, err)
					require.True(t, ok, "target %d", target)
					require.Equal(t, want, got, "target %d", target)
				}
				_, ok, err := l.OffsetForTimestamp(now.UnixMilli() + 1)
				require.NoError(t, err)
				require.False(t, ok)
				got, ok, err := l.OffsetForTimestamp(old + 1)
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, want, got, "the first in offset order at or after the target: the marker, not the later records")
				got, ok, err = l.OffsetForTimestamp(old)
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, OffsetAndTimestamp{Offset: 0, Timestamp: old}, got)
				if where != "tiered remote" {
					// Kafka's MAX_TIMESTAMP looks at the local segments.
					got, ok, err = l.OffsetForTimestamp(MaxTimestamp)
					require.NoError(t, err)
					require.True(t, ok)
					require.Equal(t, want, got)
				}
			})
		}
	}
}
