package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"
	"github.com/kafkalite/kafkalite/log/remote"
)

// Store is a remote.StorageManager on an S3 bucket. It is safe for
// concurrent use.
type Store struct {
	cfg    Config
	client *s3.Client
	log    *slog.Logger
	prefix string
	// transport is the HTTP transport the store made (nil with
	// Config.HTTPClient), whose idle connections Close closes.
	transport *http.Transport
}

var _ remote.StorageManager = (*Store)(nil)

// defaultRegion signs requests when neither the configuration nor the
// environment names a region; S3-compatible servers mostly ignore it.
const defaultRegion = "us-east-1"

// New returns a store on cfg's bucket, after checking that the bucket
// exists and answers (a HEAD request, retried as any). An invalid cfg is
// a [*ConfigError]; a bucket that is missing or refuses the credentials,
// or a server that does not answer, is remote.ErrStorage. It starts no
// goroutine.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, log: cfg.Logger, prefix: strings.Trim(cfg.Prefix, "/")}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	var httpClient *http.Client
	if cfg.HTTPClient != nil {
		httpClient = cfg.HTTPClient
	} else {
		// The SDK's tuned transport; redirects are answers to see, not to
		// follow (S3 redirects to the bucket's region), as in the SDK.
		s.transport = awshttp.NewBuildableClient().GetTransport()
		httpClient = &http.Client{Transport: s.transport,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	var static aws.CredentialsProvider
	if cfg.AccessKeyID != "" {
		static = credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)
	}
	awsCfg := aws.Config{Region: cfg.Region, Credentials: static}
	if static == nil || cfg.Region == "" {
		// What the configuration leaves out comes from the SDK's standard
		// chain: environment, shared files, web identity, instance role.
		var opts []func(*awsconfig.LoadOptions) error
		if cfg.Region != "" {
			opts = append(opts, awsconfig.WithRegion(cfg.Region))
		}
		if static != nil {
			opts = append(opts, awsconfig.WithCredentialsProvider(static))
		}
		var err error
		if awsCfg, err = awsconfig.LoadDefaultConfig(ctx, opts...); err != nil {
			return nil, fmt.Errorf("%w: s3store: loading the AWS configuration: %w", remote.ErrStorage, err)
		}
	}
	if awsCfg.Region == "" {
		awsCfg.Region = defaultRegion
	}
	s.client = s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		o.HTTPClient = httpClient
		o.UsePathStyle = cfg.PathStyle
		if cfg.Endpoint != "" {
			u, _ := endpointURL(cfg.Endpoint, cfg.UseSSL) // checked by Validate
			o.BaseEndpoint = aws.String(u)
		} else {
			o.EndpointOptions.DisableHTTPS = !cfg.UseSSL
		}
		// The store logs through Config.Logger; the SDK's own warnings
		// would go to standard error.
		o.Logger = logging.Nop{}
		// The store retries by itself (retry.go), with its own timeouts.
		o.Retryer = aws.NopRetryer{}
		o.RetryMaxAttempts = 0
		// The SDK's default since 2025 adds CRC trailers many S3-compatible
		// servers refuse; the store checks its own CRC-32C.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	err := s.retry(ctx, "head bucket", cfg.Bucket, func(a *attempt) error {
		_, err := s.client.HeadBucket(a.ctx, &s3.HeadBucketInput{Bucket: aws.String(cfg.Bucket)})
		if isNotFound(err) {
			return fmt.Errorf("%w: s3store: the bucket %q does not exist", remote.ErrStorage, cfg.Bucket)
		}
		return err
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close implements remote.StorageManager: it closes the idle connections
// of the store's own HTTP client. It is idempotent.
func (s *Store) Close() error {
	if s.transport != nil {
		s.transport.CloseIdleConnections()
	}
	return nil
}

// key returns the key of a copy's object: see the package doc.
func (s *Store) key(m remote.SegmentMetadata, ext string) string {
	k := fmt.Sprintf("%s-%d-%s/%020d-%s.%s", m.ID.Topic, m.ID.Partition, m.ID.TopicID, m.StartOffset, m.ID.ID, ext)
	if s.prefix != "" {
		k = s.prefix + "/" + k
	}
	return k
}

// copyChunk is how much the checksum pass reads at once.
const copyChunk = 1 << 20

// CopyLogSegmentData implements remote.StorageManager: it deletes the
// manifest an earlier attempt may have left, uploads each file (the .log
// in parts when it is larger than PartSize; the object of a transaction
// index the segment does not have is deleted), then uploads the manifest,
// the commit point. It returns no custom metadata.
func (s *Store) CopyLogSegmentData(ctx context.Context, m remote.SegmentMetadata, data remote.SegmentData) ([]byte, error) {
	if err := s.deleteObject(ctx, s.key(m, extManifest)); err != nil {
		return nil, err
	}
	sources := map[string]remote.Source{"log": data.Log, "index": data.OffsetIndex, "timeindex": data.TimeIndex,
		"txnindex": data.TransactionIndex, "snapshot": data.ProducerSnapshot,
		"leader-epoch-checkpoint": {R: bytes.NewReader(data.LeaderEpochIndex), Size: int64(len(data.LeaderEpochIndex))}}
	man := manifest{}
	buf := make([]byte, copyChunk)
	for _, ext := range objectExts {
		key := s.key(m, ext)
		src := sources[ext]
		if src.R == nil {
			if err := s.deleteObject(ctx, key); err != nil {
				return nil, err
			}
			continue
		}
		sum, err := checksum(ctx, src, buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("s3store: copy %s: %w", m.ID, err)
			}
			return nil, fmt.Errorf("%w: copy %s: %s: %w", remote.ErrStorage, m.ID, ext, err)
		}
		if err := s.put(ctx, key, src); err != nil {
			return nil, err
		}
		man[ext] = entry{size: src.Size, crc: sum}
	}
	b := man.encode()
	if err := s.put(ctx, s.key(m, extManifest), remote.Source{R: bytes.NewReader(b), Size: int64(len(b))}); err != nil {
		return nil, err
	}
	return nil, nil
}

// checksum reads src whole and returns its CRC-32C.
func checksum(ctx context.Context, src remote.Source, buf []byte) (uint32, error) {
	var sum uint32
	for off := int64(0); off < src.Size; {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		n := int(min(int64(len(buf)), src.Size-off))
		got, err := src.R.ReadAt(buf[:n], off)
		if got < n {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, fmt.Errorf("reading the segment's file at %d: %w", off, err)
		}
		sum = crc32Update(sum, buf[:n])
		off += int64(n)
	}
	return sum, nil
}

// put uploads src under key: in one request, or in parts if it is larger
// than PartSize.
func (s *Store) put(ctx context.Context, key string, src remote.Source) error {
	if src.Size > s.cfg.PartSize {
		return s.putMultipart(ctx, key, src)
	}
	return s.retry(ctx, "put", key, func(a *attempt) error {
		b := newBody(src.R, 0, src.Size, a)
		_, err := s.client.PutObject(a.ctx, &s3.PutObjectInput{Bucket: &s.cfg.Bucket, Key: &key, Body: b,
			ContentLength: aws.Int64(src.Size)})
		return upload(b, err)
	})
}

// deleteObject deletes key; a missing key is not an error.
func (s *Store) deleteObject(ctx context.Context, key string) error {
	return s.retry(ctx, "delete", key, func(a *attempt) error {
		_, err := s.client.DeleteObject(a.ctx, &s3.DeleteObjectInput{Bucket: &s.cfg.Bucket, Key: &key})
		if isNotFound(err) {
			return nil
		}
		return err
	})
}

// DeleteLogSegmentData implements remote.StorageManager: the manifest
// first (the copy stops being readable), then every object, then any
// multipart upload of the copy left unfinished.
func (s *Store) DeleteLogSegmentData(ctx context.Context, m remote.SegmentMetadata) error {
	for _, ext := range append([]string{extManifest}, objectExts...) {
		if err := s.deleteObject(ctx, s.key(m, ext)); err != nil {
			return err
		}
	}
	return s.abortUploads(ctx, s.key(m, ""))
}

// FetchLogSegment implements remote.StorageManager. A range of the .log
// is a ranged GET; the object's size (from the answer's Content-Range or
// Content-Length) is checked against the manifest's, and a read of the
// whole .log checks its CRC-32C when it reaches the end. A read whose
// connection fails is resumed where it stopped, as a request is retried.
func (s *Store) FetchLogSegment(ctx context.Context, m remote.SegmentMetadata, start, end int64) (io.ReadCloser, error) {
	man, err := s.manifest(ctx, m)
	if err != nil {
		return nil, err
	}
	want := man["log"]
	if end < 0 {
		end = want.size
	}
	if start < 0 || start > end || end > want.size {
		return nil, fmt.Errorf("s3store: %s: range [%d, %d) outside the segment's %d bytes", m.ID, start, end, want.size)
	}
	key := s.key(m, "log")
	if start == end && want.size > 0 {
		// S3 has no empty range: check the object's size alone.
		if err := s.head(ctx, m, key, want); err != nil {
			return nil, err
		}
		return io.NopCloser(bytes.NewReader(nil)), nil
	}
	return s.open(ctx, m, key, want, start, end)
}

// FetchIndex implements remote.StorageManager: the whole object, its size
// checked when it is opened and its CRC-32C when it is read to the end.
func (s *Store) FetchIndex(ctx context.Context, m remote.SegmentMetadata, t remote.IndexType) (io.ReadCloser, error) {
	ext, ok := indexExts[t]
	if !ok {
		return nil, fmt.Errorf("s3store: unknown index type %d", t)
	}
	man, err := s.manifest(ctx, m)
	if err != nil {
		return nil, err
	}
	want, ok := man[ext]
	if !ok {
		return nil, fmt.Errorf("%w: %s has no %s index", remote.ErrNotFound, m.ID, t)
	}
	return s.open(ctx, m, s.key(m, ext), want, 0, want.size)
}

// manifest reads and checks a copy's manifest: remote.ErrNotFound
// without one, remote.ErrCorrupt for one that does not parse.
func (s *Store) manifest(ctx context.Context, m remote.SegmentMetadata) (manifest, error) {
	key := s.key(m, extManifest)
	var b []byte
	err := s.retry(ctx, "get", key, func(a *attempt) error {
		out, err := s.client.GetObject(a.ctx, &s3.GetObjectInput{Bucket: &s.cfg.Bucket, Key: &key})
		if isNotFound(err) {
			return fmt.Errorf("%w: %s (no manifest %s)", remote.ErrNotFound, m.ID, key)
		}
		if err != nil {
			return err
		}
		defer out.Body.Close()
		if n := aws.ToInt64(out.ContentLength); n > maxManifestBytes {
			return fmt.Errorf("%w: %s: manifest of %d bytes", remote.ErrCorrupt, key, n)
		}
		b, err = io.ReadAll(io.LimitReader(&progressReader{r: out.Body, a: a}, maxManifestBytes+1))
		if err != nil {
			return err
		}
		if len(b) > maxManifestBytes {
			return fmt.Errorf("%w: %s: manifest of more than %d bytes", remote.ErrCorrupt, key, maxManifestBytes)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return parseManifest(key, b)
}

// head checks that key exists with the copied size.
func (s *Store) head(ctx context.Context, m remote.SegmentMetadata, key string, want entry) error {
	return s.retry(ctx, "head", key, func(a *attempt) error {
		out, err := s.client.HeadObject(a.ctx, &s3.HeadObjectInput{Bucket: &s.cfg.Bucket, Key: &key})
		if isNotFound(err) {
			return fmt.Errorf("%w: %s: %s is missing (the manifest lists it)", remote.ErrCorrupt, m.ID, key)
		}
		if err != nil {
			return err
		}
		if n := aws.ToInt64(out.ContentLength); n != want.size {
			return fmt.Errorf("%w: %s: %s has %d bytes, %d were copied", remote.ErrCorrupt, m.ID, key, n, want.size)
		}
		return nil
	})
}

// progressReader marks its attempt's progress on each read.
type progressReader struct {
	r io.Reader
	a *attempt
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.a.progress()
	return n, err
}
