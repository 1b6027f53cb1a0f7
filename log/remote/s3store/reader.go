package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/kafkalite/kafkalite/log/remote"
)

// objectReader reads bytes [pos, end) of a copied object of size bytes.
// A read that fails in a way that may pass (a broken connection, an
// answer cut short, no progress for RequestTimeout) is resumed at the
// byte it stopped at, with a ranged GET that must match the first
// answer's ETag, up to MaxRetries times without progress in between. A
// read of the whole object checks its CRC-32C at the end and fails the
// last read with remote.ErrCorrupt if it differs.
type objectReader struct {
	s     *Store
	ctx   context.Context
	id    remote.SegmentID
	key   string
	size  int64
	etag  string
	check bool
	want  uint32

	pos, end int64
	sum      uint32
	body     io.ReadCloser // nil between a failure and the resumption
	a        *attempt      // the attempt body belongs to
	fails    int           // failures since the last progress
	err      error         // sticky
}

// open returns a reader of [start, end) of the object key, checked
// against want.
func (s *Store) open(ctx context.Context, m remote.SegmentMetadata, key string, want entry, start, end int64) (*objectReader, error) {
	r := &objectReader{s: s, ctx: ctx, id: m.ID, key: key, size: want.size, pos: start, end: end,
		check: start == 0 && end == want.size, want: want.crc}
	if err := r.resume(); err != nil {
		return nil, err
	}
	return r, nil
}

// resume sends the GET of [pos, end), retried as any request.
func (r *objectReader) resume() error {
	return r.s.retry(r.ctx, "get", r.key, func(a *attempt) error {
		body, etag, err := r.get(a)
		if err != nil {
			return err
		}
		a.keep()
		r.body, r.a = body, a
		if r.etag == "" {
			r.etag = etag
		}
		return nil
	})
}

// get sends one GET of [pos, end) and checks what the answer says of the
// object's size.
func (r *objectReader) get(a *attempt) (io.ReadCloser, string, error) {
	s := r.s
	in := &s3.GetObjectInput{Bucket: &s.cfg.Bucket, Key: &r.key}
	whole := r.pos == 0 && r.end == r.size
	if !whole {
		in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", r.pos, r.end-1))
	}
	if r.etag != "" {
		in.IfMatch = aws.String(r.etag)
	}
	out, err := s.client.GetObject(a.ctx, in)
	switch {
	case isNotFound(err):
		return nil, "", fmt.Errorf("%w: %s: %s is missing (the manifest lists it)", remote.ErrCorrupt, r.id, r.key)
	case httpStatus(err) == http.StatusRequestedRangeNotSatisfiable:
		return nil, "", fmt.Errorf("%w: %s: %s is shorter than the %d bytes copied", remote.ErrCorrupt, r.id, r.key, r.size)
	case httpStatus(err) == http.StatusPreconditionFailed:
		return nil, "", fmt.Errorf("%w: %s: %s changed while it was read", remote.ErrCorrupt, r.id, r.key)
	case err != nil:
		return nil, "", err
	}
	n := int64(-1)
	if out.ContentLength != nil {
		n = *out.ContentLength
	}
	total := n
	if !whole {
		var ok bool
		if total, ok = contentRangeTotal(aws.ToString(out.ContentRange)); !ok {
			out.Body.Close()
			return nil, "", fmt.Errorf("%w: s3store: get %s: the server answered a range read without a Content-Range (%q)",
				remote.ErrStorage, r.key, aws.ToString(out.ContentRange))
		}
	}
	if total != r.size {
		out.Body.Close()
		return nil, "", fmt.Errorf("%w: %s: %s has %d bytes, %d were copied", remote.ErrCorrupt, r.id, r.key, total, r.size)
	}
	if n != r.end-r.pos {
		out.Body.Close()
		return nil, "", fmt.Errorf("%w: %s: %s answered %d bytes for %d asked", remote.ErrCorrupt, r.id, r.key, n, r.end-r.pos)
	}
	return out.Body, aws.ToString(out.ETag), nil
}

// contentRangeTotal returns the object's size from a Content-Range header
// ("bytes first-last/size").
func contentRangeTotal(h string) (int64, bool) {
	_, total, ok := strings.Cut(h, "/")
	if !ok || !strings.HasPrefix(h, "bytes ") {
		return 0, false
	}
	n, err := strconv.ParseInt(total, 10, 64)
	return n, err == nil && n >= 0
}

func (r *objectReader) Read(p []byte) (int, error) {
	for {
		if r.err != nil {
			return 0, r.err
		}
		if r.pos == r.end {
			r.release()
			return 0, io.EOF
		}
		if len(p) == 0 {
			return 0, nil
		}
		if r.body == nil {
			if err := r.resume(); err != nil {
				r.err = err
				return 0, err
			}
		}
		if rest := r.end - r.pos; int64(len(p)) > rest {
			p = p[:rest]
		}
		n, err := r.body.Read(p)
		r.a.progress()
		r.pos += int64(n)
		if r.check {
			r.sum = crc32Update(r.sum, p[:n])
		}
		if n > 0 {
			r.fails = 0
		}
		if r.pos == r.end {
			r.release()
			if r.check && r.sum != r.want {
				r.err = fmt.Errorf("%w: %s: %s has checksum %08x, %08x was copied", remote.ErrCorrupt, r.id, r.key, r.sum, r.want)
				return n, r.err
			}
			return n, nil
		}
		if err == nil {
			return n, nil
		}
		// The answer broke off before its end.
		a := r.a
		r.release()
		if r.ctx.Err() != nil {
			r.err = fmt.Errorf("s3store: get %s: %w", r.key, context.Cause(r.ctx))
			return n, r.err
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		if !a.timedOut() && !isNetErr(err) {
			r.err = fmt.Errorf("%w: get %s at byte %d: %w", remote.ErrStorage, r.key, r.pos, err)
			return n, r.err
		}
		if r.fails >= r.s.cfg.MaxRetries {
			r.err = fmt.Errorf("%w: get %s at byte %d: %d attempts failed, the last: %w", remote.ErrStorage, r.key,
				r.pos, r.fails+1, attemptErr(err, a))
			return n, r.err
		}
		d := r.s.backoff(r.fails)
		r.fails++
		r.s.log.Warn("s3store: resuming a read", "key", r.key, "at", r.pos, "attempt", r.fails,
			"backoff", d, "err", attemptErr(err, a))
		if err := sleep(r.ctx, d); err != nil {
			r.err = fmt.Errorf("s3store: get %s: %w", r.key, err)
			return n, r.err
		}
		if n > 0 {
			return n, nil
		}
	}
}

// release closes the current answer, if any, and stops its attempt.
func (r *objectReader) release() {
	if r.body != nil {
		r.body.Close()
		r.a.stop()
		r.body, r.a = nil, nil
	}
}

// Close closes the reader; later reads fail.
func (r *objectReader) Close() error {
	r.release()
	if r.err == nil {
		r.err = errors.New("s3store: read after close")
	}
	return nil
}
