package s3store

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParseConfig reads property maps: defaults, every property, and each
// kind of bad value, which must be a ConfigError naming the property.
func TestParseConfig(t *testing.T) {
	withDefaults := func(f func(c *Config)) Config {
		c := DefaultConfig()
		c.Bucket = "b"
		f(&c)
		return c
	}
	tests := []struct {
		name    string
		props   map[string]string
		want    Config
		badProp string // the property a ConfigError names, if the map is bad
	}{
		{name: "bucket only", props: map[string]string{"s3.bucket": "b"}, want: withDefaults(func(*Config) {})},
		{name: "every property", props: map[string]string{
			"s3.endpoint": "http://127.0.0.1:9000", "s3.region": "eu-west-1", "s3.bucket": "b", "s3.prefix": "a/b",
			"s3.access.key.id": "AK", "s3.secret.access.key": "SK", "s3.session.token": "ST",
			"s3.use.ssl": "false", "s3.path.style.access": "true", "s3.max.retries": "0",
			"s3.retry.backoff.ms": "50", "s3.retry.backoff.max.ms": "2000", "s3.request.timeout.ms": "0",
			"s3.part.size": "8388608", "s3.upload.concurrency": "1",
		}, want: withDefaults(func(c *Config) {
			c.Endpoint, c.Region, c.Prefix = "http://127.0.0.1:9000", "eu-west-1", "a/b"
			c.AccessKeyID, c.SecretAccessKey, c.SessionToken = "AK", "SK", "ST"
			c.UseSSL, c.PathStyle, c.MaxRetries = false, true, 0
			c.RetryBackoff, c.RetryBackoffMax, c.RequestTimeout = 50*time.Millisecond, 2*time.Second, 0
			c.PartSize, c.UploadConcurrency = 8<<20, 1
		})},
		{name: "host:port endpoint", props: map[string]string{"s3.bucket": "b", "s3.endpoint": "minio.local:9000"},
			want: withDefaults(func(c *Config) { c.Endpoint = "minio.local:9000" })},
		{name: "spaces around values", props: map[string]string{"s3.bucket": " b ", "s3.max.retries": " 3"},
			want: withDefaults(func(c *Config) { c.MaxRetries = 3 })},
		{name: "no bucket", props: map[string]string{"s3.region": "x"}, badProp: "s3.bucket"},
		{name: "unknown property", props: map[string]string{"s3.bucket": "b", "s3.bukket": "c"}, badProp: "s3.bukket"},
		{name: "retries not a number", props: map[string]string{"s3.bucket": "b", "s3.max.retries": "many"},
			badProp: "s3.max.retries"},
		{name: "negative retries", props: map[string]string{"s3.bucket": "b", "s3.max.retries": "-1"},
			badProp: "s3.max.retries"},
		{name: "backoff not a number", props: map[string]string{"s3.bucket": "b", "s3.retry.backoff.ms": "1s"},
			badProp: "s3.retry.backoff.ms"},
		{name: "negative timeout", props: map[string]string{"s3.bucket": "b", "s3.request.timeout.ms": "-5"},
			badProp: "s3.request.timeout.ms"},
		{name: "timeout overflows", props: map[string]string{"s3.bucket": "b", "s3.request.timeout.ms": "9223372036854775807"},
			badProp: "s3.request.timeout.ms"},
		{name: "backoff cap below the backoff", props: map[string]string{"s3.bucket": "b", "s3.retry.backoff.ms": "500",
			"s3.retry.backoff.max.ms": "100"}, badProp: "s3.retry.backoff.max.ms"},
		{name: "not a boolean", props: map[string]string{"s3.bucket": "b", "s3.path.style.access": "yes please"},
			badProp: "s3.path.style.access"},
		{name: "part too small", props: map[string]string{"s3.bucket": "b", "s3.part.size": "1048576"},
			badProp: "s3.part.size"},
		{name: "part too large", props: map[string]string{"s3.bucket": "b", "s3.part.size": "6000000000"},
			badProp: "s3.part.size"},
		{name: "no concurrency", props: map[string]string{"s3.bucket": "b", "s3.upload.concurrency": "0"},
			badProp: "s3.upload.concurrency"},
		{name: "endpoint scheme", props: map[string]string{"s3.bucket": "b", "s3.endpoint": "ftp://host"},
			badProp: "s3.endpoint"},
		{name: "endpoint with a query", props: map[string]string{"s3.bucket": "b", "s3.endpoint": "http://host/?a=b"},
			badProp: "s3.endpoint"},
		{name: "secret without key id", props: map[string]string{"s3.bucket": "b", "s3.secret.access.key": "SK"},
			badProp: "s3.access.key.id"},
		{name: "token without key id", props: map[string]string{"s3.bucket": "b", "s3.session.token": "ST"},
			badProp: "s3.session.token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfig(tt.props)
			if tt.badProp != "" {
				require.ErrorIs(t, err, ErrConfig)
				var ce *ConfigError
				require.True(t, errors.As(err, &ce))
				require.Equal(t, tt.badProp, ce.Property)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			again, err := ParseConfig(got.Properties())
			require.NoError(t, err, "the printed properties parse")
			require.Equal(t, got, again, "round trip")
		})
	}
}

// TestConfigString checks that a configuration prints without its
// secrets.
func TestConfigString(t *testing.T) {
	c := DefaultConfig()
	c.Bucket, c.AccessKeyID, c.SecretAccessKey, c.SessionToken = "b", "AKID", "very-secret", "token-secret"
	s := c.String()
	require.Contains(t, s, "s3.access.key.id=AKID")
	require.Contains(t, s, "s3.secret.access.key=[hidden]")
	require.False(t, strings.Contains(s, "secret-") || strings.Contains(s, "very-secret"), s)
}
