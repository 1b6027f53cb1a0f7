module github.com/kafkalite/kafkalite/internal/kafkacheck

go 1.26.0

replace github.com/kafkalite/kafkalite => ../..

require github.com/stretchr/testify v1.12.1

require go.yaml.in/yaml/v3 v3.0.5 // indirect
