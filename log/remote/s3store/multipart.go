package s3store

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/kafkalite/kafkalite/log/remote"
)

// maxParts is S3's limit on a multipart upload's parts: a file larger
// than maxParts times PartSize goes up in larger parts.
const maxParts = 10_000

// abortTimeout bounds the abort of a failed multipart upload.
const abortTimeout = 30 * time.Second

// putMultipart uploads src under key in parts of PartSize, up to
// UploadConcurrency at once, each read from src as it is sent and retried
// on its own. A failed upload is aborted (a failure to abort leaves it to
// DeleteLogSegmentData).
func (s *Store) putMultipart(ctx context.Context, key string, src remote.Source) error {
	var uploadID string
	err := s.retry(ctx, "create multipart upload", key, func(a *attempt) error {
		out, err := s.client.CreateMultipartUpload(a.ctx, &s3.CreateMultipartUploadInput{Bucket: &s.cfg.Bucket, Key: &key})
		if err == nil {
			uploadID = aws.ToString(out.UploadId)
		}
		return err
	})
	if err != nil {
		return err
	}
	partSize := max(s.cfg.PartSize, (src.Size+maxParts-1)/maxParts)
	nparts := int((src.Size + partSize - 1) / partSize)
	parts := make([]types.CompletedPart, nparts)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex // protects firstErr
		firstErr error
		wg       sync.WaitGroup
	)
	jobs := make(chan int)
	for range min(s.cfg.UploadConcurrency, nparts) {
		wg.Go(func() {
			for i := range jobs {
				off := int64(i) * partSize
				size := min(partSize, src.Size-off)
				num := aws.Int32(int32(i + 1))
				err := s.retry(pctx, fmt.Sprintf("upload part %d of", i+1), key, func(a *attempt) error {
					b := newBody(src.R, off, size, a)
					out, err := s.client.UploadPart(a.ctx, &s3.UploadPartInput{Bucket: &s.cfg.Bucket, Key: &key,
						UploadId: &uploadID, PartNumber: num, Body: b, ContentLength: aws.Int64(size)})
					if err == nil {
						parts[i] = types.CompletedPart{ETag: out.ETag, PartNumber: num}
					}
					return upload(b, err)
				})
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
				}
			}
		})
	}
feed:
	for i := range nparts {
		select {
		case jobs <- i:
		case <-pctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = fmt.Errorf("s3store: put %s: %w", key, context.Cause(ctx))
	}
	if firstErr == nil {
		firstErr = s.complete(ctx, key, uploadID, parts, src.Size)
	}
	if firstErr != nil {
		// The abort outlives the caller's cancellation, for a while: it
		// is cleanup, which DeleteLogSegmentData also does.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		defer cancel()
		if err := s.abort(actx, key, uploadID); err != nil {
			s.log.Warn("s3store: a failed multipart upload was not aborted (the segment's deletion will)",
				"key", key, "upload", uploadID, "err", err)
		}
		return firstErr
	}
	return nil
}

// complete completes a multipart upload. A retry told that the upload is
// gone (the first attempt completed it, but its answer was lost) checks
// that the object has the size uploaded.
func (s *Store) complete(ctx context.Context, key, uploadID string, parts []types.CompletedPart, size int64) error {
	tries := 0
	return s.retry(ctx, "complete multipart upload", key, func(a *attempt) error {
		tries++
		_, err := s.client.CompleteMultipartUpload(a.ctx, &s3.CompleteMultipartUploadInput{Bucket: &s.cfg.Bucket,
			Key: &key, UploadId: &uploadID, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
		var gone *types.NoSuchUpload
		if tries > 1 && (errors.As(err, &gone) || errorCode(err) == "NoSuchUpload") {
			out, herr := s.client.HeadObject(a.ctx, &s3.HeadObjectInput{Bucket: &s.cfg.Bucket, Key: &key})
			if herr == nil && aws.ToInt64(out.ContentLength) == size {
				return nil
			}
		}
		return err
	})
}

// abort aborts a multipart upload; one already gone is not an error.
func (s *Store) abort(ctx context.Context, key, uploadID string) error {
	return s.retry(ctx, "abort multipart upload", key, func(a *attempt) error {
		_, err := s.client.AbortMultipartUpload(a.ctx, &s3.AbortMultipartUploadInput{Bucket: &s.cfg.Bucket,
			Key: &key, UploadId: &uploadID})
		if isNotFound(err) || errorCode(err) == "NoSuchUpload" {
			return nil
		}
		return err
	})
}

// abortUploads aborts every multipart upload whose key starts with prefix.
func (s *Store) abortUploads(ctx context.Context, prefix string) error {
	var keyMarker, idMarker *string
	for {
		var out *s3.ListMultipartUploadsOutput
		err := s.retry(ctx, "list multipart uploads", prefix, func(a *attempt) error {
			var err error
			out, err = s.client.ListMultipartUploads(a.ctx, &s3.ListMultipartUploadsInput{Bucket: &s.cfg.Bucket,
				Prefix: &prefix, KeyMarker: keyMarker, UploadIdMarker: idMarker})
			if errorCode(err) == "NoSuchUpload" {
				// Some servers (gofakes3) answer so for a bucket that never
				// had an upload.
				out, err = &s3.ListMultipartUploadsOutput{}, nil
			}
			return err
		})
		if err != nil {
			return err
		}
		for _, u := range out.Uploads {
			if err := s.abort(ctx, aws.ToString(u.Key), aws.ToString(u.UploadId)); err != nil {
				return err
			}
		}
		if !aws.ToBool(out.IsTruncated) {
			return nil
		}
		keyMarker, idMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}

// errorCode returns the S3 error code of an answer, "" if err is none.
func errorCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// httpStatus returns the HTTP status of an answer, 0 if err is none.
func httpStatus(err error) int {
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		return status.HTTPStatusCode()
	}
	return 0
}

// isNotFound says whether err is S3's answer that the key (or upload) is
// not there; a missing bucket is not that, but a storage failure.
func isNotFound(err error) bool {
	if err == nil {
		return false
	}
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	switch errorCode(err) {
	case "NoSuchBucket":
		return false
	case "NoSuchKey", "NotFound":
		return true
	}
	return httpStatus(err) == 404 && errorCode(err) != "NoSuchBucket"
}

func crc32Update(sum uint32, b []byte) uint32 { return crc32.Update(sum, castagnoli, b) }
