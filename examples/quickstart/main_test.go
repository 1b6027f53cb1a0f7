package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/partitioner"
	"github.com/stretchr/testify/require"
)

func TestQuickstart(t *testing.T) {
	dir := t.TempDir()
	devnull, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer devnull.Close()
	require.NoError(t, run(context.Background(), dir, 3000, 100, devnull))
	// A second run appends to the same directory.
	require.NoError(t, run(context.Background(), dir, 3000, 100, devnull))

	d, err := log.Open(context.Background(), dir, log.DefaultConfig())
	require.NoError(t, err)
	defer d.Close()
	require.True(t, d.Recovery().Clean)
	var total int64
	for p := int32(0); p < 3; p++ {
		l, err := d.Partition("quickstart", p)
		require.NoError(t, err)
		total += l.LogEndOffset()
	}
	require.Equal(t, int64(6000), total)
	for _, f := range []string{"meta.properties", "quickstart-0/00000000000000000000.log", "quickstart-2/partition.metadata"} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
	}
}

// TestVerifierCatchesBadRecords: the quickstart's check of what it reads
// fails on a record whose value belongs to another record, a record in the
// wrong partition, a record read twice, and records out of send order; and
// a run that misses a record does not complete.
func TestVerifierCatchesBadRecords(t *testing.T) {
	rec := func(p int32, off int64, seq int) consumer.Record {
		k, v := event(seq)
		return consumer.Record{Topic: topic, Partition: p, Offset: off, Key: k, Value: v}
	}
	// user-0 (seq 0, 1000, 2000) and user-1 (seq 1) by murmur2 over 3 partitions.
	p0 := partitioner.PartitionForKey([]byte("user-0"), 3)
	p1 := partitioner.PartitionForKey([]byte("user-1"), 3)
	swapped := rec(p0, 0, 0)
	_, swapped.Value = event(1) // user-1's value under user-0's key
	for _, tc := range []struct {
		name string
		recs []consumer.Record
		want string
	}{
		{"another record's value", []consumer.Record{swapped}, "want"},
		{"wrong partition", []consumer.Record{rec((p1+1)%3, 0, 1)}, "belongs in partition"},
		{"read twice", []consumer.Record{rec(p0, 0, 0), rec(p0, 1, 0)}, "read twice"},
		{"out of send order", []consumer.Record{rec(p0, 0, 1000), rec(p0, 1, 0)}, "out of send order"},
		{"offset going back", []consumer.Record{rec(p0, 5, 0), rec(p0, 3, 1000)}, "offset after"},
		{"not JSON of ours", []consumer.Record{{Topic: topic, Partition: p0, Key: []byte("user-0"), Value: []byte("{}")}}, "has no seq"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVerifier(3000, []int64{0, 0, 0})
			var err error
			for i := range tc.recs {
				if err = v.check(&tc.recs[i], 3); err != nil {
					break
				}
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
	v := newVerifier(2, []int64{0, 0, 0})
	r := rec(p0, 0, 0)
	require.NoError(t, v.check(&r, 3))
	require.ErrorContains(t, v.complete(), "record 1 of 2 was not read back")
}
