package props

import (
	"errors"
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
	want := "a.int=0: must be between 1 and 2147483647\n" +
		"b=1µs: not a whole number of milliseconds\n" +
		"c=1099511627776: must be at most 2147483647 (an int in Kafka)\n" +
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
