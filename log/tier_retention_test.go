package log

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// requireReadable checks that every offset from the log start offset on
// reads as want (the records appended, by offset) says.
func requireReadable(t *testing.T, l *Log, want []record.Record) {
	t.Helper()
	start := l.LogStartOffset()
	got := records(t, l, start)
	require.NotEmpty(t, got)
	require.Equal(t, start, got[0].Offset)
	require.Equal(t, want[start:], got)
}

// TestTierTotalRetentionKeepsWhatIsNotCopied: total retention
// (retention.bytes, retention.ms) never deletes a tiered topic's local
// segments that are not copied yet, as Kafka's deletion eligibility keeps
// them (a local segment of a remote-storage topic goes only once its end
// is at or below the highest copied offset, or the log start offset has
// passed it); once copied, the copies past the total retention are
// expired, the log start offset moves past them, and the local segments
// below it and the copied ones beyond local retention go. Every offset
// from the log start offset reads, throughout.
func TestTierTotalRetentionKeepsWhatIsNotCopied(t *testing.T) {
	for _, osfs := range []bool{false, true} {
		for _, by := range []string{"bytes", "ms"} {
			t.Run(fmt.Sprintf("%s/os=%v", by, osfs), func(t *testing.T) {
				e := tieredEnvOn(t, osfs)
				d := e.open(t)
				defer d.Close()
				props := map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000"}
				if by == "bytes" {
					props["retention.bytes"] = "4000"
				} else {
					props["retention.ms"] = "3600000"
				}
				createTopic(t, d, "tiered", 1, props)
				l := partition(t, d, "tiered", 0)
				fill(t, l, 20)
				want := records(t, l, 0)
				segs := len(l.local.segs())
				require.Greater(t, segs, 4)
				if by == "ms" {
					e.clock.Add(2 * time.Hour)
				}

				res, err := l.EnforceRetention()
				require.NoError(t, err)
				require.Zero(t, res.SegmentsDeleted, "nothing is copied: nothing goes")
				require.Zero(t, l.LogStartOffset())
				require.Len(t, l.local.segs(), segs)
				requireReadable(t, l, want)

				_, err = d.TierNow(context.Background())
				require.NoError(t, err)
				res, err = l.EnforceRetention()
				require.NoError(t, err)
				require.Positive(t, res.SegmentsDeleted)
				start := l.LogStartOffset()
				require.Positive(t, start, "the expired copies are passed")
				requireReadable(t, l, want)
				st := l.Stats()
				if by == "ms" {
					// Every copy is past retention.ms, and so every local
					// segment but the active one (local retention is the
					// topic's), which is rolled to be copied: the log starts
					// at it.
					segs := l.local.segs()
					require.Len(t, segs, 2)
					require.Equal(t, segs[0].BaseOffset(), start)
					require.Zero(t, segs[1].Size())
				} else {
					// Within retention.bytes but for less than a copy, the
					// copies and the local segments not copied counted once;
					// locally, within local.retention.bytes (the topic's).
					copies, err := d.RemoteSegments("tiered", 0)
					require.NoError(t, err)
					var remoteBytes int64
					for _, m := range copies {
						remoteBytes += int64(m.SizeInBytes)
					}
					active := l.local.segs()[len(l.local.segs())-1].Size()
					require.Less(t, active+remoteBytes, int64(4000+2000))
					require.Less(t, st.Size, int64(4000+2000))
				}
				passed, err := d.TierNow(context.Background())
				require.NoError(t, err)
				require.Positive(t, passed.Deleted, "the expired copies are deleted from the store")
				requireReadable(t, l, want)
			})
		}
	}
}

// TestTierTotalRetentionCountsLocalOnce: the size total retention compares
// with retention.bytes is the copies' plus the local segments not copied
// (Kafka's onlyLocalLogSegmentsSize), so copied segments still on the local
// disk are not counted twice and nothing expires early; and a copy whose
// largest timestamp is exactly retention.ms old expires (Kafka's
// maxTimestampMs <= now - retention.ms).
func TestTierTotalRetentionCountsLocalOnce(t *testing.T) {
	e := tieredEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "tiered", 1, map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000",
		"retention.bytes": "12000", "local.retention.bytes": "11000", "retention.ms": "3600000"})
	l := partition(t, d, "tiered", 0)
	fill(t, l, 15) // about 8 KB: 5 copies and the active segment
	_, err := d.TierNow(context.Background())
	require.NoError(t, err)
	copies, err := d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	var remoteBytes int64
	for _, m := range copies {
		remoteBytes += int64(m.SizeInBytes)
	}
	st := l.Stats()
	require.Greater(t, st.Size+remoteBytes, int64(12000), "counted twice, it would be over")
	res, err := l.EnforceRetention()
	require.NoError(t, err)
	require.Zero(t, res.SegmentsDeleted)
	require.Zero(t, l.LogStartOffset(), "within retention.bytes")

	// Exactly retention.ms after the oldest copy's largest timestamp.
	e.clock.Add(time.Hour)
	_, err = l.EnforceRetention()
	require.NoError(t, err)
	require.Equal(t, copies[len(copies)-1].EndOffset+1, l.LogStartOffset(), "every copy is exactly an hour old")
}

// TestTierLocalRetentionRollsTheActiveSegment: a tiered partition that
// stopped receiving records has its active segment rolled by retention
// once the walk of Kafka's deletableSegments reaches it beyond local
// retention: older than local.retention.ms, or (local.retention.bytes)
// with the local size less what goes before it still at least the bound
// plus the segment, which with the active segment alone only 0 allows.
// It is then copied by the next pass and deleted locally by the next
// retention. An empty active segment, or one within local retention, is
// not rolled, nor is a topic that is not tiered.
func TestTierLocalRetentionRollsTheActiveSegment(t *testing.T) {
	for _, osfs := range []bool{false, true} {
		for _, tc := range []struct {
			name, prop, value string
			pass              func(*env, *Log) // what takes the active segment beyond local retention
		}{
			{"ms", "local.retention.ms", "3600000", func(e *env, _ *Log) { e.clock.Add(2 * time.Hour) }},
			{"bytes", "local.retention.bytes", "0", nil},
		} {
			t.Run(fmt.Sprintf("%s/os=%v", tc.name, osfs), func(t *testing.T) {
				e := tieredEnvOn(t, osfs)
				d := e.open(t)
				defer d.Close()
				createTopic(t, d, "tiered", 1, map[string]string{"remote.storage.enable": "true", tc.prop: tc.value})
				l := partition(t, d, "tiered", 0)
				_, err := l.EnforceRetention()
				require.NoError(t, err)
				require.Len(t, l.local.segs(), 1, "an empty active segment is not rolled")
				fill(t, l, 3) // about 1.8 KB, in the active segment
				want := records(t, l, 0)
				if tc.pass != nil {
					_, err = l.EnforceRetention()
					require.NoError(t, err)
					require.Len(t, l.local.segs(), 1, "within local retention: not rolled")
					tc.pass(e, l)
				}

				res, err := l.EnforceRetention()
				require.NoError(t, err)
				require.Zero(t, res.SegmentsDeleted)
				segs := l.local.segs()
				require.Len(t, segs, 2, "rolled")
				require.Equal(t, l.LogEndOffset(), segs[1].BaseOffset())
				require.Zero(t, segs[1].Size())
				_, err = l.EnforceRetention()
				require.NoError(t, err)
				require.Len(t, l.local.segs(), 2, "the rolled segment stays until copied; the empty one is not rolled")

				tiered, err := d.TierNow(context.Background())
				require.NoError(t, err)
				require.Equal(t, 1, tiered.Copied)
				res, err = l.EnforceRetention()
				require.NoError(t, err)
				require.Equal(t, 1, res.SegmentsDeleted)
				require.Equal(t, l.LogEndOffset(), l.LocalLogStartOffset(), "only the empty active segment is local")
				require.Zero(t, l.LogStartOffset())
				require.Equal(t, want, records(t, l, 0), "read from the copy")
			})
		}
	}
	t.Run("bytes over 0, the active segment alone", func(t *testing.T) {
		e := tieredEnv(t)
		d := e.open(t)
		defer d.Close()
		createTopic(t, d, "tiered", 1, map[string]string{"remote.storage.enable": "true", "local.retention.bytes": "1000"})
		l := partition(t, d, "tiered", 0)
		fill(t, l, 3)
		_, err := l.EnforceRetention()
		require.NoError(t, err)
		require.Len(t, l.local.segs(), 1)
	})
	t.Run("not tiered", func(t *testing.T) {
		e := tieredEnv(t)
		d := e.open(t)
		defer d.Close()
		createTopic(t, d, "plain", 1, map[string]string{"retention.ms": "86400000"})
		l := partition(t, d, "plain", 0)
		fill(t, l, 1)
		e.clock.Add(2 * time.Hour)
		_, err := l.EnforceRetention()
		require.NoError(t, err)
		require.Len(t, l.local.segs(), 1)
	})
}

// TestTierLocalRetentionWithoutDeletePolicy: a tiered topic whose
// cleanup.policy is empty (neither delete nor compact) still has its
// copied local segments deleted by local retention, as Kafka's
// deleteOldSegments does for remote-storage topics; its copies are not
// expired.
func TestTierLocalRetentionWithoutDeletePolicy(t *testing.T) {
	e := tieredEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "tiered", 1, map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000",
		"cleanup.policy": "", "local.retention.bytes": "0", "retention.bytes": "1000"})
	l := partition(t, d, "tiered", 0)
	fill(t, l, 12)
	want := records(t, l, 0)
	_, err := d.TierNow(context.Background())
	require.NoError(t, err)
	res, err := l.EnforceRetention()
	require.NoError(t, err)
	require.Positive(t, res.SegmentsDeleted)
	require.Greater(t, l.LocalLogStartOffset(), int64(0))
	require.Zero(t, l.LogStartOffset(), "no total retention without delete")
	require.Equal(t, want, records(t, l, 0))
}
