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
	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
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
// log.Open needs nothing the fixture lacks: with AdoptBrokerDirectory it
// adopts a directory a broker wrote (partition directories and no
// kafkalite-topics.json) with the default topic configuration, and reads meta.properties, whose node.id (1)
// the Config must match. The fixture has every file a Kafka 4 broker leaves
// after a clean shutdown, so no recovery runs.
func TestConsumerReadsFixtureAsGolden(t *testing.T) {
	ctx := context.Background()
	cfg := log.DefaultConfig()
	cfg.NodeID = 1 // as meta.properties says
	cfg.AdoptBrokerDirectory = true
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
			got := consumeAll(t, d, tc.isolation, tps, tc.ends, 4) // several polls, some ending inside a batch
			require.Equal(t, parseJSONLines(t, string(want)), got)
			for _, l := range got {
				require.False(t, l.Topic == "orders" && (l.Offset == 21 || l.Offset == 22), "control record at offset %d returned", l.Offset)
			}
		})
	}
}

// TestConsumerAgreesWithDumplog reads a directory kafkalite wrote
// (writeOwnDir: committed and aborted transactions, plain records) with
// kafkalite's consumer, for every codec, both isolation levels and both
// layouts (multi-batch: polls of 500 records span many small batches;
// single-batch: every batch holds as many records as a poll returns), and
// compares what it gets with the records produced and with what dumplog
// -json prints at the same -isolation: the same records, offset for
// offset, with their keys, values, headers and timestamps.
func TestConsumerAgreesWithDumplog(t *testing.T) {
	matrix.Run(t, matrix.Codecs|matrix.Polls, func(t *testing.T, mc matrix.Case) {
		perTxn := 10 * mc.RecordsPerBatch() // multi-batch: ten batches or more per partition and flush
		if mc.Poll == matrix.SingleBatch {
			perTxn = mc.RecordsPerBatch() // a batch per partition and flush, as large as a poll
		}
		o := writeOwnDir(t, mc, perTxn)
		tps := []consumer.TopicPartition{{Topic: ownTopic, Partition: 0}, {Topic: ownTopic, Partition: 1}}
		ends := make([]int64, len(tps))
		for i, tp := range tps {
			l, err := o.d.Partition(tp.Topic, tp.Partition)
			require.NoError(t, err)
			require.Equal(t, l.HighWatermark(), l.LastStableOffset(), "%s: no transaction left open", tp)
			ends[i] = l.HighWatermark()
		}
		matrix.Run(t, matrix.Isolations, func(t *testing.T, ic matrix.Case) {
			isolation := consumer.ReadUncommitted
			if ic.ReadCommitted {
				isolation = consumer.ReadCommitted
			}
			got := consumeAll(t, o.d, isolation, tps, ends, mc.MaxPollRecords())
			require.Equal(t, o.want(ic), got, "the consumer returns the records produced")

			code, stdout, stderr := runDumplog("-json", "-isolation", ic.Isolation(), "-topic", ownTopic, o.path)
			require.Equal(t, 0, code, stderr)
			require.Equal(t, parseJSONLines(t, stdout), got, "the consumer returns what dumplog prints")
		})
	})
}

// consumeAll reads tps from their beginnings with a consumer of isolation
// level isolation and max.poll.records maxPollRecords until each position
// reaches its end offset, which must be ends (in the order of tps), and
// returns the records as -json lines sorted by topic, partition and offset
// (dumplog's order).
func consumeAll(t *testing.T, d *log.Dir, isolation consumer.IsolationLevel, tps []consumer.TopicPartition, ends []int64, maxPollRecords int) []jsonLine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ccfg := consumer.DefaultConfig()
	ccfg.IsolationLevel = isolation
	ccfg.MaxPollRecords = maxPollRecords
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
