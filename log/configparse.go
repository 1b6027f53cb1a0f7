package log

import (
	"errors"
	"strings"

	"github.com/kafkalite/kafkalite/internal/props"
)

// checkNoTieredStorage accepts only false: kafkalite has no tiered storage.
func checkNoTieredStorage(v string) error {
	b, err := props.Bool(v)
	if err == nil && b {
		return errors.New("tiered storage is not supported by kafkalite")
	}
	return err
}

// checkThrottledReplicas applies Kafka's ThrottledReplicaListValidator:
// "*", or a list of partition:brokerId pairs.
func checkThrottledReplicas(v string) error {
	items := props.List(v)
	if strings.Join(items, "") == "*" {
		return nil
	}
	for _, it := range items {
		p, b, ok := strings.Cut(it, ":")
		if it != "" && (!ok || !isDigits(p) || !isDigits(b)) {
			return errors.New(`must be "*" or a list of partition:brokerId pairs`)
		}
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
