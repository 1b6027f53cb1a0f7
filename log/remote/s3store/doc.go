// Package s3store is a remote.StorageManager on Amazon S3 or an
// S3-compatible server (MinIO, Ceph's RGW, SeaweedFS, Garage, ...), for
// kafkalite's tiered storage. It is a module of its own, so that the core
// module keeps its few dependencies.
//
// # Objects
//
// A segment's copy is an object per file, under the bucket's key prefix:
//
//	<prefix>/<topic>-<partition>-<topic id>/<start offset, 20 digits>-<segment id>.<ext>
//
// with ext log, index, timeindex, txnindex (when the segment has one),
// snapshot and leader-epoch-checkpoint, and a manifest (ext manifest)
// listing each object's size and CRC-32C, a line per object:
//
//	<ext> <size in bytes> <CRC-32C, decimal>
//
// the filesystem store's layout and manifest (remote.FileStore), so that a
// copy moved between a volume and a bucket stays readable.
//
// # Guarantees
//
// An S3 PUT is atomic: an object is there whole or not at all, so no
// temporary names are needed. The manifest is uploaded last and is the
// copy's commit point: CopyLogSegmentData first deletes the manifest an
// earlier attempt may have left, then uploads the files, then the
// manifest; a copy without a manifest is incomplete, fetches fail with
// remote.ErrNotFound, and DeleteLogSegmentData (which deletes the
// manifest first, then every object, then aborts any unfinished multipart
// upload of the copy) removes it. S3 is strongly consistent for reads
// after writes and deletes (AWS since December 2020; most compatible
// servers always), so a copy is readable once CopyLogSegmentData returns.
//
// Fetches check sizes against the manifest (a whole object's
// Content-Length, or the total in a range read's Content-Range) and, for
// reads of a whole object, its CRC-32C at the end: a difference is
// remote.ErrCorrupt, never other bytes. Ranges of the .log are ranged GETs.
// Uploads are checked in flight by TLS, or by SigV4's signed SHA-256 of
// the body over plain HTTP.
//
// A .log larger than PartSize is uploaded in parts (up to
// UploadConcurrency at once); each part, and a smaller file whole, is read
// from the remote.Source's io.ReaderAt as it is sent, so a segment is never
// held in memory. The store reads each file once more before it, for the
// manifest's CRC-32C.
//
// # Failures
//
// Every request is retried, up to MaxRetries times, after an exponential
// backoff (RetryBackoff doubled each time up to RetryBackoffMax, jittered
// to between half and all of it), when it failed in a way that may pass:
// an answer of 5xx or 429, a throttling code (SlowDown, ...) or S3's
// RequestTimeout, a connection that could not be made or broke, an answer
// cut short, or no progress for RequestTimeout. Other 4xx answers
// (AccessDenied, NoSuchBucket, ...) and failures to read the segment's own
// files are not retried. A read that breaks off is resumed at the byte it
// stopped at, with If-Match on the object's ETag. A multipart upload that
// fails is aborted. Errors wrap remote.ErrStorage, remote.ErrNotFound or
// remote.ErrCorrupt; an operation stopped by its context's end returns
// that context's error (as the filesystem store), and a bad configuration
// is a [*ConfigError]. A failed copy is not readable (no manifest), and
// DeleteLogSegmentData removes what it left once the server answers.
//
// # Configuration
//
// [ParseConfig] reads these properties (unknown ones are an error):
//
//	s3.endpoint              URL or host:port; empty for AWS
//	s3.region                signing region; empty: AWS_REGION etc., else us-east-1
//	s3.bucket                required; must exist
//	s3.prefix                key prefix, default empty
//	s3.access.key.id         static credentials; empty: the SDK's standard chain
//	s3.secret.access.key
//	s3.session.token
//	s3.use.ssl               https for a host:port endpoint, default true
//	s3.path.style.access     host/bucket/key addressing, default false
//	s3.max.retries           default 5
//	s3.retry.backoff.ms      default 100
//	s3.retry.backoff.max.ms  default 10000
//	s3.request.timeout.ms    no-progress bound of one request, default 30000
//	s3.part.size             multipart part size in bytes, default 16777216
//	s3.upload.concurrency    parts sent at once, default 4
//
// # The client
//
// The store uses the AWS SDK for Go v2 (service/s3 and config) rather than
// minio-go: both are well kept, but the SDK brings 18 modules, all its
// own, where minio-go brings about as many from a dozen other projects
// and a module graph of over 200. The SDK's own retries are turned off (the
// store's, above, see the whole operation, including resumed reads and
// attempt timeouts), and so are its default request checksums, which
// many S3-compatible servers refuse.
//
// # Tests
//
// The tests run the remotetest contract, damage and fault cases against
// gofakes3 (its in-memory backend, served by net/http/httptest on
// 127.0.0.1 in the test process): it needs nothing installed and starts in
// a millisecond, which is why it is used rather than a build of SeaweedFS
// or MinIO. Faults come from an http.RoundTripper between the store and
// the server.
package s3store
