module github.com/kafkalite/kafkalite/internal/testkit/suites

go 1.26.0

replace (
	github.com/kafkalite/kafkalite => ../../..
	github.com/kafkalite/kafkalite/internal/testkit/kafkacheck => ../kafkacheck
)

require (
	github.com/kafkalite/kafkalite/internal/testkit/kafkacheck v0.0.0-00010101000000-000000000000
	github.com/twmb/franz-go v1.22.3
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/kafkalite/kafkalite v0.0.0-00010101000000-000000000000 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/twmb/franz-go/pkg/kmsg v1.15.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
