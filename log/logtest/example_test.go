package logtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/kafkalite/kafkalite/log/logtest"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
)

// OrderService is the code under test: it publishes an event for every order
// placed, keyed by customer so that a customer's events stay in order.
type OrderService struct {
	events *producer.Producer
}

// PlaceOrder publishes an OrderPlaced event and returns once it is durable.
func (s *OrderService) PlaceOrder(ctx context.Context, customer string, cents int) error {
	value, err := json.Marshal(map[string]any{"customer": customer, "cents": cents})
	if err != nil {
		return err
	}
	fut, err := s.events.Send(ctx, &producer.Record{
		Topic:   "order-events",
		Key:     []byte(customer),
		Value:   value,
		Headers: []record.Header{{Key: []byte("type"), Value: []byte("OrderPlaced")}},
	}, nil)
	if err != nil {
		return err
	}
	_, err = fut.Wait(ctx)
	return err
}

// Example_orderService tests OrderService without a Kafka cluster: the
// Broker's directory stands in for it, and the assertions read what the
// service really produced. In a test, pass t to logtest.New and the
// assertions; this example uses a stand-in (exampleT, below) because
// examples have no t.
func Example_orderService() {
	t := &exampleT{}
	defer t.finish()

	b := logtest.New(t, logtest.Partitions(3), logtest.Topics("order-events"))
	svc := &OrderService{events: b.Producer()}
	ctx := context.Background()
	for _, o := range []struct {
		customer string
		cents    int
	}{{"alice", 1200}, {"dave", 350}, {"alice", 99}} {
		if err := svc.PlaceOrder(ctx, o.customer, o.cents); err != nil {
			fmt.Println(err)
			return
		}
	}

	// Exactly these events, each in the partition murmur2 gives its key,
	// in order per partition.
	b.AssertProduced(t, "order-events",
		logtest.KV("alice", `{"cents":1200,"customer":"alice"}`, "type", "OrderPlaced"),
		logtest.KV("dave", `{"cents":350,"customer":"dave"}`, "type", "OrderPlaced"),
		logtest.KV("alice", `{"cents":99,"customer":"alice"}`, "type", "OrderPlaced"),
	)
	alice := b.Expect(t, "order-events").Key("alice").Len(2).Header("type", "OrderPlaced")
	for _, r := range alice.Records() {
		fmt.Printf("partition %d offset %d: %s\n", r.Partition, r.Offset, r.Value)
	}
	fmt.Println("failed:", t.failed)
	// Output:
	// partition 0 offset 0: {"cents":1200,"customer":"alice"}
	// partition 0 offset 1: {"cents":99,"customer":"alice"}
	// failed: false
}

// exampleT stands in for *testing.T outside a test: it prints failures and
// runs the cleanups at finish.
type exampleT struct {
	cleanups []func()
	failed   bool
}

type failNow struct{}

func (t *exampleT) Helper()          {}
func (t *exampleT) Cleanup(f func()) { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Errorf(format string, args ...any) {
	t.failed = true
	fmt.Printf(format+"\n", args...)
}
func (t *exampleT) FailNow() { panic(failNow{}) }

func (t *exampleT) TempDir() string {
	dir, err := os.MkdirTemp("", "logtest-example-")
	if err != nil {
		panic(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (t *exampleT) finish() {
	if r := recover(); r != nil {
		if _, ok := r.(failNow); !ok {
			panic(r)
		}
	}
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
