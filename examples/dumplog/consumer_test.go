package main

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
)

// TestConsumerReadsFixtureAsGolden adopts a copy of the Kafka-layout
// fixture with log.Open, as a broker's log directory, and reads it with
// kafkalite's consumer: Assign, then Poll until every position reaches its
// end offset. At read_committed the consumer must get exactly the records
// of the golden logdir-read-committed.json (no aborted transaction, nothing
// from the open transaction's first offset, 35, on) and stop at the last
// stable offset; at read_uncommitted exactly those of logdir.json (every
// data record, the open transaction's included, no control record) and
// reach the log end. So a directory written with transactions is read by
// consumers as Kafka presents it, and as dumplog prints it.
//
// log.Open needs nothing the fixture lacks: it adopts a directory a broker
// wrote (partition directories and no kafkalite-topics.json) with the
// default topic configuration, and reads meta.properties, whose node.id (1)
// the Config must match. The fixture has every file a Kafka 4 broker leaves
// after a clean shutdown, so no recovery runs.
func TestConsumerReadsFixtureAsGolden(t *testing.T) {
	ctx := context.Background()
	cfg := log.DefaultConfig()
	cfg.NodeID = 1 // as meta.properties says
	d, err := log.Open(ctx, copyFixture(t), cfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	tps := []consumer.TopicPartition{{Topic: "clicks", Partition: 0}, {Topic: "orders", Partition: 0}}

	for _, tc := range []struct {
		isolation consumer.IsolationLevel
		golden    string
		ends      []int64 // where each partition ends: its last stable offset or log end
	}{
		{consumer.ReadCommitted, "logdir-read-committed.json", []int64{5, 35}},
		{consumer.ReadUncommitted, "logdir.json", []int64{5, 37}},
	} {
		t.Run(tc.isolation.String(), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "golden", tc.golden))
			require.NoError(t, err)
			got := consumeAll(t, d, tc.isolation, tps, tc.ends)
			require.Equal(t, parseJSONLines(t, string(want)), got)
			for _, l := range got {
				require.False(t, l.Topic == "orders" && (l.Offset == 21 || l.Offset == 22), "control record at offset %d returned", l.Offset)
			}
		})
	}
}

// consumeAll reads tps from their beginnings with a consumer of isolation
// level isolation until each position reaches its end offset, which must
// be ends (in the order of tps), and returns the records as -json lines
// sorted by topic, partition and offset (dumplog's order).
func consumeAll(t *testing.T, d *log.Dir, isolation consumer.IsolationLevel, tps []consumer.TopicPartition, ends []int64) []jsonLine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ccfg := consumer.DefaultConfig()
	ccfg.IsolationLevel = isolation
	ccfg.MaxPollRecords = 4 // several polls, some ending inside a batch
	c, err := consumer.New(d, ccfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close(ctx)) }()
	require.NoError(t, c.Assign(tps))
	require.NoError(t, c.SeekToBeginning(tps...))
	endOffsets, err := c.EndOffsets(tps)
	require.NoError(t, err)
	for i, tp := range tps {
		require.Equal(t, ends[i], endOffsets[tp], "end offset of %s", tp)
	}

	var got []jsonLine
	for {
		caughtUp := true
		for _, tp := range tps {
			pos, err := c.Position(tp)
			require.NoError(t, err)
			require.LessOrEqual(t, pos, endOffsets[tp], "%s: past its end offset", tp)
			caughtUp = caughtUp && pos == endOffsets[tp]
		}
		if caughtUp {
			break
		}
		recs, err := c.Poll(ctx)
		require.NoError(t, err, "polling until caught up")
		for _, r := range recs {
			l := jsonLine{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp.UnixMilli(),
				Key: clone(r.Key), Value: clone(r.Value)}
			l.Headers = make([]struct {
				Key   string `json:"key"`
				Value []byte `json:"value"`
			}, len(r.Headers))
			for i, h := range r.Headers {
				l.Headers[i].Key, l.Headers[i].Value = string(h.Key), clone(h.Value)
			}
			got = append(got, l)
		}
	}
	slices.SortStableFunc(got, func(a, b jsonLine) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return got
}

// clone copies b, keeping nil (null) distinct from empty.
func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}
