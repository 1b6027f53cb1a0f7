module github.com/kafkalite/kafkalite/examples/kafkaserver

go 1.26.0

replace github.com/kafkalite/kafkalite => ../..

require (
	github.com/kafkalite/kafkalite v0.0.0
	github.com/stretchr/testify v1.12.1
	github.com/twmb/franz-go/pkg/kmsg v1.15.1
	software.sslmate.com/src/go-pkcs12 v0.7.4
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.11.0 // indirect
)
