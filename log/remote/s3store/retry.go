package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/kafkalite/kafkalite/log/remote"
)

// errRequestTimeout is the cause with which an attempt's context is
// canceled when its request made no progress for RequestTimeout.
var errRequestTimeout = errors.New("s3store: request timed out")

// attempt is one try of a request: a context canceled when the request
// goes RequestTimeout without progress (progress pushes the deadline
// back), or when the attempt is stopped.
type attempt struct {
	ctx     context.Context
	cancel  context.CancelCauseFunc
	timeout time.Duration
	kept    bool // set by keep: the caller stops the attempt

	mu    sync.Mutex // protects timer
	timer *time.Timer
}

func (s *Store) startAttempt(parent context.Context) *attempt {
	ctx, cancel := context.WithCancelCause(parent)
	a := &attempt{ctx: ctx, cancel: cancel, timeout: s.cfg.RequestTimeout}
	if a.timeout > 0 {
		a.timer = time.AfterFunc(a.timeout, func() { cancel(errRequestTimeout) })
	}
	return a
}

// progress pushes the attempt's deadline RequestTimeout past now.
func (a *attempt) progress() {
	if a.timer == nil {
		return
	}
	a.mu.Lock()
	if a.ctx.Err() == nil {
		a.timer.Reset(a.timeout)
	}
	a.mu.Unlock()
}

// keep hands the attempt to the caller of retry, which must stop it (an
// answer whose body is still to be read).
func (a *attempt) keep() { a.kept = true }

// stop ends the attempt and cancels what it still has in flight.
func (a *attempt) stop() {
	if a.timer != nil {
		a.mu.Lock()
		a.timer.Stop()
		a.mu.Unlock()
	}
	a.cancel(context.Canceled)
}

func (a *attempt) timedOut() bool { return errors.Is(context.Cause(a.ctx), errRequestTimeout) }

// retry runs f until it succeeds, fails in a way that retrying cannot
// fix, or has been retried MaxRetries times, waiting a backoff between
// tries. f gets a new attempt each time; the attempt is stopped when f
// returns, unless f returned nil after calling keep (the caller then stops
// it). Errors f builds with a remote sentinel are returned as they are;
// the caller's context ending returns its error (not ErrStorage, as the
// filesystem store); anything else becomes remote.ErrStorage.
func (s *Store) retry(ctx context.Context, op, key string, f func(a *attempt) error) error {
	for try := 0; ; try++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("s3store: %s %s: %w", op, key, context.Cause(ctx))
		}
		a := s.startAttempt(ctx)
		err := f(a)
		if err == nil {
			if !a.kept {
				a.stop()
			}
			return nil
		}
		a.stop()
		if ctx.Err() != nil {
			return fmt.Errorf("s3store: %s %s: %w", op, key, context.Cause(ctx))
		}
		if errors.Is(err, remote.ErrNotFound) || errors.Is(err, remote.ErrCorrupt) || errors.Is(err, remote.ErrStorage) {
			return err
		}
		if !retriable(err, a) {
			return fmt.Errorf("%w: %s %s: %w", remote.ErrStorage, op, key, err)
		}
		if try >= s.cfg.MaxRetries {
			return fmt.Errorf("%w: %s %s: %d attempts failed, the last: %w", remote.ErrStorage, op, key, try+1,
				attemptErr(err, a))
		}
		d := s.backoff(try)
		s.log.Warn("s3store: retrying a request", "op", op, "key", key, "attempt", try+1,
			"backoff", d, "err", attemptErr(err, a))
		if err := sleep(ctx, d); err != nil {
			return fmt.Errorf("s3store: %s %s: %w", op, key, err)
		}
	}
}

// attemptErr names a timed-out attempt's error as the timeout.
func attemptErr(err error, a *attempt) error {
	if a.timedOut() {
		return fmt.Errorf("%w (no progress for %s): %w", errRequestTimeout, a.timeout, err)
	}
	return err
}

// backoff returns the wait before retry number try+1: RetryBackoff
// doubled try times, capped at RetryBackoffMax, jittered to between half
// and all of it.
func (s *Store) backoff(try int) time.Duration {
	d := s.cfg.RetryBackoffMax
	if try < 62 {
		if b := s.cfg.RetryBackoff << try; b>>try == s.cfg.RetryBackoff && b < d {
			d = b
		}
	}
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// The error codes, in a 4xx answer, of throttling and of S3's timeouts;
// these are retried.
var retriableCodes = map[string]bool{
	"SlowDown": true, "Throttling": true, "ThrottlingException": true, "ThrottledException": true,
	"RequestThrottled": true, "RequestThrottledException": true, "TooManyRequests": true,
	"TooManyRequestsException": true, "RequestLimitExceeded": true, "ProvisionedThroughputExceededException": true,
	"RequestTimeout": true, "RequestTimeoutException": true,
}

// retriable says whether an attempt's failure may pass if the request is
// sent again: an answer of 5xx, 429 or a throttling code, a request that
// timed out or could not be sent (a broken connection), an answer cut
// short. A 4xx answer otherwise, a failure to read the segment's own
// file, and a request the client could not build are not.
func retriable(err error, a *attempt) bool {
	var se *sourceError
	if errors.As(err, &se) {
		return false
	}
	if a.timedOut() {
		return true
	}
	// A request that was not sent has a response error of status 0.
	if code := httpStatus(err); code != 0 {
		if code >= 500 || code == http.StatusTooManyRequests {
			return true
		}
		var api smithy.APIError
		return errors.As(err, &api) && retriableCodes[api.ErrorCode()]
	}
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) {
		return true
	}
	return isNetErr(err)
}

// isNetErr says whether err is a failure of the connection.
func isNetErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}

// sourceError is a failure to read the segment's file being uploaded: not
// the store's, so not retried.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return "reading the segment's file: " + e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

// body is an upload's body: a section of the segment's file, read as the
// request is sent (and again for a retry), which marks its attempt's
// progress and remembers its own failures, so that they are not retried
// even if the HTTP client's error does not wrap them.
type body struct {
	r *io.SectionReader
	a *attempt

	mu  sync.Mutex // protects err
	err error
}

func newBody(r io.ReaderAt, off, n int64, a *attempt) *body {
	return &body{r: io.NewSectionReader(r, off, n), a: a}
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.a.progress()
	if err != nil && !errors.Is(err, io.EOF) {
		err = &sourceError{err: err}
		b.mu.Lock()
		b.err = err
		b.mu.Unlock()
	}
	return n, err
}

func (b *body) Seek(off int64, whence int) (int64, error) { return b.r.Seek(off, whence) }

// failed returns the body's first failure to read the file, if any.
func (b *body) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// upload sends a body with f: a failure of the file wins over the
// request's error.
func upload(b *body, err error) error {
	if ferr := b.failed(); ferr != nil && err != nil {
		return ferr
	}
	return err
}
