package props

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestMillis(t *testing.T) {
	huge := time.Duration(MaxMillis) * time.Millisecond
	for _, tc := range []struct {
		v         string
		unlimited bool
		want      time.Duration
		err       bool
	}{
		{" 5 ", false, 5 * time.Millisecond, false},
		{"-1", true, Unlimited, false},
		{"-1", false, -time.Millisecond, false},
		{MaxLong, true, Unlimited, false},
		{MaxLong, false, huge, false},
		{"-9223372036854775807", false, 0, true},
		{"x", false, 0, true},
	} {
		got, err := Millis(tc.v, tc.unlimited)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("Millis(%q, %v) = %v, %v", tc.v, tc.unlimited, got, err)
		}
	}
	if got := FormatMillis(Unlimited, true); got != MaxLong {
		t.Errorf("FormatMillis(Unlimited, true) = %q", got)
	}
}

func TestValidator(t *testing.T) {
	v := Validator{
		New: func(prop, value, reason string, _ error) error { return errors.New(prop + "=" + value + ": " + reason) },
		Key: error.Error,
	}
	if !v.Millis("a", Unlimited, 1, true) || v.Millis("b", time.Microsecond, 0, false) ||
		v.IntMillis("c", 1<<40*time.Millisecond, 0) || v.Millis("d", 0, 1, true) {
		t.Error("Millis/IntMillis validity")
	}
	v.IntRange("a.int", 0, 1)
	for _, valid := range [][3]int{{-1, 1, -131072}, {1, 17, 22}, {9, 9, 3}} {
		v.CompressionLevels(valid[0], valid[1], valid[2])
	}
	v.CompressionLevels(0, 18, 23)
	v.CompressionLevels(10, 0, -131073)
	want := "a.int=0: must be between 1 and 2147483647\n" +
		"b=1µs: not a whole number of milliseconds\n" +
		"c=1099511627776: must be at most 2147483647 (an int in Kafka)\n" +
		"compression.gzip.level=0: must be between 1 and 9 or -1\n" +
		"compression.gzip.level=10: must be between 1 and 9 or -1\n" +
		"compression.lz4.level=0: must be between 1 and 17\n" +
		"compression.lz4.level=18: must be between 1 and 17\n" +
		"compression.zstd.level=-131073: must be between -131072 and 22\n" +
		"compression.zstd.level=23: must be between -131072 and 22\n" +
		"d=0: must be at least 1, or -1 (unlimited)"
	if got := v.Err(); got == nil || got.Error() != want {
		t.Errorf("Err() = %v, want %s", got, want)
	}
}

func TestList(t *testing.T) {
	if got := List(" a , b,"); len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "" {
		t.Errorf("List = %q", got)
	}
	if List(" \t") != nil {
		t.Error("empty list")
	}
}

func TestInClient(t *testing.T) {
	check := func(string) error { return nil }
	ignored := InClient(map[string]func(string) error{"retries": check, "acks.x": nil})
	for name, want := range map[string]bool{"retries": true, "acks.x": true, "ssl.keystore.type": true,
		"sasl.mechanism": true, "ssl": false, "sasl": false, "xssl.a": false, "linger.ms": false} {
		got, ok := ignored(name)
		if ok != want || (name == "retries") != (got != nil) {
			t.Errorf("InClient(%q) = %v, %v; want ok %v", name, got != nil, ok, want)
		}
	}
}

func TestParsed(t *testing.T) {
	key := func(err error) string { return err.Error() }
	errValid := errors.New("invalid")
	c, unused, err := Parsed(7, []string{"a"}, nil, key, func() error { return nil })
	if c != 7 || len(unused) != 1 || err != nil {
		t.Errorf("Parsed = %v, %v, %v", c, unused, err)
	}
	c, unused, err = Parsed(7, []string{"a"}, nil, key, func() error { return errValid })
	if c != 0 || unused != nil || err != errValid {
		t.Errorf("Parsed with a validation error = %v, %v, %v", c, unused, err)
	}
	called := false
	c, unused, err = Parsed(7, []string{"a"}, []error{errors.New("z"), errors.New("b")}, key,
		func() error { called = true; return errValid })
	if c != 0 || unused != nil || err == nil || err.Error() != "b\nz" || called {
		t.Errorf("Parsed with parse errors = %v, %v, %v (validated: %v)", c, unused, err, called)
	}
}

// TestFormatDouble checks Java's Double.toString, as Kafka prints a DOUBLE
// property (log.cleaner.io.max.bytes.per.second's default is
// Double.MAX_VALUE, "1.7976931348623157E308"), and that each prints back
// to its value.
func TestFormatDouble(t *testing.T) {
	for f, want := range map[float64]string{
		0:                           "0.0",
		math.Copysign(0, -1):        "-0.0",
		0.9:                         "0.9",
		1:                           "1.0",
		-2.5:                        "-2.5",
		0.001:                       "0.001",
		0.0001:                      "1.0E-4",
		1.5e-10:                     "1.5E-10",
		1000000:                     "1000000.0",
		9999999.5:                   "9999999.5",
		1e7:                         "1.0E7",
		12345678:                    "1.2345678E7",
		-3e100:                      "-3.0E100",
		math.MaxFloat64:             "1.7976931348623157E308",
		math.SmallestNonzeroFloat64: "4.9E-324",
		math.Inf(1):                 "Infinity",
	} {
		got := FormatDouble(f)
		if got != want {
			t.Errorf("FormatDouble(%v) = %q, want %q", f, got, want)
		}
		if back, err := Double(got); !math.IsInf(f, 0) && (err != nil || back != f || math.Signbit(back) != math.Signbit(f)) {
			t.Errorf("Double(%q) = %v, %v, want %v", got, back, err, f)
		}
	}
}
