package log

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Value parsing, as Kafka's ConfigDef does it.

// javaTrim removes what Java's String.trim removes: every character up to
// U+0020 at either end.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

func parseLong(v string) (int64, error) {
	n, err := strconv.ParseInt(javaTrim(v), 10, 64)
	if err != nil {
		return 0, errors.New("not a long (64-bit decimal integer)")
	}
	return n, nil
}

func parseInt(v string) (int, error) {
	n, err := strconv.ParseInt(javaTrim(v), 10, 32)
	if err != nil {
		return 0, errors.New("not an int (32-bit decimal integer)")
	}
	return int(n), nil
}

func parseBool(v string) (bool, error) {
	switch s := javaTrim(v); {
	case strings.EqualFold(s, "true"):
		return true, nil
	case strings.EqualFold(s, "false"):
		return false, nil
	}
	return false, errors.New("not true or false")
}

func parseDouble(v string) (float64, error) {
	f, err := strconv.ParseFloat(javaTrim(v), 64)
	if err != nil {
		return 0, errors.New("not a number")
	}
	return f, nil
}

// parseList splits a Kafka list value; an empty value is the empty list.
func parseList(v string) []string {
	s := javaTrim(v)
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = javaTrim(p)
	}
	return parts
}

// parseMillis parses a millisecond count. With unlimited, -1 and counts
// beyond time.Duration's range are Unlimited; without, counts beyond the
// range clamp to the largest whole-millisecond Duration. Other negative
// counts are returned for Validate to reject.
func parseMillis(v string, unlimited bool) (time.Duration, error) {
	ms, err := parseLong(v)
	switch {
	case err != nil:
		return 0, err
	case unlimited && (ms == -1 || ms > maxMillis):
		return Unlimited, nil
	case ms > maxMillis:
		return time.Duration(maxMillis) * time.Millisecond, nil
	case ms < -maxMillis:
		return 0, errors.New("out of range")
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// formatMillis prints d in whole milliseconds; with unlimited, Unlimited
// prints as Long.MAX_VALUE.
func formatMillis(d time.Duration, unlimited bool) string {
	if unlimited && d == Unlimited {
		return maxLong
	}
	return strconv.FormatInt(d.Milliseconds(), 10)
}

func checkBool(v string) error { _, err := parseBool(v); return err }

// checkNoTieredStorage accepts only false: kafkalite has no tiered storage.
func checkNoTieredStorage(v string) error {
	b, err := parseBool(v)
	if err == nil && b {
		return errors.New("tiered storage is not supported by kafkalite")
	}
	return err
}

func checkLongAtLeast(minimum int64, isInt bool) func(string) error {
	return func(v string) error {
		var n int64
		var err error
		if isInt {
			var i int
			i, err = parseInt(v)
			n = int64(i)
		} else {
			n, err = parseLong(v)
		}
		if err == nil && n < minimum {
			err = fmt.Errorf("must be at least %d", minimum)
		}
		return err
	}
}

// checkThrottledReplicas applies Kafka's ThrottledReplicaListValidator:
// "*", or a list of partition:brokerId pairs.
func checkThrottledReplicas(v string) error {
	items := parseList(v)
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func propertiesString(m map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(m) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(m[k])
		b.WriteByte('\n')
	}
	return b.String()
}

// flattenJoin returns the errors inside an errors.Join result (or err
// itself).
func flattenJoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
