package s3store

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrConfig means a configuration is not valid: a property's value does
// not parse, a field is out of its range, or a property is unknown. The
// error is a [*ConfigError] naming the property.
var ErrConfig = errors.New("s3store: invalid configuration")

// ConfigError is a bad configuration value: the property (or, for a field
// without one, the field's name), the value given and what is wrong with
// it. It matches [ErrConfig] with errors.Is.
type ConfigError struct {
	Property string
	Value    string
	Reason   string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("s3store: invalid configuration: %s=%q: %s", e.Property, e.Value, e.Reason)
}

func (e *ConfigError) Unwrap() error { return ErrConfig }

// MinPartSize and MaxPartSize bound [Config.PartSize]: S3's limits on a
// multipart upload's parts (every part but the last is at least 5 MiB).
const (
	MinPartSize = 5 << 20
	MaxPartSize = 5 << 30
)

// Config says where a [Store] keeps its objects and how it talks to S3.
// Start from [DefaultConfig]: the zero value is not the defaults (0 is a
// real value for MaxRetries and the durations). Each field names its
// property for [ParseConfig] and its default.
type Config struct {
	// Endpoint is the S3 server: a URL (http://host:port, https://host)
	// or host[:port], whose scheme UseSSL chooses. Empty means AWS's
	// regional endpoint for Region. Property s3.endpoint, default empty.
	Endpoint string
	// Region signs the requests and, for AWS, picks the endpoint. Empty
	// means the region of the client's standard environment chain
	// (AWS_REGION, the shared config file), else us-east-1. Property
	// s3.region, default empty.
	Region string
	// Bucket holds the objects; it must exist. Property s3.bucket,
	// required.
	Bucket string
	// Prefix is put before every object's key (with a "/" between), so
	// that several directories or clusters can share a bucket. Property
	// s3.prefix, default empty.
	Prefix string
	// AccessKeyID, SecretAccessKey and SessionToken are static
	// credentials. With AccessKeyID empty, the client's standard chain is
	// used (AWS_ACCESS_KEY_ID and friends, the shared credentials file,
	// web identity, the instance's role). Properties s3.access.key.id,
	// s3.secret.access.key, s3.session.token, default empty.
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// UseSSL chooses https for an Endpoint given without a scheme (and
	// for AWS's endpoints); a URL's own scheme wins. Property s3.use.ssl,
	// default true.
	UseSSL bool
	// PathStyle addresses the bucket in the path (host/bucket/key)
	// rather than in the host name (bucket.host/key), as local and most
	// self-hosted S3 servers need. Property s3.path.style.access, default
	// false.
	PathStyle bool
	// MaxRetries is how many times a request that failed in a way that
	// may pass (a 5xx answer, throttling, a timeout, a broken
	// connection) is sent again; 0 sends each once. Property
	// s3.max.retries, default 5.
	MaxRetries int
	// RetryBackoff is the wait before the first retry; each later one
	// waits twice as long, up to RetryBackoffMax, and every wait is
	// jittered to between half and all of it. Properties
	// s3.retry.backoff.ms (default 100 ms) and s3.retry.backoff.max.ms
	// (default 10 s), as Kafka's retry.backoff.ms and
	// retry.backoff.max.ms.
	RetryBackoff    time.Duration
	RetryBackoffMax time.Duration
	// RequestTimeout bounds how long one request may go without
	// progress: waiting for the answer's headers, between two reads of a
	// body being sent, and between two reads of an answer's body. A
	// request past it is abandoned and retried; 0 is no bound. Property
	// s3.request.timeout.ms, default 30 s (Kafka's request.timeout.ms).
	RequestTimeout time.Duration
	// PartSize is the size of a multipart upload's parts, in bytes: a
	// file larger than it is uploaded in parts, each read from the
	// segment's file as it is sent. Between [MinPartSize] and
	// [MaxPartSize]. Property s3.part.size, default 16 MiB.
	PartSize int64
	// UploadConcurrency is how many parts of one file are sent at once
	// (at least 1). Property s3.upload.concurrency, default 4.
	UploadConcurrency int

	// HTTPClient, if not nil, sends the requests (a test's fault
	// injector, a proxy); nil uses a client of the store's own, tuned as
	// the AWS SDK's default. Not a property.
	HTTPClient *http.Client
	// Logger receives a warning for each retried request; nil is
	// silent. Not a property.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults, without a bucket.
func DefaultConfig() Config {
	return Config{
		UseSSL:            true,
		MaxRetries:        5,
		RetryBackoff:      100 * time.Millisecond,
		RetryBackoffMax:   10 * time.Second,
		RequestTimeout:    30 * time.Second,
		PartSize:          16 << 20,
		UploadConcurrency: 4,
	}
}

// The property names, as ParseConfig reads them and Properties writes
// them.
const (
	PropEndpoint          = "s3.endpoint"
	PropRegion            = "s3.region"
	PropBucket            = "s3.bucket"
	PropPrefix            = "s3.prefix"
	PropAccessKeyID       = "s3.access.key.id"
	PropSecretAccessKey   = "s3.secret.access.key"
	PropSessionToken      = "s3.session.token"
	PropUseSSL            = "s3.use.ssl"
	PropPathStyle         = "s3.path.style.access"
	PropMaxRetries        = "s3.max.retries"
	PropRetryBackoff      = "s3.retry.backoff.ms"
	PropRetryBackoffMax   = "s3.retry.backoff.max.ms"
	PropRequestTimeout    = "s3.request.timeout.ms"
	PropPartSize          = "s3.part.size"
	PropUploadConcurrency = "s3.upload.concurrency"
)

// property is one property's binding to a Config field.
type property struct {
	name   string
	parse  func(c *Config, v string) error
	format func(c Config) string
	secret bool
}

func stringProp(name string, f func(*Config) *string, secret bool) property {
	return property{name: name, secret: secret,
		parse:  func(c *Config, v string) error { *f(c) = v; return nil },
		format: func(c Config) string { return *f(&c) }}
}

func boolProp(name string, f func(*Config) *bool) property {
	return property{name: name,
		parse: func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return &ConfigError{Property: name, Value: v, Reason: "not true or false"}
			}
			*f(c) = b
			return nil
		},
		format: func(c Config) string { return strconv.FormatBool(*f(&c)) }}
}

func intProp(name string, f func(*Config) *int) property {
	return property{name: name,
		parse: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return &ConfigError{Property: name, Value: v, Reason: "not an integer"}
			}
			*f(c) = n
			return nil
		},
		format: func(c Config) string { return strconv.Itoa(*f(&c)) }}
}

func sizeProp(name string, f func(*Config) *int64) property {
	return property{name: name,
		parse: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return &ConfigError{Property: name, Value: v, Reason: "not a number of bytes"}
			}
			*f(c) = n
			return nil
		},
		format: func(c Config) string { return strconv.FormatInt(*f(&c), 10) }}
}

// msProp binds a duration to a property in milliseconds.
func msProp(name string, f func(*Config) *time.Duration) property {
	return property{name: name,
		parse: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n > int64(time.Duration(1<<63-1)/time.Millisecond) {
				return &ConfigError{Property: name, Value: v, Reason: "not a number of milliseconds"}
			}
			*f(c) = time.Duration(n) * time.Millisecond
			return nil
		},
		format: func(c Config) string { return strconv.FormatInt(f(&c).Milliseconds(), 10) }}
}

var properties = []property{
	stringProp(PropEndpoint, func(c *Config) *string { return &c.Endpoint }, false),
	stringProp(PropRegion, func(c *Config) *string { return &c.Region }, false),
	stringProp(PropBucket, func(c *Config) *string { return &c.Bucket }, false),
	stringProp(PropPrefix, func(c *Config) *string { return &c.Prefix }, false),
	stringProp(PropAccessKeyID, func(c *Config) *string { return &c.AccessKeyID }, false),
	stringProp(PropSecretAccessKey, func(c *Config) *string { return &c.SecretAccessKey }, true),
	stringProp(PropSessionToken, func(c *Config) *string { return &c.SessionToken }, true),
	boolProp(PropUseSSL, func(c *Config) *bool { return &c.UseSSL }),
	boolProp(PropPathStyle, func(c *Config) *bool { return &c.PathStyle }),
	intProp(PropMaxRetries, func(c *Config) *int { return &c.MaxRetries }),
	msProp(PropRetryBackoff, func(c *Config) *time.Duration { return &c.RetryBackoff }),
	msProp(PropRetryBackoffMax, func(c *Config) *time.Duration { return &c.RetryBackoffMax }),
	msProp(PropRequestTimeout, func(c *Config) *time.Duration { return &c.RequestTimeout }),
	sizeProp(PropPartSize, func(c *Config) *int64 { return &c.PartSize }),
	intProp(PropUploadConcurrency, func(c *Config) *int { return &c.UploadConcurrency }),
}

// ParseConfig reads a configuration from properties (as in a .properties
// file), starting from [DefaultConfig]; see the package doc for the
// names. An unknown name, a value that does not parse and a configuration
// that [Config.Validate] rejects are a [*ConfigError].
func ParseConfig(props map[string]string) (Config, error) {
	c := DefaultConfig()
	byName := map[string]property{}
	for _, p := range properties {
		byName[p.name] = p
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p, ok := byName[name]
		if !ok {
			return Config{}, &ConfigError{Property: name, Value: props[name], Reason: "unknown property"}
		}
		if err := p.parse(&c, strings.TrimSpace(props[name])); err != nil {
			return Config{}, err
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Properties returns c as the properties ParseConfig reads, every one
// written (the secrets too: keep the map as safe as the configuration).
func (c Config) Properties() map[string]string {
	out := make(map[string]string, len(properties))
	for _, p := range properties {
		out[p.name] = p.format(c)
	}
	return out
}

// String returns c's properties, name=value separated by spaces, with
// the secret key and session token hidden.
func (c Config) String() string {
	var b strings.Builder
	for i, p := range properties {
		if i > 0 {
			b.WriteByte(' ')
		}
		v := p.format(c)
		if p.secret && v != "" {
			v = "[hidden]"
		}
		fmt.Fprintf(&b, "%s=%s", p.name, v)
	}
	return b.String()
}

// Validate checks that c can make a store: a bucket, an endpoint that
// parses, credentials in pairs, and numbers in their ranges.
func (c Config) Validate() error {
	bad := func(prop, value, reason string) error {
		return &ConfigError{Property: prop, Value: value, Reason: reason}
	}
	if c.Bucket == "" {
		return bad(PropBucket, c.Bucket, "a bucket is required")
	}
	if c.Endpoint != "" {
		if _, err := endpointURL(c.Endpoint, c.UseSSL); err != nil {
			return bad(PropEndpoint, c.Endpoint, err.Error())
		}
	}
	if (c.AccessKeyID == "") != (c.SecretAccessKey == "") {
		return bad(PropAccessKeyID, c.AccessKeyID, "the access key id and the secret access key go together")
	}
	if c.SessionToken != "" && c.AccessKeyID == "" {
		return bad(PropSessionToken, "[hidden]", "a session token needs an access key id")
	}
	if c.MaxRetries < 0 {
		return bad(PropMaxRetries, strconv.Itoa(c.MaxRetries), "negative")
	}
	for _, d := range []struct {
		prop string
		v    time.Duration
	}{{PropRetryBackoff, c.RetryBackoff}, {PropRetryBackoffMax, c.RetryBackoffMax}, {PropRequestTimeout, c.RequestTimeout}} {
		if d.v < 0 {
			return bad(d.prop, strconv.FormatInt(d.v.Milliseconds(), 10), "negative")
		}
	}
	if c.RetryBackoffMax < c.RetryBackoff {
		return bad(PropRetryBackoffMax, strconv.FormatInt(c.RetryBackoffMax.Milliseconds(), 10),
			"less than "+PropRetryBackoff)
	}
	if c.PartSize < MinPartSize || c.PartSize > MaxPartSize {
		return bad(PropPartSize, strconv.FormatInt(c.PartSize, 10),
			fmt.Sprintf("outside S3's part sizes [%d, %d]", MinPartSize, MaxPartSize))
	}
	if c.UploadConcurrency < 1 {
		return bad(PropUploadConcurrency, strconv.Itoa(c.UploadConcurrency), "less than 1")
	}
	return nil
}

// endpointURL returns the endpoint as a URL: its own scheme, else https
// or http as useSSL says.
func endpointURL(endpoint string, useSSL bool) (string, error) {
	s := endpoint
	if !strings.Contains(s, "://") {
		scheme := "https://"
		if !useSSL {
			scheme = "http://"
		}
		s = scheme + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", errors.New("not a URL or host:port")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errors.New("the scheme is neither http nor https")
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("not a URL or host:port")
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}
