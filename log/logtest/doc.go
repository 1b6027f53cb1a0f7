// Package logtest replaces a Kafka cluster in a Go test: one line opens a log
// directory, on a memory filesystem by default, that the test's t.Cleanup
// closes; topics are created on first use; records go in through a real
// producer and come out through a real consumer; assertions (testify) check
// what was produced, where the partitioner put it and in which order; and
// faults and delays can be injected into chosen partitions.
//
//	func TestPlaceOrder(t *testing.T) {
//		b := logtest.New(t, logtest.Partitions(3), logtest.Topics("order-events"))
//		svc := orders.NewService(b.Producer()) // the code under test publishes to "order-events"
//		require.NoError(t, svc.Place(ctx, "customer-7", 42))
//		b.AssertProduced(t, "order-events",
//			logtest.KV("customer-7", `{"amount":42}`, "type", "OrderPlaced"))
//	}
//
// # What a Broker is
//
// [New] returns a [*Broker]: an open [log.Dir] (the broker of everything
// built on kafkalite), a shared producer made on first use, and the test
// helpers around them. [Broker.Dir] hands the directory to code that makes
// its own producers and consumers, exactly as it would get it in production;
// nothing in the code under test needs to know it runs in a test.
//
// By default the directory lives on kafkalite's memory filesystem, whose fsync
// costs nothing, with one partition for each internal topic
// (offsets.topic.num.partitions and transaction.state.log.num.partitions = 1),
// so that opening a Broker, producing 1,000 records and consuming them
// costs a test little (BenchmarkOpenProduceConsume1000;
// docs/performance.md has the figure). The shared producer does not linger
// (linger.ms 0), so a test that sends a record and waits for it does not
// wait out Kafka's 5 ms default. [OnDisk] puts it in
// t.TempDir() on the operating system's filesystem instead, with real fsyncs.
// Either way the files are those a Kafka broker writes.
//
// # Topics
//
// Every method that names a topic creates it if it does not exist, with the
// partition count of [Partitions] (default 1) and the properties of
// [TopicProperties] (default none: the directory's defaults). [Broker.Topic]
// creates one without doing anything else, for code under test that sends to
// it with its own producer (kafkalite, like a careful production cluster, does
// not create topics implicitly: auto.create.topics.enable is false).
//
// # Producing and consuming
//
// [Broker.Produce] sends records through the shared producer (Kafka's
// defaults: acks=all, idempotent, the default partitioner — murmur2 of the key,
// sticky for records without one) and returns their metadata once they are
// appended. [KV] and [Value] build records. [Broker.ConsumeAll] reads a topic
// from the beginning to its end with a consumer (read_committed: records of
// aborted or open transactions are not returned; [Broker.ConsumeAllUncommitted]
// returns them), ordered by partition, then offset.
//
// # Assertions
//
// [Broker.AssertProduced] checks a topic against the records a test expects,
// given in the order they were sent: each keyed record must be in the partition
// the configured partitioner chooses for its key (murmur2, as Kafka's Java
// producer), each with its key, value and headers, in the expected order
// within each partition, and nothing else. On failure it prints the expected
// and actual contents per partition. [Broker.Expect] reads a topic and returns
// an [Expectation] for finer checks (count, keys, values, one partition, one
// key). [Broker.WaitFor] waits until a topic holds a number of records, for
// code that produces in the background.
//
// # Faults, delays, restarts and crashes
//
// The filesystem is wrapped in the module's fault injector ([vfs.FaultFS]),
// so a test can make the storage misbehave under one partition:
//
//   - [Broker.FailNextAppend] makes the next write to a partition's log fail
//     with a given error. As in Kafka, whose broker takes a log directory
//     offline after an I/O error, the partition then refuses every append
//     (log.ErrStorage, wrapping the error) until the directory is reopened
//     ([Broker.Restart]); producers see the error in their futures and
//     callbacks. Other partitions keep working.
//   - [Broker.Delay] holds every append to a partition until released: the
//     returned [Hold] reports when the first append is waiting, so a test can
//     look at the state in between without sleeping. The producer's one
//     sender goroutine waits with it, so appends to other partitions from that
//     producer wait too.
//   - [Broker.Restart] closes the directory and opens it again, as a process
//     restart does; [Broker.Crash] (memory filesystem only) reopens what a
//     power loss would leave: only what was fsynced.
//
// Producers and consumers that the code under test made itself belong to the
// old directory after a Restart or Crash: close them before, make new ones
// after.
//
// A Broker is safe for concurrent use, except that the methods that fail the
// test must be called from the test's goroutine (as t.FailNow requires).
package logtest
