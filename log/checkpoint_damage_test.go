package log

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestLogStartOffsetPastTheEndIsIgnored: a log-start-offset-checkpoint
// entry beyond the partition's log end cannot be true (the log start never
// passes the log end); before, it was taken and hid every record. It is
// corruption: the entry is ignored with a warning, counted in the
// recovery stats, and the log starts at its first segment.
func TestLogStartOffsetPastTheEndIsIgnored(t *testing.T) {
	for _, sd := range shutdowns {
		t.Run(sd.name, func(t *testing.T) {
			matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, c matrix.Case) {
				f := newFixture(t, c, nil)
				end := int64(len(f.recs))
				require.NoError(t, checkpoint.WriteOffsets(f.fsys, filepath.Join(f.path, checkpoint.LogStartOffsetFile),
					map[checkpoint.TopicPartition]int64{{Topic: "t", Partition: 0}: end + 1000}))

				d, l := f.reopen(t, sd.clean)
				require.Equal(t, f.bases[0], l.LogStartOffset())
				require.Equal(t, end, l.LogEndOffset())
				f.requireRecords(t, l, 0, end)
				require.Equal(t, 1, d.Recovery().CorruptLogStartOffsets)
				require.Equal(t, 1, d.Stats().Recovery.CorruptLogStartOffsets)
				require.Equal(t, 1, f.logs.count("log-start-offset-checkpoint"), "one warning")
			})
		})
	}
}

// TestLogStartOffsetInRangeIsKept: a valid entry still moves the log start
// (the control for the test above).
func TestLogStartOffsetInRangeIsKept(t *testing.T) {
	matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, c matrix.Case) {
		f := newFixture(t, c, nil)
		start := f.bases[1] + 3
		require.NoError(t, checkpoint.WriteOffsets(f.fsys, filepath.Join(f.path, checkpoint.LogStartOffsetFile),
			map[checkpoint.TopicPartition]int64{{Topic: "t", Partition: 0}: start}))
		d, l := f.reopen(t, true)
		require.Equal(t, start, l.LogStartOffset())
		require.Zero(t, d.Recovery().CorruptLogStartOffsets)
	})
}

// TestGarbageMetaPropertiesIsCorrupt: a meta.properties that is not one
// (no key Kafka's file has) is reported as a corrupt file naming its path,
// not as a directory of another node.
func TestGarbageMetaPropertiesIsCorrupt(t *testing.T) {
	matrix.Run(t, matrix.FSes, func(t *testing.T, c matrix.Case) {
		fsys, path := c.Dir(t)
		cfg := DefaultConfig()
		cfg.FS = fsys
		d, err := Open(context.Background(), path, cfg)
		require.NoError(t, err)
		require.NoError(t, d.Close())
		name := filepath.Join(path, checkpoint.MetaPropertiesFile)
		require.NoError(t, fsys.Remove(name))
		f, err := fsys.Create(name)
		require.NoError(t, err)
		_, err = f.Write(bytes.Repeat([]byte("\x00\xff garbage \x13\x37\n"), 20))
		require.NoError(t, err)
		require.NoError(t, f.Close())

		_, err = Open(context.Background(), path, cfg)
		require.ErrorIs(t, err, ErrCorruptMetaProperties)
		require.NotErrorIs(t, err, ErrInvalidConfig)
		require.ErrorContains(t, err, name)
	})
}

// TestCorruptBatchMatchesErrCorruptNotErrInvalidRecord pins the split the
// docs of ErrInvalidRecord describe, which is Kafka's: bytes that are not a
// valid batch (a bad CRC) are CORRUPT_MESSAGE and match record.ErrCorrupt;
// a well-formed batch the log refuses (a non-zero base offset from a
// client) is INVALID_RECORD and matches ErrInvalidRecord. Neither matches
// the other.
func TestCorruptBatchMatchesErrCorruptNotErrInvalidRecord(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		e := newEnv(t)
		d := e.open(t)
		defer d.Close()
		createTopic(t, d, "t", 1, nil)
		l := partition(t, d, "t", 0)

		corrupt := producerBatch(t, 3, 20, e.clock.Now().UnixMilli(), codec)
		corrupt[len(corrupt)-1] ^= 0x01
		_, err := l.Append(corrupt)
		require.ErrorIs(t, err, record.ErrCorrupt)
		require.ErrorIs(t, err, record.ErrCRC)
		require.NotErrorIs(t, err, ErrInvalidRecord)

		invalid := producerBatch(t, 3, 20, e.clock.Now().UnixMilli(), codec)
		require.NoError(t, record.SetBaseOffset(invalid, 5))
		_, err = l.Append(invalid)
		require.ErrorIs(t, err, ErrInvalidRecord)
		require.NotErrorIs(t, err, record.ErrCorrupt)
	})
}
