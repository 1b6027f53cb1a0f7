// Package props holds the machinery the log, producer and consumer packages
// share to parse Kafka property maps into their Config structs and print
// them back: value parsing as Kafka's ConfigDef does it, millisecond
// durations, a validator that collects configuration errors, sorting out
// used, ignored and unknown property names, and printing property maps.
//
// Each of those packages keeps its own exported ConfigError type and
// sentinel errors; props makes them through the constructor a package
// gives it, so that errors.Is, errors.As and the messages stay the
// package's own.
package props

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Value parsing, as Kafka's ConfigDef does it.

// Trim removes what Java's String.trim removes: every character up to
// U+0020 at either end.
func Trim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// Long parses a Kafka long: a 64-bit decimal integer with an optional sign.
func Long(v string) (int64, error) {
	n, err := strconv.ParseInt(Trim(v), 10, 64)
	if err != nil {
		return 0, errors.New("not a long (64-bit decimal integer)")
	}
	return n, nil
}

// Int parses a Kafka int: a 32-bit decimal integer with an optional sign.
func Int(v string) (int, error) {
	n, err := strconv.ParseInt(Trim(v), 10, 32)
	if err != nil {
		return 0, errors.New("not an int (32-bit decimal integer)")
	}
	return int(n), nil
}

// Bool parses a Kafka boolean: "true" or "false" in any case.
func Bool(v string) (bool, error) {
	switch s := Trim(v); {
	case strings.EqualFold(s, "true"):
		return true, nil
	case strings.EqualFold(s, "false"):
		return false, nil
	}
	return false, errors.New("not true or false")
}

// Double parses a Kafka double: decimal or exponent notation.
func Double(v string) (float64, error) {
	f, err := strconv.ParseFloat(Trim(v), 64)
	if err != nil {
		return 0, errors.New("not a number")
	}
	return f, nil
}

// FormatDouble prints a Kafka double as Kafka prints it (Java's
// Double.toString): the shortest digits that read back as f, in decimal
// with at least one fractional digit from 10^-3 up to 10^7 (0.9,
// 1000000.0), else in Java's scientific notation (1.0E7,
// 1.7976931348623157E308, 1.0E-4).
func FormatDouble(f float64) string {
	if a := math.Abs(f); a == 0 || (a >= 1e-3 && a < 1e7) || math.IsNaN(f) || math.IsInf(f, 0) {
		switch {
		case math.IsNaN(f):
			return "NaN"
		case math.IsInf(f, 1):
			return "Infinity"
		case math.IsInf(f, -1):
			return "-Infinity"
		}
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'E', -1, 64), "E")
	if !strings.Contains(mant, ".") {
		// One digit: Java prints two, the closest ("4.9E-324" for the
		// least subnormal, whose shortest is 5E-324).
		mant, exp, _ = strings.Cut(strconv.FormatFloat(f, 'E', 1, 64), "E")
	}
	neg := strings.HasPrefix(exp, "-")
	exp = strings.TrimLeft(exp, "+-0")
	if neg {
		exp = "-" + exp
	}
	return mant + "E" + exp
}

// List splits a Kafka list value; an empty value is the empty list.
func List(v string) []string {
	s := Trim(v)
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = Trim(p)
	}
	return parts
}

// CheckBool checks that v is a boolean.
func CheckBool(v string) error { _, err := Bool(v); return err }

// CheckAtLeast returns a check that v is an int (isInt) or a long of at
// least minimum.
func CheckAtLeast(minimum int64, isInt bool) func(string) error {
	return func(v string) error {
		var n int64
		var err error
		if isInt {
			var i int
			i, err = Int(v)
			n = int64(i)
		} else {
			n, err = Long(v)
		}
		if err == nil && n < minimum {
			err = fmt.Errorf("must be at least %d", minimum)
		}
		return err
	}
}

// Durations.

// Unlimited is the time.Duration meaning "no limit" (the log package's
// Unlimited): Kafka's -1 and its Long.MAX_VALUE ms both map to it.
const Unlimited time.Duration = -1

// MaxLong is Java's Long.MAX_VALUE, the way Kafka prints many infinite
// values.
const MaxLong = "9223372036854775807"

// MaxMillis is the largest millisecond count a time.Duration holds.
const MaxMillis = math.MaxInt64 / int64(time.Millisecond)

// Millis parses a millisecond count, a long in Kafka. With unlimited, -1
// and counts beyond time.Duration's range are Unlimited; without, counts
// beyond the range clamp to the largest whole-millisecond Duration. Other
// negative counts are returned for validation to reject.
func Millis(v string, unlimited bool) (time.Duration, error) {
	ms, err := Long(v)
	switch {
	case err != nil:
		return 0, err
	case unlimited && (ms == -1 || ms > MaxMillis):
		return Unlimited, nil
	case ms > MaxMillis:
		return time.Duration(MaxMillis) * time.Millisecond, nil
	case ms < -MaxMillis:
		return 0, errors.New("out of range")
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// IntMillis parses a millisecond count that is an int in Kafka; negative
// counts are returned for validation to reject.
func IntMillis(v string) (time.Duration, error) {
	ms, err := Int(v)
	if err != nil {
		return 0, err
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// FormatMillis prints d in whole milliseconds; with unlimited, Unlimited
// prints as Long.MAX_VALUE.
func FormatMillis(d time.Duration, unlimited bool) string {
	if unlimited && d == Unlimited {
		return MaxLong
	}
	return strconv.FormatInt(d.Milliseconds(), 10)
}

// Property maps.

// SortedKeys returns m's keys, sorted.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// String returns m as sorted "name=value" lines.
func String(m map[string]string) string {
	var b strings.Builder
	for _, k := range SortedKeys(m) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(m[k])
		b.WriteByte('\n')
	}
	return b.String()
}

// Sift goes through the names of m in order and sorts them out: a name in
// used is skipped (the caller applies it); a name ignored accepts is
// returned in unused, and its value checked (a nil check accepts any);
// any other name is unknown. errs holds, in name order, unknown's error
// for each unknown name and invalid's for each failed check.
func Sift[U any](m map[string]string, used map[string]U, ignored func(name string) (check func(string) error, ok bool),
	unknown func(name, value string) error, invalid func(name, value string, err error) error,
) (unused []string, errs []error) {
	for _, k := range SortedKeys(m) {
		if _, ok := used[k]; ok {
			continue
		}
		check, ok := ignored(k)
		if !ok {
			errs = append(errs, unknown(k, m[k]))
			continue
		}
		unused = append(unused, k)
		if check != nil {
			if err := check(m[k]); err != nil {
				errs = append(errs, invalid(k, m[k], err))
			}
		}
	}
	return unused, errs
}

// In returns a lookup of ignored names for Sift that accepts exactly the
// names of checks.
func In(checks map[string]func(string) error) func(string) (func(string) error, bool) {
	return func(name string) (func(string) error, bool) {
		check, ok := checks[name]
		return check, ok
	}
}

// InClient returns a lookup of ignored names for Sift that accepts the
// names of checks and, as a Kafka client's security settings, every ssl.*
// and sasl.* name (with no check).
func InClient(checks map[string]func(string) error) func(string) (func(string) error, bool) {
	return func(name string) (func(string) error, bool) {
		if check, ok := checks[name]; ok {
			return check, true
		}
		return nil, strings.HasPrefix(name, "ssl.") || strings.HasPrefix(name, "sasl.")
	}
}

// Errors.

// ErrorMessage is the message of a package's ConfigError: "<pkg>: unknown
// property <quoted prop>" for an unknown name, else "<pkg>: invalid
// <prop>=<quoted value>: <reason>".
func ErrorMessage(pkg, prop, value, reason string, unknown bool) string {
	if unknown {
		return fmt.Sprintf("%s: unknown property %q", pkg, prop)
	}
	return fmt.Sprintf("%s: invalid %s=%q: %s", pkg, prop, value, reason)
}

// Unknown returns the error maker for Sift's unknown names: newErr's
// error matching the package's ErrUnknownProperty, unknown.
func Unknown(newErr func(prop, value, reason string, sentinel error) error, unknown error) func(name, value string) error {
	return func(name, value string) error { return newErr(name, value, "", unknown) }
}

// Invalid returns the error maker for values that do not parse: newErr's
// invalid-configuration error with err as the reason.
func Invalid(newErr func(prop, value, reason string, sentinel error) error) func(name, value string, err error) error {
	return func(name, value string, err error) error { return newErr(name, value, err.Error(), nil) }
}

// Unwrap returns err, or invalid if err is nil: a ConfigError's Unwrap.
func Unwrap(err, invalid error) error {
	if err == nil {
		return invalid
	}
	return err
}

// FlattenJoin returns the errors inside an errors.Join result (or err
// itself).
func FlattenJoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// SortErrors sorts errs, stably, by key.
func SortErrors(errs []error, key func(error) string) {
	slices.SortStableFunc(errs, func(a, b error) int { return strings.Compare(key(a), key(b)) })
}

// Validator collects a package's configuration errors.
type Validator struct {
	// New makes the package's *ConfigError; a nil sentinel means the
	// package's ErrInvalidConfig.
	New func(prop, value, reason string, sentinel error) error
	// Key, if not nil, orders the errors Err joins (stably); nil keeps
	// the order they were added in.
	Key func(error) string

	errs []error
}

// Add records an invalid prop.
func (v *Validator) Add(prop, value, reason string) { v.AddErr(prop, value, reason, nil) }

// AddErr records an error for prop matching sentinel.
func (v *Validator) AddErr(prop, value, reason string, sentinel error) {
	v.errs = append(v.errs, v.New(prop, value, reason, sentinel))
}

// Append records errors made elsewhere.
func (v *Validator) Append(errs ...error) { v.errs = append(v.errs, errs...) }

// Check records an invalid prop, value printed by fmt.Sprint, unless ok.
func (v *Validator) Check(ok bool, prop string, value any, reason string) {
	if !ok {
		v.Add(prop, fmt.Sprint(value), reason)
	}
}

// IntRange checks an int property: minimum to 2147483647.
func (v *Validator) IntRange(prop string, n, minimum int) {
	v.Check(n >= minimum && n <= math.MaxInt32, prop, n, fmt.Sprintf("must be between %d and %d", minimum, math.MaxInt32))
}

// Millis checks a millisecond property that is a long in Kafka: Unlimited
// (if unlimited), or a whole number of milliseconds of at least minMillis.
// It reports whether d is valid.
func (v *Validator) Millis(prop string, d time.Duration, minMillis int64, unlimited bool) bool {
	return v.millis(prop, d, minMillis, unlimited, false)
}

// IntMillis checks a millisecond property that is an int in Kafka: a whole
// number of milliseconds from minMillis to 2147483647. It reports whether
// d is valid.
func (v *Validator) IntMillis(prop string, d time.Duration, minMillis int64) bool {
	return v.millis(prop, d, minMillis, false, true)
}

func (v *Validator) millis(prop string, d time.Duration, minMillis int64, unlimited, isInt bool) bool {
	switch {
	case unlimited && d == Unlimited:
	case d%time.Millisecond != 0:
		v.Add(prop, d.String(), "not a whole number of milliseconds")
		return false
	case d.Milliseconds() < minMillis:
		reason := fmt.Sprintf("must be at least %d", minMillis)
		if unlimited {
			reason += ", or -1 (unlimited)"
		}
		v.Add(prop, FormatMillis(d, false), reason)
		return false
	case isInt && d.Milliseconds() > math.MaxInt32:
		v.Add(prop, FormatMillis(d, false), fmt.Sprintf("must be at most %d (an int in Kafka)", math.MaxInt32))
		return false
	}
	return true
}

// CompressionLevels checks compression.gzip.level, compression.lz4.level
// and compression.zstd.level against Kafka's ranges (CompressionType.java):
// gzip 1 to 9 or -1 (zlib's default), lz4 1 to 17, zstd -131072 to 22.
func (v *Validator) CompressionLevels(gzip, lz4, zstd int) {
	v.Check(gzip == -1 || (gzip >= 1 && gzip <= 9), "compression.gzip.level", gzip, "must be between 1 and 9 or -1")
	v.Check(lz4 >= 1 && lz4 <= 17, "compression.lz4.level", lz4, "must be between 1 and 17")
	v.Check(zstd >= -131072 && zstd <= 22, "compression.zstd.level", zstd, "must be between -131072 and 22")
}

// Err returns nil, or the errors joined (ordered by Key if set).
func (v *Validator) Err() error {
	if v.Key != nil {
		SortErrors(v.errs, v.Key)
	}
	return errors.Join(v.errs...)
}

// Parsed ends a client's ParseConfig: the errors of parsing, if any,
// sorted by key and joined; else the error of validate (the parsed
// config's Validate), if any; else c and its unused names.
func Parsed[C any](c C, unused []string, errs []error, key func(error) string, validate func() error) (C, []string, error) {
	var zero C
	if len(errs) > 0 {
		SortErrors(errs, key)
		return zero, nil, errors.Join(errs...)
	}
	if err := validate(); err != nil {
		return zero, nil, err
	}
	return c, unused, nil
}

// Properties of a Config type C.

// Prop parses a property into a C and prints it back; Get's false means
// "not printed", and a nil Get never prints.
type Prop[C any] struct {
	Set func(c *C, v string) error
	Get func(c *C) (string, bool)
}

// Apply sets, in order, each property of order that m holds; a value that
// does not parse gives invalid's error, in order.
func Apply[C any](c *C, m map[string]string, table map[string]Prop[C], order []string,
	invalid func(name, value string, err error) error,
) (errs []error) {
	for _, k := range order {
		if v, ok := m[k]; ok {
			if err := table[k].Set(c, v); err != nil {
				errs = append(errs, invalid(k, v, err))
			}
		}
	}
	return errs
}

// Print returns the properties of c that table prints.
func Print[C any](c *C, table map[string]Prop[C]) map[string]string {
	m := make(map[string]string, len(table))
	for name, p := range table {
		if p.Get == nil {
			continue
		}
		if v, ok := p.Get(c); ok {
			m[name] = v
		}
	}
	return m
}

// Func is a property parsed by set and printed by get (nil: never
// printed).
func Func[C any](set func(c *C, v string) error, get func(c *C) string) Prop[C] {
	if get == nil {
		return Prop[C]{Set: set}
	}
	return Prop[C]{set, func(c *C) (string, bool) { return get(c), true }}
}

// IntProp is an int property.
func IntProp[C any](field func(*C) *int) Prop[C] {
	return Prop[C]{
		func(c *C, v string) (err error) { *field(c), err = Int(v); return },
		func(c *C) (string, bool) { return strconv.Itoa(*field(c)), true }}
}

// LongProp is a long property.
func LongProp[C any](field func(*C) *int64) Prop[C] {
	return Prop[C]{
		func(c *C, v string) (err error) { *field(c), err = Long(v); return },
		func(c *C) (string, bool) { return strconv.FormatInt(*field(c), 10), true }}
}

// BoolProp is a boolean property.
func BoolProp[C any](field func(*C) *bool) Prop[C] {
	return Prop[C]{
		func(c *C, v string) (err error) { *field(c), err = Bool(v); return },
		func(c *C) (string, bool) { return strconv.FormatBool(*field(c)), true }}
}

// MillisProp is a millisecond property without Unlimited; with isInt it is
// an int in Kafka, otherwise a long (see [Millis] and [IntMillis]).
func MillisProp[C any](field func(*C) *time.Duration, isInt bool) Prop[C] {
	parse := func(v string) (time.Duration, error) { return Millis(v, false) }
	if isInt {
		parse = IntMillis
	}
	return Prop[C]{
		func(c *C, v string) (err error) { *field(c), err = parse(v); return },
		func(c *C) (string, bool) { return FormatMillis(*field(c), false), true }}
}
