package s3store

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"
)

const testBucket = "kafkalite-tiered"

// server is a gofakes3 S3 server with its in-memory backend, on
// 127.0.0.1, and the fault injector between it and the stores that
// testConfig configures.
type server struct {
	backend *s3mem.Backend
	url     string
	faults  *faults
}

func startServer(t testing.TB) *server {
	t.Helper()
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket(testBucket))
	faker := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	ts := httptest.NewServer(faker.Server())
	t.Cleanup(ts.Close)
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	return &server{backend: backend, url: ts.URL, faults: &faults{base: base}}
}

// testConfig is the configuration of a store on srv: short backoffs, so
// that retries take no time, and the fault injector.
func (srv *server) testConfig() Config {
	c := DefaultConfig()
	c.Endpoint = srv.url
	c.Region = "us-east-1"
	c.Bucket = testBucket
	c.Prefix = "cluster-a/tiered"
	c.AccessKeyID, c.SecretAccessKey = "test-key", "test-secret"
	c.PathStyle = true
	c.RetryBackoff, c.RetryBackoffMax = time.Millisecond, 5*time.Millisecond
	c.HTTPClient = &http.Client{Transport: srv.faults}
	return c
}

func (srv *server) newStore(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// keys returns the keys of the bucket's objects.
func (srv *server) keys(t testing.TB) []string {
	t.Helper()
	list, err := srv.backend.ListBucket(testBucket, nil, gofakes3.ListBucketPage{})
	require.NoError(t, err)
	var out []string
	for _, o := range list.Contents {
		out = append(out, o.Key)
	}
	return out
}

// only returns the key of the one object whose key ends with suffix.
func (srv *server) only(t testing.TB, suffix string) string {
	t.Helper()
	var found []string
	for _, k := range srv.keys(t) {
		if strings.HasSuffix(k, suffix) {
			found = append(found, k)
		}
	}
	require.Len(t, found, 1, "objects ending with %s", suffix)
	return found[0]
}

func (srv *server) get(t testing.TB, key string) []byte {
	t.Helper()
	obj, err := srv.backend.GetObject(testBucket, key, nil)
	require.NoError(t, err)
	defer obj.Contents.Close()
	b, err := io.ReadAll(obj.Contents)
	require.NoError(t, err)
	return b
}

func (srv *server) put(t testing.TB, key string, b []byte) {
	t.Helper()
	_, err := srv.backend.PutObject(testBucket, key, map[string]string{}, bytes.NewReader(b), int64(len(b)), nil)
	require.NoError(t, err)
}

// uploads returns the keys of the bucket's unfinished multipart uploads.
func uploads(t testing.TB, s *Store) []string {
	t.Helper()
	out, err := s.client.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: &s.cfg.Bucket})
	if errorCode(err) == "NoSuchUpload" { // gofakes3: the bucket never had an upload
		return nil
	}
	require.NoError(t, err)
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, *u.Key)
	}
	return keys
}

// fault is what the injector does with a request.
type fault int

const (
	pass      fault = iota // send it to the server
	status500              // answer 500 InternalError
	status503              // answer 503 SlowDown
	status429              // answer 429 TooManyRequests
	status403              // answer 403 AccessDenied
	reset                  // fail with a connection reset
	hang                   // answer nothing until the request is canceled
	cutBody                // send it, but break the answer's body off after 1000 bytes
	stallBody              // send it, but stall the answer's body after 1000 bytes until the request is canceled
)

// faults is an http.RoundTripper that does to each request what rule
// says (pass if rule is nil), and counts them.
type faults struct {
	base http.RoundTripper

	mu       sync.Mutex // protects the following
	rule     func(req *http.Request) fault
	requests int
	faulted  int
	hanging  chan struct{} // closed when a request starts to hang
	sink     bool          // see sinkParts
	auth     string        // the last request's Authorization header
}

// set replaces the rule and resets the counts.
func (f *faults) set(rule func(req *http.Request) fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rule, f.requests, f.faulted, f.hanging = rule, 0, 0, make(chan struct{})
}

// firstN returns a rule that applies what to the first n requests that
// match, and passes the others.
func firstN(n int, what fault, match func(req *http.Request) bool) func(*http.Request) fault {
	var mu sync.Mutex
	return func(req *http.Request) fault {
		mu.Lock()
		defer mu.Unlock()
		if n > 0 && (match == nil || match(req)) {
			n--
			return what
		}
		return pass
	}
}

func (f *faults) counts() (requests, faulted int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, f.faulted
}

func (f *faults) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.requests++
	f.auth = req.Header.Get("Authorization")
	what := pass
	if f.rule != nil {
		what = f.rule(req)
	}
	if what != pass {
		f.faulted++
	}
	hanging, sink := f.hanging, f.sink
	f.mu.Unlock()
	if sink && what == pass {
		if resp, ok := sinkResponse(req); ok {
			return resp, nil
		}
	}
	if what != pass && what != cutBody && what != stallBody && req.Body != nil {
		req.Body.Close()
	}
	switch what {
	case status500:
		return errorResponse(req, 500, "InternalError"), nil
	case status503:
		return errorResponse(req, 503, "SlowDown"), nil
	case status429:
		return errorResponse(req, 429, "TooManyRequests"), nil
	case status403:
		return errorResponse(req, 403, "AccessDenied"), nil
	case reset:
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	case hang:
		select {
		case <-hanging:
		default:
			close(hanging)
		}
		<-req.Context().Done()
		return nil, req.Context().Err()
	case cutBody:
		resp, err := f.base.RoundTrip(req)
		if err == nil {
			resp.Body = &cutReader{ReadCloser: resp.Body, left: 1000}
		}
		return resp, err
	case stallBody:
		resp, err := f.base.RoundTrip(req)
		if err == nil {
			resp.Body = &cutReader{ReadCloser: resp.Body, left: 1000, stall: req.Context()}
		}
		return resp, err
	}
	return f.base.RoundTrip(req)
}

func errorResponse(req *http.Request, code int, s3Code string) *http.Response {
	body := "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + s3Code +
		"</Code><Message>injected by the test</Message><RequestId>test</RequestId></Error>"
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/xml"}}, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: req}
}

// cutReader breaks a body off after left bytes with a connection reset,
// or, with stall, blocks until stall is done.
type cutReader struct {
	io.ReadCloser
	left  int
	stall context.Context
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		if c.stall != nil {
			<-c.stall.Done()
			return 0, c.stall.Err()
		}
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= n
	return n, err
}

// Matchers of requests for firstN.
func isMethod(method string) func(*http.Request) bool {
	return func(req *http.Request) bool { return req.Method == method }
}

func isPart(req *http.Request) bool {
	return req.Method == http.MethodPut && req.URL.Query().Has("partNumber")
}

func isLogGet(req *http.Request) bool {
	return req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, ".log")
}

// sinkParts answers a multipart upload's parts and its completion itself,
// reading and dropping the parts' bodies, so that a test sees what the
// store alone allocates; other requests go to the server.
func (f *faults) sinkParts() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sink = true
}

func sinkResponse(req *http.Request) (*http.Response, bool) {
	q := req.URL.Query()
	var body string
	switch {
	case req.Method == http.MethodPut && q.Has("partNumber"):
		n, _ := io.Copy(io.Discard, req.Body)
		req.Body.Close()
		resp := okResponse(req, "")
		resp.Header.Set("ETag", fmt.Sprintf(`"part-%s-%d"`, q.Get("partNumber"), n))
		return resp, true
	case req.Method == http.MethodPost && q.Has("uploadId"):
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
		body = "<CompleteMultipartUploadResult><Key>k</Key><ETag>\"x-1\"</ETag></CompleteMultipartUploadResult>"
		return okResponse(req, body), true
	}
	return nil, false
}

func okResponse(req *http.Request, body string) *http.Response {
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/xml"}}, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: req}
}
