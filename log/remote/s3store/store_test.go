package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/remote/remotetest"
	"github.com/stretchr/testify/require"
)

// TestStore runs the store contract against a local S3 server.
func TestStore(t *testing.T) {
	remotetest.StorageManager(t, func(t *testing.T) remote.StorageManager {
		srv := startServer(t)
		return srv.newStore(t, srv.testConfig())
	})
}

// TestStoreLayout checks the objects' keys: the prefix, the partition's
// directory, the 20-digit start offset and the copy's id, one object per
// file and the manifest; and that a deletion leaves none.
func TestStoreLayout(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t)
	store := srv.newStore(t, srv.testConfig())
	s := remotetest.NewSegment("orders", 7, 1234, 5000, true)
	_, err := store.CopyLogSegmentData(ctx, s.Meta, s.Data())
	require.NoError(t, err)
	base := fmt.Sprintf("cluster-a/tiered/orders-7-%s/00000000000000001234-%s.", s.Meta.ID.TopicID, s.Meta.ID.ID)
	var want []string
	for _, ext := range []string{"index", "leader-epoch-checkpoint", "log", "manifest", "snapshot", "timeindex", "txnindex"} {
		want = append(want, base+ext)
	}
	got := srv.keys(t)
	slices.Sort(got)
	require.Equal(t, want, got)
	require.Equal(t, fmt.Sprintf("log 5000 %d\n", crc32Update(0, s.Log)), strings.SplitAfter(string(srv.get(t, base+"manifest")), "\n")[0])
	require.NoError(t, store.DeleteLogSegmentData(ctx, s.Meta))
	require.Empty(t, srv.keys(t))
}

// TestStoreMultipart copies a .log larger than the part size, so that it
// goes up in parts (one of them failing once on the way), and checks that
// it reads back whole and in ranges, that no upload is left open, and
// that an empty range is empty.
func TestStoreMultipart(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t)
	cfg := srv.testConfig()
	cfg.PartSize = MinPartSize
	cfg.UploadConcurrency = 2
	store := srv.newStore(t, cfg)
	s := remotetest.NewSegment("orders", 0, 0, 2*MinPartSize+12345, false)

	var parts int
	failed := false
	srv.faults.set(func(req *http.Request) fault {
		if !isPart(req) {
			return pass
		}
		parts++
		if req.URL.Query().Get("partNumber") == "2" && !failed {
			failed = true
			return status500
		}
		return pass
	})
	_, err := store.CopyLogSegmentData(ctx, s.Meta, s.Data())
	require.NoError(t, err)
	require.Equal(t, 4, parts, "three parts, one of them sent twice")
	remotetest.RequireStored(t, store, s)
	got, err := remotetest.ReadAll(store.FetchLogSegment(ctx, s.Meta, MinPartSize-10, MinPartSize+10))
	require.NoError(t, err)
	require.Equal(t, s.Log[MinPartSize-10:MinPartSize+10], got, "a range across two parts")
	got, err = remotetest.ReadAll(store.FetchLogSegment(ctx, s.Meta, 100, 100))
	require.NoError(t, err)
	require.Empty(t, got)
	require.Empty(t, uploads(t, store))
}

// TestStoreStreamsUploads checks that a large .log is sent as it is read
// from its file, not held in memory: the store allocates much less than
// the file's size to upload it (the parts go to a sink, so that the
// in-process server's buffers do not count).
func TestStoreStreamsUploads(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t)
	cfg := srv.testConfig()
	cfg.PartSize = MinPartSize
	store := srv.newStore(t, cfg)
	const logBytes = 8 * MinPartSize
	s := remotetest.NewSegment("orders", 0, 0, logBytes, false)
	srv.faults.sinkParts()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := store.CopyLogSegmentData(ctx, s.Meta, s.Data())
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("a copy of a %d MiB .log allocated %.1f MiB", logBytes>>20, float64(allocated)/(1<<20))
	require.Less(t, allocated, uint64(MinPartSize), "less than one part")
}

// TestStoreDamage damages a stored copy in the ways a bucket can be
// damaged (an object cut short, a byte changed, an object or the manifest
// lost, a manifest of garbage) and checks that every fetch fails with a
// typed error rather than return other bytes, and that the copy can still
// be deleted.
func TestStoreDamage(t *testing.T) {
	ctx := context.Background()
	flip := func(b []byte, at int) []byte { b[at] ^= 0x40; return b }
	tests := []struct {
		name   string
		damage func(t *testing.T, srv *server)
		want   error
	}{
		{name: "log cut short", want: remote.ErrCorrupt, damage: func(t *testing.T, srv *server) {
			k := srv.only(t, ".log")
			srv.put(t, k, srv.get(t, k)[:100])
		}},
		{name: "log cut shorter than the range", want: remote.ErrCorrupt, damage: func(t *testing.T, srv *server) {
			srv.put(t, srv.only(t, ".log"), nil)
		}},
		{name: "log byte changed", want: remote.ErrCorrupt, damage: func(t *testing.T, srv *server) {
			k := srv.only(t, ".log")
			srv.put(t, k, flip(srv.get(t, k), 4000))
		}},
		{name: "log grown", want: remote.ErrCorrupt, damage: func(t *testing.T, srv *server) {
			k := srv.only(t, ".log")
			srv.put(t, k, append(srv.get(t, k), 1))
		}},
		{name: "index byte changed", want: remote.ErrCorrupt, damage: func(t *testing.T, srv *server) {
			k := srv.only(t, ".index")
			srv.put(t, k, flip(srv.get(t, k), 7))
		}},
		{name: "log lost", want: remote.ErrCorrupt, damage: func(t *testing.T, srv *server) {
			_, err := srv.backend.DeleteObject(testBucket, srv.only(t, ".log"))
			require.NoError(t, err)
		}},
		{name: "index lost", want: remote.ErrCorrupt, damage: func(t *testing.T, srv *server) {
			_, err := srv.backend.DeleteObject(testBucket, srv.only(t, ".index"))
			require.NoError(t, err)
		}},
		{name: "manifest lost", want: remote.ErrNotFound, damage: func(t *testing.T, srv *server) {
			_, err := srv.backend.DeleteObject(testBucket, srv.only(t, ".manifest"))
			require.NoError(t, err)
		}},
		{name: "manifest garbage", want: remote.ErrCorrupt, damage: func(t *testing.T, srv *server) {
			srv.put(t, srv.only(t, ".manifest"), []byte("log x y\n"))
		}},
		{name: "manifest without log", want: remote.ErrCorrupt, damage: func(t *testing.T, srv *server) {
			srv.put(t, srv.only(t, ".manifest"), []byte("index 80 1\n"))
		}},
		{name: "manifest huge", want: remote.ErrCorrupt, damage: func(t *testing.T, srv *server) {
			srv.put(t, srv.only(t, ".manifest"), []byte(strings.Repeat("log 1 2\n", 1000)))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t)
			store := srv.newStore(t, srv.testConfig())
			s := remotetest.NewSegment("t", 0, 0, 10_000, false)
			_, err := store.CopyLogSegmentData(ctx, s.Meta, s.Data())
			require.NoError(t, err)
			tt.damage(t, srv)
			var errs []error
			for _, r := range [][2]int64{{0, -1}, {3, 9000}, {5000, 5000}} {
				_, err := remotetest.ReadAll(store.FetchLogSegment(ctx, s.Meta, r[0], r[1]))
				errs = append(errs, err)
			}
			_, err = remotetest.ReadAll(store.FetchIndex(ctx, s.Meta, remote.OffsetIndex))
			errs = append(errs, err)
			require.NotEqual(t, []error{nil, nil, nil, nil}, errs, "some fetch notices")
			for _, err := range errs {
				if err != nil {
					require.ErrorIs(t, err, tt.want)
				}
			}
			require.NoError(t, store.DeleteLogSegmentData(ctx, s.Meta))
			remotetest.RequireGone(t, store, s)
			require.Empty(t, srv.keys(t))
		})
	}
}

// TestStoreRetries injects failures that pass (5xx answers, throttling,
// connection resets, requests that get no answer for longer than
// RequestTimeout, answers broken off mid-body) and checks that a copy and
// the reads of it succeed anyway, having sent the failed requests again.
func TestStoreRetries(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		rule    func(*http.Request) fault
		timeout time.Duration // RequestTimeout, if not the default
	}{
		{name: "500 on the first requests", rule: firstN(3, status500, nil)},
		{name: "503 SlowDown on the first requests", rule: firstN(3, status503, nil)},
		{name: "429 on every other PUT", rule: func() func(*http.Request) fault {
			n := 0
			return func(req *http.Request) fault {
				if req.Method != http.MethodPut {
					return pass
				}
				n++
				if n%2 == 1 {
					return status429
				}
				return pass
			}
		}()},
		{name: "connection resets on the first requests", rule: firstN(4, reset, nil)},
		{name: "no answer past RequestTimeout", rule: firstN(2, hang, isMethod(http.MethodPut)),
			timeout: 500 * time.Millisecond},
		{name: "GET bodies broken off", rule: firstN(3, cutBody, isLogGet)},
		{name: "GET without answer", rule: firstN(2, hang, isLogGet), timeout: 500 * time.Millisecond},
		{name: "GET bodies stalled", rule: firstN(2, stallBody, isLogGet), timeout: 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t)
			cfg := srv.testConfig()
			if tt.timeout > 0 {
				cfg.RequestTimeout = tt.timeout
			}
			store := srv.newStore(t, cfg)
			s := remotetest.NewSegment("orders", 0, 0, 300_000, true)
			srv.faults.set(tt.rule)
			_, err := store.CopyLogSegmentData(ctx, s.Meta, s.Data())
			require.NoError(t, err)
			remotetest.RequireStored(t, store, s)
			_, faulted := srv.faults.counts()
			require.Positive(t, faulted, "faults injected")
		})
	}
}

// TestStoreNotRetried checks that a 4xx answer other than throttling is
// not sent again, and is remote.ErrStorage.
func TestStoreNotRetried(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t)
	store := srv.newStore(t, srv.testConfig())
	s := remotetest.NewSegment("orders", 0, 0, 1000, false)
	srv.faults.set(func(req *http.Request) fault {
		if req.Method == http.MethodPut {
			return status403
		}
		return pass
	})
	_, err := store.CopyLogSegmentData(ctx, s.Meta, s.Data())
	require.ErrorIs(t, err, remote.ErrStorage)
	require.ErrorContains(t, err, "AccessDenied")
	requests, faulted := srv.faults.counts()
	require.Equal(t, 1, faulted, "the PUT was sent once")
	require.Equal(t, 2, requests, "the manifest's DELETE and the PUT")
	srv.faults.set(nil)
	remotetest.RequireGone(t, store, s)
}

// TestStoreServerDown fails every request from some point of a copy on:
// the copy fails with remote.ErrStorage once the request has been sent
// MaxRetries+1 times, what it left is not readable, and once the server
// answers again DeleteLogSegmentData removes it all, an unfinished
// multipart upload included.
func TestStoreServerDown(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		logSize int
		down    func(req *http.Request) bool // the first request that fails
		uploads int                          // multipart uploads left open
	}{
		{name: "after the log", logSize: 10_000, down: func(req *http.Request) bool {
			return req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, ".index")
		}},
		{name: "before the manifest", logSize: 10_000, down: func(req *http.Request) bool {
			return req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, ".manifest")
		}},
		{name: "in a multipart upload", logSize: 2*MinPartSize + 1, uploads: 1, down: func(req *http.Request) bool {
			return isPart(req) && req.URL.Query().Get("partNumber") == "2"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t)
			cfg := srv.testConfig()
			cfg.MaxRetries = 3
			cfg.PartSize = MinPartSize
			cfg.UploadConcurrency = 1
			store := srv.newStore(t, cfg)
			s := remotetest.NewSegment("orders", 0, 0, tt.logSize, false)
			down := false
			srv.faults.set(func(req *http.Request) fault {
				if down || tt.down(req) {
					down = true
					return status503
				}
				return pass
			})
			_, err := store.CopyLogSegmentData(ctx, s.Meta, s.Data())
			require.ErrorIs(t, err, remote.ErrStorage)
			require.ErrorContains(t, err, "4 attempts failed")
			srv.faults.set(nil)
			require.Len(t, uploads(t, store), tt.uploads)
			if tt.uploads == 0 {
				require.NotEmpty(t, srv.keys(t), "the failed copy left objects")
			}
			remotetest.RequireGone(t, store, s)
			require.NoError(t, store.DeleteLogSegmentData(ctx, s.Meta))
			require.Empty(t, srv.keys(t))
			require.Empty(t, uploads(t, store))
			_, err = store.CopyLogSegmentData(ctx, s.Meta, s.Data())
			require.NoError(t, err, "a retry of the copy")
			remotetest.RequireStored(t, store, s)
		})
	}
}

// TestStoreCanceled cancels a copy and a read while their request gets
// no answer: each returns the context's error at once (not
// remote.ErrStorage, and without waiting for RequestTimeout).
func TestStoreCanceled(t *testing.T) {
	srv := startServer(t)
	cfg := srv.testConfig()
	cfg.RequestTimeout = 0
	store := srv.newStore(t, cfg)
	s := remotetest.NewSegment("orders", 0, 0, 10_000, false)

	run := func(op func(ctx context.Context) error) error {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		srv.faults.set(func(*http.Request) fault { return hang })
		srv.faults.mu.Lock()
		hanging := srv.faults.hanging
		srv.faults.mu.Unlock()
		done := make(chan error, 1)
		go func() { done <- op(ctx) }()
		<-hanging
		cancel()
		err := <-done
		srv.faults.set(nil)
		return err
	}
	err := run(func(ctx context.Context) error {
		_, err := store.CopyLogSegmentData(ctx, s.Meta, s.Data())
		return err
	})
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, remote.ErrStorage)

	_, err = store.CopyLogSegmentData(context.Background(), s.Meta, s.Data())
	require.NoError(t, err)
	err = run(func(ctx context.Context) error {
		_, err := remotetest.ReadAll(store.FetchLogSegment(ctx, s.Meta, 0, -1))
		return err
	})
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, remote.ErrStorage)
}

// TestNew checks that New fails with remote.ErrStorage for a bucket that
// does not exist and for a server that does not answer, and with a
// ConfigError for a configuration without a bucket.
func TestNew(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t)
	cfg := srv.testConfig()
	cfg.Bucket = "no-such-bucket"
	_, err := New(ctx, cfg)
	require.ErrorIs(t, err, remote.ErrStorage)
	require.ErrorContains(t, err, "does not exist")

	cfg = srv.testConfig()
	cfg.MaxRetries = 2
	srv.faults.set(func(*http.Request) fault { return status503 })
	_, err = New(ctx, cfg)
	require.ErrorIs(t, err, remote.ErrStorage)
	requests, _ := srv.faults.counts()
	require.Equal(t, 3, requests)

	cfg.Bucket = ""
	_, err = New(ctx, cfg)
	require.ErrorIs(t, err, ErrConfig)
}

// TestStoreSourceFails checks that a segment's file that fails while it
// is being sent (after the checksum pass read it) fails the copy with
// remote.ErrStorage and the file's error, without sending again, and
// leaves nothing readable.
func TestStoreSourceFails(t *testing.T) {
	ctx := context.Background()
	for _, logBytes := range []int{100_000, 2*MinPartSize + 1} {
		t.Run(fmt.Sprint(logBytes), func(t *testing.T) {
			srv := startServer(t)
			cfg := srv.testConfig()
			cfg.PartSize = MinPartSize
			store := srv.newStore(t, cfg)
			s := remotetest.NewSegment("orders", 0, 0, logBytes, false)
			data := s.Data()
			data.Log.R = &secondPassFails{r: data.Log.R, size: int64(logBytes)}
			_, err := store.CopyLogSegmentData(ctx, s.Meta, data)
			require.ErrorIs(t, err, remote.ErrStorage)
			require.ErrorIs(t, err, errSecondPass)
			requests, _ := srv.faults.counts()
			require.Less(t, requests, 10, "not retried")
			remotetest.RequireGone(t, store, s)
			require.Empty(t, uploads(t, store), "the multipart upload was aborted")
		})
	}
}

var errSecondPass = errors.New("the disk failed")

// secondPassFails is a file that fails once more than its size has been
// read: after the store's checksum pass.
type secondPassFails struct {
	r    io.ReaderAt
	size int64
	read atomic.Int64
}

func (f *secondPassFails) ReadAt(p []byte, off int64) (int, error) {
	if f.read.Add(int64(len(p))) > f.size {
		return 0, errSecondPass
	}
	return f.r.ReadAt(p, off)
}

// TestNewEnvironmentCredentials checks that a configuration without
// credentials or region takes them from the environment (the SDK's
// standard chain), and signs with them.
func TestNewEnvironmentCredentials(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AWS_ACCESS_KEY_ID", "ENVKEY")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
	t.Setenv("AWS_REGION", "eu-west-3")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", dir+"/config")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", dir+"/credentials")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	srv := startServer(t)
	cfg := srv.testConfig()
	cfg.AccessKeyID, cfg.SecretAccessKey, cfg.Region = "", "", ""
	srv.newStore(t, cfg)
	srv.faults.mu.Lock()
	auth := srv.faults.auth
	srv.faults.mu.Unlock()
	require.Contains(t, auth, "Credential=ENVKEY/")
	require.Contains(t, auth, "/eu-west-3/s3/")
}

// TestBackoff checks that the backoff doubles up to its cap, jittered to
// between half and all of it.
func TestBackoff(t *testing.T) {
	s := &Store{cfg: Config{RetryBackoff: 100 * time.Millisecond, RetryBackoffMax: time.Second}}
	for try, want := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		want *= time.Millisecond
		for range 20 {
			d := s.backoff(try)
			require.GreaterOrEqual(t, d, want/2, "try %d", try)
			require.LessOrEqual(t, d, want, "try %d", try)
		}
	}
	require.LessOrEqual(t, s.backoff(1000), time.Second)
}

var _ io.ReadCloser = (*objectReader)(nil)
