package consumer

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/stretchr/testify/require"
)

// fetchCounter counts a remote store's fetches by kind: ".log" and each
// index type's name.
type fetchCounter struct {
	remote.StorageManager
	mu sync.Mutex
	n  map[string]int
}

func (s *fetchCounter) FetchLogSegment(ctx context.Context, m remote.SegmentMetadata, start, end int64) (io.ReadCloser, error) {
	s.count(".log")
	return s.StorageManager.FetchLogSegment(ctx, m, start, end)
}

func (s *fetchCounter) FetchIndex(ctx context.Context, m remote.SegmentMetadata, t remote.IndexType) (io.ReadCloser, error) {
	s.count(t.String())
	return s.StorageManager.FetchIndex(ctx, m, t)
}

func (s *fetchCounter) count(kind string) {
	s.mu.Lock()
	s.n[kind]++
	s.mu.Unlock()
}

func (s *fetchCounter) get(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[kind]
}

// tieredTxnEnv opens a directory on a memory filesystem with tiered
// storage in a FileStore on it, which wrap wraps, and mod changes the
// directory's configuration (nil: none); it returns the env and a
// transaction writer on partition 0 of the tiered topic "t" (segments of
// 1,000 bytes, deleted locally once copied).
func tieredTxnEnv(t *testing.T, wrap func(remote.StorageManager) remote.StorageManager, mod func(*log.Config)) (*env, *txnWriter) {
	t.Helper()
	mem := vfs.NewMem()
	e := &env{t: t, mem: mem, path: "/data"}
	e.cfg = log.DefaultConfig()
	e.cfg.FS = mem
	e.cfg.RemoteLogStorageSystemEnable = true
	e.cfg.RemoteStorage = wrap(remote.NewFileStore(mem, "/remote"))
	e.cfg.RemoteLogManagerTaskInterval = time.Hour
	if mod != nil {
		mod(&e.cfg)
	}
	e.open()
	t.Cleanup(func() { _ = e.dir.Close() })
	_, err := e.dir.CreateTopic(context.Background(), "t", 1, map[string]string{"remote.storage.enable": "true",
		"segment.bytes": "1000", "local.retention.bytes": "0"})
	require.NoError(t, err)
	return e, newTxnWriter(t, e.dir, "t", 0)
}

// TestReadCommittedTieredFetches: a read_committed consumer reading a
// tiered partition from its start, with a cache of about one copy, gets
// what it got before the copies left the local disk, and asks the store
// for each copy's .log once and for few transaction indexes: a fetch's
// aborted transactions are collected up to the end of what it read (as
// Kafka's fetch does), not up to the last stable offset, which walked the
// transaction index of every later copy at every fetch.
func TestReadCommittedTieredFetches(t *testing.T) {
	var store *fetchCounter
	e, w := tieredTxnEnv(t, func(s remote.StorageManager) remote.StorageManager {
		store = &fetchCounter{StorageManager: s, n: map[string]int{}}
		return store
	}, func(c *log.Config) { c.OffsetsTopicNumPartitions, c.RemoteLogIndexFileCacheTotalSize = 1, 1500 })
	pad := fmt.Sprintf("%0200d", 0)
	for i := range 60 {
		w.run(fmt.Sprintf("A: a%d-%s", i, pad), fmt.Sprintf("p: p%d-%s", i, pad))
		if i%3 == 2 {
			w.run(fmt.Sprintf("B: b%d-%s", i, pad))
			w.end("B", i%2 == 0)
		}
		w.end("A", i%4 != 0)
	}
	w.run("p: last")
	read := func() []string {
		c := e.consumer(func(c *Config) { readCommitted(c); c.MaxPartitionFetchBytes = 600 })
		require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
		defer c.Close(context.Background())
		return valuesOf(drain(t, c))
	}
	want := read()

	_, err := e.dir.TierNow(context.Background())
	require.NoError(t, err)
	_, err = w.l.EnforceRetention()
	require.NoError(t, err)
	copies, err := e.dir.RemoteSegments("t", 0)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(copies), 30)
	require.Greater(t, w.l.LocalLogStartOffset(), copies[len(copies)-1].EndOffset, "the copies are only in the store")

	got := read()
	require.Equal(t, want, got)
	logs, txns := store.get(".log"), store.get(remote.TransactionIndex.String())
	t.Logf("%d copies: %d .log fetches, %d transaction index fetches", len(copies), logs, txns)
	require.Equal(t, len(copies), logs, "each copy's .log once")
	require.LessOrEqual(t, txns, 3*len(copies), "transaction indexes")
}

// holdingStore holds each .log fetch of a remote store, while hold is
// set, until the fetch's context ends, telling held when one begins.
type holdingStore struct {
	remote.StorageManager
	held chan struct{}
	mu   sync.Mutex
	hold bool
}

func (s *holdingStore) FetchLogSegment(ctx context.Context, m remote.SegmentMetadata, start, end int64) (io.ReadCloser, error) {
	s.mu.Lock()
	hold := s.hold
	s.mu.Unlock()
	if hold {
		s.held <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.StorageManager.FetchLogSegment(ctx, m, start, end)
}

func (s *holdingStore) setHold(h bool) {
	s.mu.Lock()
	s.hold = h
	s.mu.Unlock()
}

// TestPollCarriesItsContextToRemoteStorage: at each isolation level, a
// Poll whose ctx ends while the store fetches a copy of a tiered
// partition returns the ctx's error (the fetch ran under the Poll's ctx),
// and the next Poll reads the records.
func TestPollCarriesItsContextToRemoteStorage(t *testing.T) {
	for _, level := range []IsolationLevel{ReadUncommitted, ReadCommitted} {
		t.Run(level.String(), func(t *testing.T) {
			var store *holdingStore
			e, w := tieredTxnEnv(t, func(s remote.StorageManager) remote.StorageManager {
				store = &holdingStore{StorageManager: s, held: make(chan struct{}, 1)}
				return store
			}, nil)
			for i := range 12 {
				w.run(fmt.Sprintf("A: a%d-%0200d", i, 0))
				w.end("A", true)
			}
			_, err := e.dir.TierNow(context.Background())
			require.NoError(t, err)
			_, err = w.l.EnforceRetention()
			require.NoError(t, err)
			require.Positive(t, w.l.LocalLogStartOffset(), "the first records are only in the store")

			c := e.consumer(func(c *Config) { c.IsolationLevel = level })
			defer c.Close(context.Background())
			require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
			store.setHold(true)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := c.Poll(ctx)
				done <- err
			}()
			<-store.held
			cancel()
			require.ErrorIs(t, <-done, context.Canceled)

			store.setHold(false)
			recs, err := c.Poll(context.Background())
			require.NoError(t, err)
			require.NotEmpty(t, recs)
			require.Equal(t, "a0-"+fmt.Sprintf("%0200d", 0), string(recs[0].Value))
		})
	}
}
