package s3store_test

import (
	"fmt"

	"github.com/kafkalite/kafkalite/log/remote/s3store"
)

// A store's configuration from properties, as a .properties file gives
// them: a local S3-compatible server, addressed by path, with static
// credentials. s3store.New(ctx, cfg) then opens the store.
func ExampleParseConfig() {
	cfg, err := s3store.ParseConfig(map[string]string{
		"s3.endpoint":          "127.0.0.1:9000",
		"s3.use.ssl":           "false",
		"s3.path.style.access": "true",
		"s3.bucket":            "tiered",
		"s3.prefix":            "cluster-a",
		"s3.access.key.id":     "minio",
		"s3.secret.access.key": "minio-secret",
		"s3.max.retries":       "3",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Bucket, cfg.MaxRetries, cfg.RetryBackoff, cfg.RequestTimeout, cfg.PartSize>>20, "MiB parts")

	_, err = s3store.ParseConfig(map[string]string{"s3.bucket": "tiered", "s3.max.retries": "lots"})
	fmt.Println(err)
	// Output:
	// tiered 3 100ms 30s 16 MiB parts
	// s3store: invalid configuration: s3.max.retries="lots": not an integer
}
