module github.com/kafkalite/kafkalite/internal/testkit/interop

go 1.26.0

require (
	github.com/golang/snappy v1.0.0
	github.com/kafkalite/kafkalite v0.0.0
	github.com/klauspost/compress v1.20.4
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/stretchr/testify v1.12.1
	github.com/twmb/franz-go/pkg/kmsg v1.15.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

replace github.com/kafkalite/kafkalite => ../../..
