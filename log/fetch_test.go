package log

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestFetchAtEachIsolationLevel: Fetch reads up to the high watermark at
// read_uncommitted and up to the last stable offset at read_committed,
// whole batches below it, with the aborted transactions that overlap what
// it read (and none at read_uncommitted); the offsets come with the
// result, also with an out-of-range error; at the bound, or with no room,
// it returns no slice; one batch or many.
func TestFetchAtEachIsolationLevel(t *testing.T) {
	_, _, l := newTxnLog(t)
	in := access.Internal{}
	// 0-1 plain, 2-3 aborted (A), 4 its marker, 5-6 plain, 7-8 open (B).
	_, err := l.Append(producerBatch(t, 2, 10, 1_800_000_000_000, record.None))
	require.NoError(t, err)
	require.NoError(t, l.VerifyTransaction(in, 7, 0))
	_, err = l.Append(idemBatch(t, 7, 0, 0, 2, true, "a"))
	require.NoError(t, err)
	_, err = l.AppendTxnMarker(in, 7, 0, record.EndTxnMarker{Type: record.ControlAbort})
	require.NoError(t, err)
	_, err = l.Append(producerBatch(t, 2, 10, 1_800_000_000_000, record.None))
	require.NoError(t, err)
	require.NoError(t, l.VerifyTransaction(in, 8, 0))
	_, err = l.Append(idemBatch(t, 8, 0, 0, 2, true, "b"))
	require.NoError(t, err)
	require.Equal(t, int64(7), l.LastStableOffset())
	require.Equal(t, int64(9), l.HighWatermark())
	ctx := context.Background()
	abortA := []index.AbortedTxn{{ProducerID: 7, FirstOffset: 2, LastOffset: 4, LastStableOffset: 5}}

	for _, tc := range []struct {
		name     string
		p        FetchParams
		last     int64 // the slice's last offset, -1 for no slice
		aborted  []index.AbortedTxn
		maxBytes int
	}{
		{"uncommitted/all", FetchParams{Offset: 0, MaxBytes: 1 << 20, Isolation: ReadUncommitted}, 8, nil, 0},
		{"committed/all", FetchParams{Offset: 0, MaxBytes: 1 << 20, Isolation: ReadCommitted}, 6, abortA, 0},
		{"committed/one batch", FetchParams{Offset: 2, MaxBytes: 1, MinOneBatch: true, Isolation: ReadCommitted}, 3, abortA, 0},
		{"committed/past the aborted one", FetchParams{Offset: 5, MaxBytes: 1 << 20, Isolation: ReadCommitted}, 6, nil, 0},
		{"uncommitted/one batch", FetchParams{Offset: 7, MaxBytes: 1, MinOneBatch: true, Isolation: ReadUncommitted}, 8, nil, 0},
		{"committed/at the bound", FetchParams{Offset: 7, MaxBytes: 1 << 20, Isolation: ReadCommitted}, -1, nil, 0},
		{"uncommitted/at the end", FetchParams{Offset: 9, MaxBytes: 1 << 20, Isolation: ReadUncommitted}, -1, nil, 0},
		{"uncommitted/no room", FetchParams{Offset: 0, MaxBytes: 0, Isolation: ReadUncommitted}, -1, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := l.Fetch(ctx, tc.p)
			require.NoError(t, err)
			defer res.Release()
			require.Equal(t, int64(9), res.HighWatermark)
			require.Equal(t, int64(9), res.LogEndOffset)
			require.Equal(t, int64(7), res.LastStableOffset)
			require.Equal(t, int64(0), res.LogStartOffset)
			if tc.last < 0 {
				require.Nil(t, res.Slice)
				require.Nil(t, res.AbortedTransactions)
				return
			}
			require.NotNil(t, res.Slice)
			require.Equal(t, tc.last, res.Slice.LastOffset)
			require.Equal(t, tc.aborted, res.AbortedTransactions)
			// The slice holds whole batches up to its last offset.
			b, err := res.Slice.Bytes(nil)
			require.NoError(t, err)
			var last int64 = -1
			for pos := 0; pos < len(b); {
				h, err := record.ParseHeader(b[pos:])
				require.NoError(t, err)
				last, pos = h.LastOffset(), pos+h.Size()
			}
			require.Equal(t, tc.last, last)
		})
	}

	res, err := l.Fetch(ctx, FetchParams{Offset: 10, MaxBytes: 1 << 20, Isolation: ReadCommitted})
	require.ErrorIs(t, err, ErrOffsetOutOfRange)
	require.Nil(t, res.Slice)
	require.Equal(t, int64(9), res.HighWatermark, "the offsets come with the error")
	require.Equal(t, int64(7), res.LastStableOffset)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = l.Fetch(cancelled, FetchParams{Offset: 0, MaxBytes: 1 << 20})
	require.ErrorIs(t, err, context.Canceled, "a done ctx returns at once")
}

// ctxKey marks the contexts a test passes, to find them in a store.
type ctxKey struct{}

// gateStore is a remote store that records the ctxKey value of the
// context of each fetch and, while block is set, holds each fetch until
// its context ends (or the test gives up), telling started when one
// begins.
type gateStore struct {
	remote.StorageManager
	giveUp <-chan struct{}

	mu      sync.Mutex
	seen    []any
	block   bool
	started chan struct{}
}

func newGateStore(t *testing.T, s remote.StorageManager) *gateStore {
	giveUp := make(chan struct{})
	// Only a guard, should the context never end: the test then fails on
	// the error, rather than hanging.
	timer := time.AfterFunc(time.Minute, func() { close(giveUp) })
	t.Cleanup(func() { timer.Stop() })
	return &gateStore{StorageManager: s, giveUp: giveUp, started: make(chan struct{}, 16)}
}

var errGaveUp = errors.New("the fetch's context never ended")

func (s *gateStore) gate(ctx context.Context) error {
	s.mu.Lock()
	s.seen = append(s.seen, ctx.Value(ctxKey{}))
	block := s.block
	s.mu.Unlock()
	if !block {
		return nil
	}
	s.started <- struct{}{}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-s.giveUp:
		return errGaveUp
	}
}

func (s *gateStore) setBlock(b bool) {
	s.mu.Lock()
	s.block = b
	s.mu.Unlock()
}

func (s *gateStore) seenValues() []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]any(nil), s.seen...)
}

func (s *gateStore) FetchLogSegment(ctx context.Context, m remote.SegmentMetadata, start, end int64) (io.ReadCloser, error) {
	if err := s.gate(ctx); err != nil {
		return nil, err
	}
	return s.StorageManager.FetchLogSegment(ctx, m, start, end)
}

func (s *gateStore) FetchIndex(ctx context.Context, m remote.SegmentMetadata, t remote.IndexType) (io.ReadCloser, error) {
	if err := s.gate(ctx); err != nil {
		return nil, err
	}
	return s.StorageManager.FetchIndex(ctx, m, t)
}

// TestFetchCarriesItsContextToRemoteStorage: the ctx of a read reaches
// the remote store's fetches of a tiered partition's copies (the .log and
// indexes of a copy, and the transaction indexes of a read_committed
// read), at each isolation level, through Fetch and RecordReader.Read; a
// ctx that ends while the store fetches makes the read return its error,
// and a read after it fetches the copy whole.
func TestFetchCarriesItsContextToRemoteStorage(t *testing.T) {
	e := tieredEnv(t)
	store := newGateStore(t, remote.NewFileStore(e.mem, "/remote"))
	e.cfg.RemoteStorage = store
	c := newTierReadCase(t, e, 24)
	l := c.l
	copies, err := c.d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(copies), 6)
	before := len(store.seenValues())

	ctx := context.WithValue(context.Background(), ctxKey{}, "the reader's")
	for _, iso := range []IsolationLevel{ReadUncommitted, ReadCommitted} {
		res, err := l.Fetch(ctx, FetchParams{Offset: copies[int(iso)].StartOffset, MaxBytes: 1000, MinOneBatch: true, Isolation: iso})
		require.NoError(t, err)
		require.NotNil(t, res.Slice)
		res.Release()
	}
	var rr RecordReader
	_, err = rr.Read(ctx, l, copies[2].StartOffset, 1000, ReadCommitted, func(*record.Record, *record.BatchHeader) error { return nil })
	require.NoError(t, err)
	seen := store.seenValues()[before:]
	require.NotEmpty(t, seen, "the copies were fetched")
	for _, v := range seen {
		require.Equal(t, "the reader's", v, "every fetch got the reader's ctx")
	}

	// A ctx that ends while the store fetches.
	store.setBlock(true)
	for i, read := range []func(context.Context, int64) error{
		func(ctx context.Context, off int64) error {
			res, err := l.Fetch(ctx, FetchParams{Offset: off, MaxBytes: 1000, MinOneBatch: true})
			res.Release()
			return err
		},
		func(ctx context.Context, off int64) error {
			_, err := rr.Read(ctx, l, off, 1000, ReadCommitted, func(*record.Record, *record.BatchHeader) error { return nil })
			return err
		},
	} {
		off := copies[3+i].StartOffset
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- read(ctx, off) }()
		<-store.started
		cancel()
		require.ErrorIs(t, <-done, context.Canceled, "read %d", i)

		store.setBlock(false)
		res, err := l.Fetch(context.Background(), FetchParams{Offset: off, MaxBytes: 1000, MinOneBatch: true})
		require.NoError(t, err, "the cancelled fetch left nothing behind")
		b, err := res.Slice.Bytes(nil)
		res.Release()
		require.NoError(t, err)
		require.Equal(t, c.slices[off], b)
		store.setBlock(true)
	}
}
