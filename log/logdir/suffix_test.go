package logdir

import (
	"testing"

	"github.com/kafkalite/kafkalite/internal/snapshot"
)

// TestSnapshotSuffix: the suffix said here is the one the log writes.
func TestSnapshotSuffix(t *testing.T) {
	if ProducerSnapshotSuffix != snapshot.Suffix {
		t.Fatalf("ProducerSnapshotSuffix %q, the log writes %q", ProducerSnapshotSuffix, snapshot.Suffix)
	}
}
