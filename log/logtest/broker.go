package logtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/stretchr/testify/require"
)

// memRoot is the directory's path on the memory filesystem.
const memRoot = "/kafka"

// T is what a Broker needs of a test: *testing.T, *testing.B and
// *testing.F satisfy it (they are testing.TB). Failures go through
// Errorf and FailNow, as testify's require reports them.
type T interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
	FailNow()
	TempDir() string
}

// Option configures a Broker.
type Option func(*options)

type options struct {
	partitions int32
	topicProps map[string]string
	onDisk     bool
	dirConfig  func(*log.Config)
	prodConfig func(*producer.Config)
	timeout    time.Duration
	initTopics []string
}

// Partitions sets the partition count of topics created on first use
// (default 1, Kafka's num.partitions).
func Partitions(n int32) Option { return func(o *options) { o.partitions = n } }

// TopicProperties sets the Kafka topic properties of topics created on first
// use (default none: the directory's defaults), for example
// {"cleanup.policy": "compact"}.
func TopicProperties(props map[string]string) Option {
	return func(o *options) { o.topicProps = props }
}

// Topics creates these topics when the Broker opens.
func Topics(names ...string) Option {
	return func(o *options) { o.initTopics = append(o.initTopics, names...) }
}

// OnDisk puts the directory in t.TempDir() on the operating system's
// filesystem, with real fsyncs, instead of the memory filesystem. Crash is
// then unavailable.
func OnDisk() Option { return func(o *options) { o.onDisk = true } }

// DirConfig lets fn change the log directory's configuration, after
// logtest's settings (one partition per internal topic, the filesystem).
// Setting FS is not allowed.
func DirConfig(fn func(*log.Config)) Option { return func(o *options) { o.dirConfig = fn } }

// ProducerConfig lets fn change the configuration of the shared producer
// (Broker.Producer, Broker.Produce), which starts from
// producer.DefaultConfig() with linger.ms 0: a test that sends a record and
// waits for it should not wait out Kafka's 5 ms linger (set Linger here to
// test batching). A Partitioner set here is the one Broker.AssertProduced
// asks where a key belongs.
func ProducerConfig(fn func(*producer.Config)) Option {
	return func(o *options) { o.prodConfig = fn }
}

// Timeout bounds each helper's wait (producing, consuming, WaitFor); default
// 10 s. A helper that runs out fails the test.
func Timeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// Broker is an open log directory with the helpers of a test. Make one with
// New. See the package documentation.
type Broker struct {
	t     T
	opts  options
	path  string
	fault *vfs.FaultFS

	holdMu sync.Mutex       // protects holds
	holds  map[string]*Hold // by partition directory, with a trailing separator

	mu   sync.Mutex // protects the following fields
	mem  *vfs.MemFS // nil on disk
	dir  *log.Dir
	prod *producer.Producer
	pcfg producer.Config
	done bool
}

// New opens a Broker for the test and registers its Close with t.Cleanup.
// It fails the test if the directory cannot be opened.
func New(t T, opts ...Option) *Broker {
	t.Helper()
	b := &Broker{t: t, opts: options{partitions: 1, timeout: 10 * time.Second}, holds: map[string]*Hold{}}
	for _, o := range opts {
		o(&b.opts)
	}
	require.Positive(t, b.opts.partitions, "logtest: Partitions")
	var inner vfs.FS
	if b.opts.onDisk {
		b.path, inner = t.TempDir(), vfs.Default
	} else {
		b.mem = vfs.NewMem()
		b.path, inner = memRoot, b.mem
	}
	b.fault = vfs.NewFaultFS(inner)
	b.fault.OnOp(b.onOp)
	b.pcfg = producer.DefaultConfig()
	b.pcfg.Linger = 0
	if b.opts.prodConfig != nil {
		b.opts.prodConfig(&b.pcfg)
	}
	t.Cleanup(func() {
		if err := withoutInjected(b.Close()); err != nil {
			t.Errorf("logtest: closing the broker: %v", err)
		}
	})
	b.mu.Lock()
	err := b.openLocked()
	b.mu.Unlock()
	require.NoError(t, err, "logtest: opening the log directory")
	for _, name := range b.opts.initTopics {
		b.Topic(name)
	}
	return b
}

// dirConfig is the configuration the directory opens with.
func (b *Broker) dirConfig() log.Config {
	cfg := log.DefaultConfig()
	cfg.OffsetsTopicNumPartitions, cfg.TransactionStateNumPartitions = 1, 1
	if b.opts.dirConfig != nil {
		b.opts.dirConfig(&cfg)
	}
	cfg.FS = b.fault
	return cfg
}

// openLocked opens the directory. The caller must hold b.mu.
func (b *Broker) openLocked() error {
	ctx, cancel := b.context()
	defer cancel()
	d, err := log.Open(ctx, b.path, b.dirConfig())
	if err != nil {
		return err
	}
	b.dir = d
	return nil
}

// closeLocked closes the shared producer and the directory, releasing every
// hold first so that nothing waits on one. The caller must hold b.mu.
func (b *Broker) closeLocked() error {
	b.releaseHolds()
	var errs []error
	if b.prod != nil {
		ctx, cancel := b.context()
		errs = append(errs, b.prod.Close(ctx))
		cancel()
		b.prod = nil
	}
	if b.dir != nil {
		errs = append(errs, b.dir.Close())
		b.dir = nil
	}
	return errors.Join(errs...)
}

// Close closes the shared producer and the directory. t.Cleanup calls it
// (and ignores errors from faults the test injected); calling it earlier (a
// benchmark loop) is fine, and a second call returns nil. Helpers fail the
// test after Close.
func (b *Broker) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil
	}
	b.done = true
	return b.closeLocked()
}

// Dir returns the open log directory, to hand to the code under test
// (producer.New, consumer.New). It changes at Restart and Crash.
func (b *Broker) Dir() *log.Dir {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dir
}

// Path returns the directory's path: in t.TempDir() with OnDisk, a path on
// the memory filesystem otherwise.
func (b *Broker) Path() string { return b.path }

// Producer returns the shared producer, made on first use with the
// ProducerConfig option applied, and closed by Close, Restart and Crash.
func (b *Broker) Producer() *producer.Producer {
	b.t.Helper()
	p, err := b.producer()
	require.NoError(b.t, err, "logtest: creating the producer")
	return p
}

func (b *Broker) producer() (*producer.Producer, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil, log.ErrClosed
	}
	if b.prod == nil {
		p, err := producer.New(b.dir, b.pcfg)
		if err != nil {
			return nil, err
		}
		b.prod = p
	}
	return b.prod, nil
}

// Topic creates the topic if it does not exist, with the Partitions and
// TopicProperties options, and returns its name.
func (b *Broker) Topic(name string) string {
	b.t.Helper()
	require.NoError(b.t, b.ensureTopic(name), "logtest: creating topic %q", name)
	return name
}

func (b *Broker) ensureTopic(name string) error {
	d := b.Dir()
	if d == nil {
		return log.ErrClosed
	}
	if _, err := d.DescribeTopic(name); err == nil {
		return nil
	}
	ctx, cancel := b.context()
	defer cancel()
	_, err := d.CreateTopic(ctx, name, b.opts.partitions, b.opts.topicProps)
	if errors.Is(err, log.ErrTopicExists) {
		return nil
	}
	return err
}

// Restart closes the shared producer and the directory and opens the
// directory again, as a process restart does: everything appended is there
// (on the memory filesystem too). Holds are released first. Close the
// producers and consumers the code under test made before calling it.
// Errors of closing that come from faults the test injected (a partition
// FailNextAppend broke) are expected and ignored; others fail the test.
func (b *Broker) Restart() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	require.False(b.t, b.done, "logtest: Restart after Close")
	require.NoError(b.t, withoutInjected(b.closeLocked()), "logtest: closing the log directory")
	require.NoError(b.t, b.openLocked(), "logtest: reopening the log directory")
}

// Crash simulates a power loss: the directory is reopened on what the memory
// filesystem held durably at this moment (only fsynced data and directory
// entries), and recovers as after a crash. The old directory, the shared
// producer and whatever else used them are closed against the discarded
// filesystem. Only for the memory filesystem (not OnDisk).
//
// Recovery reads the indexes a crash left untrimmed at their preallocated
// size (segment.index.bytes, Kafka's 10 MiB); under the race detector that
// takes a noticeable time per partition. Tests that crash often lower it:
//
//	logtest.DirConfig(func(c *log.Config) { c.DefaultTopic.SegmentIndexBytes = 64 << 10 })
func (b *Broker) Crash() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	require.False(b.t, b.done, "logtest: Crash after Close")
	require.NotNil(b.t, b.mem, "logtest: Crash needs the memory filesystem (not OnDisk)")
	survivor := b.mem.CrashClone()
	// Closing writes to the old filesystem, which is thrown away: its
	// errors say nothing about the crash.
	_ = b.closeLocked()
	b.mem = survivor
	b.fault = vfs.NewFaultFS(survivor)
	b.fault.OnOp(b.onOp)
	require.NoError(b.t, b.openLocked(), "logtest: reopening the log directory after the crash")
}

// withoutInjected returns err without the errors that come from injected
// faults (matching vfs.ErrInjected), looking into joined errors; nil if
// nothing else is left.
func withoutInjected(err error) error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var rest []error
		for _, e := range joined.Unwrap() {
			rest = append(rest, withoutInjected(e))
		}
		return errors.Join(rest...)
	}
	if errors.Is(err, vfs.ErrInjected) {
		return nil
	}
	return err
}

// context returns a context bounded by the Timeout option.
func (b *Broker) context() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), b.opts.timeout)
}

// partitionCount returns a topic's partition count, creating the topic.
func (b *Broker) partitionCount(topic string) (int32, error) {
	if err := b.ensureTopic(topic); err != nil {
		return 0, err
	}
	desc, err := b.Dir().DescribeTopic(topic)
	if err != nil {
		return 0, err
	}
	return desc.Partitions, nil
}

func (b *Broker) String() string { return fmt.Sprintf("logtest.Broker(%s)", b.path) }
