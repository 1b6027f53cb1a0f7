package groupmember

import (
	"encoding/hex"
	"strings"
	"testing"
)

// TestNewID: the client id, a dash and 32 hex digits, as Kafka makes a
// member id; two ids for one client differ.
func TestNewID(t *testing.T) {
	a, b := NewID("billing-1"), NewID("billing-1")
	if a == b {
		t.Fatalf("two ids are the same: %s", a)
	}
	for _, id := range []string{a, b} {
		rest, ok := strings.CutPrefix(id, "billing-1-")
		if _, err := hex.DecodeString(rest); !ok || len(rest) != 32 || err != nil {
			t.Fatalf("%q is not the client id, a dash and 32 hex digits", id)
		}
	}
}
