// Package remotetest checks that a remote.StorageManager keeps the
// contracts the log relies on: a store's tests call [StorageManager] with
// a constructor of fresh stores.
package remotetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/stretchr/testify/require"
)

// Segment is a segment's metadata and files, for tests.
type Segment struct {
	Meta                                              remote.SegmentMetadata
	Log, Index, TimeIndex, TxnIndex, Snapshot, Epochs []byte
}

// NewSegment returns a segment of logBytes random bytes (indexes of a few
// bytes each), with a transaction index when txn is set.
func NewSegment(topic string, partition int32, start int64, logBytes int, txn bool) Segment {
	s := Segment{Log: randomBytes(logBytes), Index: randomBytes(80), TimeIndex: randomBytes(120),
		Snapshot: randomBytes(50), Epochs: []byte("0\n1\n0 " + fmt.Sprint(start) + "\n")}
	if txn {
		s.TxnIndex = randomBytes(68)
	}
	var topicID, id remote.UUID
	copy(topicID[:], randomBytes(16))
	copy(id[:], randomBytes(16))
	s.Meta = remote.SegmentMetadata{ID: remote.SegmentID{Topic: topic, TopicID: topicID, Partition: partition, ID: id},
		StartOffset: start, EndOffset: start + 99, MaxTimestamp: 1_700_000_000_000, SizeInBytes: int32(logBytes),
		LeaderEpochs: []remote.EpochStart{{LeaderEpoch: 0, StartOffset: start}}, TxnIndexEmpty: !txn,
		State: remote.CopySegmentStarted}
	return s
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// Data returns the segment's files as SegmentData.
func (s Segment) Data() remote.SegmentData {
	src := func(b []byte) remote.Source { return remote.Source{R: bytes.NewReader(b), Size: int64(len(b))} }
	d := remote.SegmentData{Log: src(s.Log), OffsetIndex: src(s.Index), TimeIndex: src(s.TimeIndex),
		ProducerSnapshot: src(s.Snapshot), LeaderEpochIndex: s.Epochs}
	if s.TxnIndex != nil {
		d.TransactionIndex = src(s.TxnIndex)
	}
	return d
}

// ReadAll reads r to its end and closes it.
func ReadAll(r io.ReadCloser, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// RequireStored checks that store holds s: the whole .log, a range of it,
// and each index.
func RequireStored(t testing.TB, store remote.StorageManager, s Segment) {
	t.Helper()
	ctx := context.Background()
	got, err := ReadAll(store.FetchLogSegment(ctx, s.Meta, 0, -1))
	require.NoError(t, err)
	require.Equal(t, s.Log, got)
	if len(s.Log) > 10 {
		got, err = ReadAll(store.FetchLogSegment(ctx, s.Meta, 3, int64(len(s.Log))-2))
		require.NoError(t, err)
		require.Equal(t, s.Log[3:len(s.Log)-2], got)
	}
	for _, c := range []struct {
		t    remote.IndexType
		want []byte
	}{{remote.OffsetIndex, s.Index}, {remote.TimeIndex, s.TimeIndex}, {remote.ProducerSnapshot, s.Snapshot},
		{remote.LeaderEpochIndex, s.Epochs}, {remote.TransactionIndex, s.TxnIndex}} {
		got, err := ReadAll(store.FetchIndex(ctx, s.Meta, c.t))
		if c.want == nil {
			require.ErrorIs(t, err, remote.ErrNotFound, "%s", c.t)
			continue
		}
		require.NoError(t, err, "%s", c.t)
		require.Equal(t, c.want, got, "%s", c.t)
	}
}

// RequireGone checks that store holds nothing readable of s.
func RequireGone(t testing.TB, store remote.StorageManager, s Segment) {
	t.Helper()
	ctx := context.Background()
	_, err := ReadAll(store.FetchLogSegment(ctx, s.Meta, 0, -1))
	require.ErrorIs(t, err, remote.ErrNotFound)
	_, err = ReadAll(store.FetchIndex(ctx, s.Meta, remote.OffsetIndex))
	require.ErrorIs(t, err, remote.ErrNotFound)
}

// failingReader fails every read after the first n bytes.
type failingReader struct {
	r io.ReaderAt
	n int64
}

var errSource = errors.New("remotetest: the source failed")

func (f failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.n {
		return 0, errSource
	}
	return f.r.ReadAt(p, off)
}

// StorageManager runs the contract's cases against stores newStore makes
// (each case gets a new one, closed at its end).
func StorageManager(t *testing.T, newStore func(t *testing.T) remote.StorageManager) {
	ctx := context.Background()
	t.Run("copy, fetch, delete", func(t *testing.T) {
		store := newStore(t)
		defer store.Close()
		a := NewSegment("orders", 0, 0, 3<<20+17, true) // more than one copy chunk
		b := NewSegment("orders", 0, 100, 1000, false)
		for _, s := range []Segment{a, b} {
			_, err := store.CopyLogSegmentData(ctx, s.Meta, s.Data())
			require.NoError(t, err)
		}
		RequireStored(t, store, a)
		RequireStored(t, store, b)
		require.NoError(t, store.DeleteLogSegmentData(ctx, a.Meta))
		RequireGone(t, store, a)
		RequireStored(t, store, b)
		require.NoError(t, store.DeleteLogSegmentData(ctx, a.Meta), "deleting twice")
	})
	t.Run("copy again replaces", func(t *testing.T) {
		store := newStore(t)
		defer store.Close()
		s := NewSegment("orders", 1, 0, 5000, true)
		_, err := store.CopyLogSegmentData(ctx, s.Meta, s.Data())
		require.NoError(t, err)
		s2 := s
		s2.Log, s2.TxnIndex = randomBytes(4000), nil
		_, err = store.CopyLogSegmentData(ctx, s2.Meta, s2.Data())
		require.NoError(t, err)
		RequireStored(t, store, s2)
	})
	t.Run("failed copy is not readable and is deleted", func(t *testing.T) {
		store := newStore(t)
		defer store.Close()
		s := NewSegment("orders", 2, 0, 2<<20, false)
		data := s.Data()
		data.Log.R = failingReader{r: data.Log.R, n: 1 << 20}
		_, err := store.CopyLogSegmentData(ctx, s.Meta, data)
		require.Error(t, err)
		RequireGone(t, store, s)
		require.NoError(t, store.DeleteLogSegmentData(ctx, s.Meta))
		RequireGone(t, store, s)
		_, err = store.CopyLogSegmentData(ctx, s.Meta, s.Data())
		require.NoError(t, err, "a retry of the copy")
		RequireStored(t, store, s)
	})
	t.Run("canceled copy", func(t *testing.T) {
		store := newStore(t)
		defer store.Close()
		s := NewSegment("orders", 3, 0, 3<<20, false)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := store.CopyLogSegmentData(cctx, s.Meta, s.Data())
		require.ErrorIs(t, err, context.Canceled)
		RequireGone(t, store, s)
	})
	t.Run("missing", func(t *testing.T) {
		store := newStore(t)
		defer store.Close()
		RequireGone(t, store, NewSegment("orders", 4, 0, 10, false))
	})
}

// Files returns every file under dir on fsys, at any depth (none if dir
// does not exist): what a FileStore holds.
func Files(fsys vfs.FS, dir string) []string {
	var out []string
	infos, err := fsys.List(dir)
	if err != nil {
		return nil
	}
	for _, fi := range infos {
		p := filepath.Join(dir, fi.Name)
		if fi.IsDir {
			out = append(out, Files(fsys, p)...)
		} else {
			out = append(out, p)
		}
	}
	return out
}
