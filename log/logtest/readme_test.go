package logtest_test

import (
	"context"
	"syscall"
	"testing"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/logtest"
	"github.com/stretchr/testify/require"
)

// TestPlaceOrder is a sample of docs/guide.md ("Test with it instead of
// a Kafka cluster"), kept here so that it compiles and passes
// (examples/readme checks that the guide shows this text): OrderService
// is in example_test.go.
//
// sample begin: docs/guide.md
func TestPlaceOrder(t *testing.T) {
	ctx := context.Background()
	b := logtest.New(t, logtest.Partitions(3), logtest.Topics("order-events")) // memory FS, closed by t.Cleanup
	svc := &OrderService{events: b.Producer()}                                 // or producer.New(b.Dir(), cfg)
	require.NoError(t, svc.PlaceOrder(ctx, "alice", 1200))
	b.AssertProduced(t, "order-events", // partition by murmur2, order per partition, headers
		logtest.KV("alice", `{"cents":1200,"customer":"alice"}`, "type", "OrderPlaced"))

	b.FailNextAppend("order-events", 0, syscall.ENOSPC) // alice's partition: the next append fails
	err := svc.PlaceOrder(ctx, "alice", 99)
	require.ErrorIs(t, err, log.ErrStorage)
	require.ErrorIs(t, err, syscall.ENOSPC)
	b.Restart() // the partition is back, as after a broker restart
	svc = &OrderService{events: b.Producer()}

	h := b.Delay("order-events", 0) // a slow disk: appends wait until Release
	done := make(chan error)
	go func() { done <- svc.PlaceOrder(ctx, "alice", 99) }()
	<-h.Waiting()
	h.Release()
	require.NoError(t, <-done)

	b.Crash() // reopen on what a power loss leaves: acks=all records survive
	b.Expect(t, "order-events").Key("alice").Len(2)
}

// sample end
