package crashtest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// TestCheckerChecksShareGroup writes ten records to TopicShare, has a
// member of GroupShare acknowledge offsets 0 to 5 by shareAckFor (3 is
// rejected) and give back 6 to 9, and checks copies of the directory with
// Checkers told different stories: only the true one, and one whose last
// acknowledgement was being committed, pass.
func TestCheckerChecksShareGroup(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := log.Open(ctx, dir, DirConfig(dir))
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, TopicShare, 1, shareProps)
	require.NoError(t, err)
	_, err = d.AlterGroupConfig(ctx, GroupShare, shareGroupProps)
	require.NoError(t, err)
	writeTen(t, d, TopicShare)
	cfg := consumer.DefaultShareConfig()
	cfg.GroupID = GroupShare
	cfg.AcknowledgementMode = consumer.AcknowledgeExplicit
	sc, err := consumer.NewShareConsumer(d, cfg)
	require.NoError(t, err)
	require.NoError(t, sc.Subscribe([]string{TopicShare}))
	var recs []consumer.ShareRecord
	for len(recs) < 10 {
		got, err := sc.Poll(ctx)
		require.NoError(t, err)
		recs = append(recs, got...)
		if len(recs) < 10 {
			for _, r := range got {
				require.NoError(t, sc.Acknowledge(r, consumer.AcknowledgeRelease))
			}
		}
	}
	for _, r := range recs[:6] {
		require.NoError(t, sc.Acknowledge(r, shareAckFor(string(r.Value), r.DeliveryCount)))
	}
	res, err := sc.CommitSync(ctx)
	require.NoError(t, err)
	for _, err := range res {
		require.NoError(t, err)
	}
	require.NoError(t, sc.Close(ctx)) // gives 6 to 9 back
	require.NoError(t, d.Close())

	sack := func(offsets ...int) []string {
		var lines []string
		for _, o := range offsets {
			typ := consumer.AcknowledgeAccept
			if o == 3 {
				typ = consumer.AcknowledgeReject
			}
			lines = append(lines, fmt.Sprintf("sack-start %d %s", o, typ), fmt.Sprintf("sack %d %s 1", o, typ))
		}
		return lines
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  string // in the error; "" for none
	}{
		{"as it was", sack(0, 1, 2, 3, 4, 5), ""},
		{"the last acknowledgement being committed", append(sack(0, 1, 2, 3, 4), "sack-start 5 accept"), ""},
		{"an acknowledgement never made", sack(0, 1, 2, 3, 4, 5, 6), "offset 6 delivered again"},
		{"an acknowledgement not reported", sack(0, 1, 2, 3, 4), "offset 5 (\"g0:shr:5\"): lost"},
		{"a rejection reported accepted", append(sack(0, 1, 2, 4, 5), "sack 3 accept 1"), "acknowledged accept at delivery 1, the rule says reject"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			copied := t.TempDir()
			require.NoError(t, os.CopyFS(copied, os.DirFS(dir)))
			c := NewChecker()
			c.Generation(0, Codecs{All: record.LZ4, One: record.None, Txn: record.Gzip, Compact: record.Zstd})
			for _, l := range tc.lines {
				require.NoError(t, c.Observe(l))
			}
			err := c.Check(ctx, copied)
			if tc.want != "" {
				require.ErrorContains(t, err, tc.want)
				return
			}
			require.NoError(t, err)
			require.Equal(t, 4, c.ShareDrained, "the check is delivered 6 to 9")
			require.Equal(t, 4, c.ShareRedelivered, "given back at Close: their second delivery")
			// The next check starts where this one left the group: all
			// done, and an acknowledgement of a record below is an error.
			require.NoError(t, c.Check(ctx, copied))
			require.ErrorContains(t, c.Observe("sack 7 accept 3"), "after a check found it done")
		})
	}

	c := NewChecker()
	require.NoError(t, c.Observe("sack 2 release 1"))
	require.NoError(t, c.Observe("sack 2 accept 2"))
	require.NoError(t, c.Observe("sack 2 release 1"), "a release printed after the acceptance that followed it")
	require.ErrorContains(t, c.Observe("sack 2 accept 3"), "delivered again")
	require.ErrorContains(t, c.Observe("sack 4 renew 1"), "unknown acknowledgement")
}
