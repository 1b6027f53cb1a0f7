package migrate

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Run migrates as the options say and returns what it did. A dry run
// prints the plan to Out and returns an empty summary.
func Run(ctx context.Context, o Options) (*Summary, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if o.Direction == FromCluster {
		return runFromCluster(ctx, o)
	}
	return runToCluster(ctx, o)
}

// openSourceDir opens an existing kafkalite directory (never creating
// one).
func openSourceDir(ctx context.Context, path string) (*log.Dir, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: the kafkalite directory: %v", ErrUsage, err)
	}
	return log.Open(ctx, path, log.DefaultConfig())
}

func newClient(o *Options, extra ...kgo.Opt) (*kgo.Client, error) {
	opts := append([]kgo.Opt{kgo.SeedBrokers(o.Brokers...)}, extra...)
	opts = append(opts, o.ClientOpts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return cl, nil
}

// migration is what a run in either direction shares: the directory,
// the client, the state and the partitions' progress.
type migration struct {
	o     Options
	dir   *log.Dir
	cl    *kgo.Client
	adm   *kadm.Client
	store stateStore
	st    *state
	sum   Summary

	// mu guards the partitions' progress, which the producer's promises
	// (to a cluster) or the fetching goroutines (from one) advance.
	mu    sync.Mutex
	parts []*part
}

// part is one partition's copy in this run.
type part struct {
	ps  *partitionState
	l   *log.Log // the directory's partition
	end int64    // the source's end (last stable offset) when the run began
	// records and bytes were copied by this run; gaps counts the times the
	// source's retention passed the copy.
	records, bytes, gaps int64

	// To a cluster: the source offsets produced and not yet acknowledged
	// (with their sizes), in order, as a partition's promises come; err is
	// the first failure, after which the partition's progress stops.
	inflight, sizes []int64
	err             error
}

func newMigration(o Options, d *log.Dir, cl *kgo.Client) *migration {
	return &migration{o: o, dir: d, cl: cl, adm: kadm.NewClient(cl), store: stateStore{dir: o.StateDir},
		sum: Summary{Direction: o.Direction}}
}

// loadState reads the saved state, or starts one; a state is used only
// between the directory and the cluster it was made for.
func (m *migration) loadState(ctx context.Context) error {
	md, err := m.adm.BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("migrate: reaching the cluster: %w", err)
	}
	if m.st, err = m.store.load(); err != nil {
		return err
	}
	dir := m.o.Direction.String()
	if m.st == nil {
		m.st = &state{Version: stateVersion, Direction: dir, ClusterID: md.Cluster, DirClusterID: m.dir.ClusterID(),
			Partitions: map[string]*partitionState{}}
		return nil
	}
	if m.st.Direction != dir || m.st.ClusterID != md.Cluster || m.st.DirClusterID != m.dir.ClusterID() {
		return fmt.Errorf("%w: %s belongs to a migration %s between directory %s and cluster %s; this one is %s between %s and %s",
			ErrState, m.store.dir, m.st.Direction, m.st.DirClusterID, m.st.ClusterID, dir, m.dir.ClusterID(), md.Cluster)
	}
	return nil
}

// checkpoint saves the state. Copying into the directory, it first makes
// what was appended durable: a saved state never claims records that a
// crash of the machine could lose. (Copying to a cluster, what the state
// claims was acknowledged with acks=all.)
func (m *migration) checkpoint(ctx context.Context) error {
	m.mu.Lock()
	snap := m.st.snapshot()
	m.mu.Unlock()
	if m.o.Direction == FromCluster {
		for _, p := range m.parts {
			if err := p.l.Flush(ctx); err != nil {
				return err
			}
		}
	}
	if err := m.store.save(snap); err != nil {
		return err
	}
	m.mu.Lock()
	m.st.commitSnapshot(snap)
	m.mu.Unlock()
	return nil
}

// saveEvery checkpoints every CheckpointEvery in a goroutine until the
// returned stop is called; a failed checkpoint cancels the copy and is
// what stop returns.
func (m *migration) saveEvery(ctx context.Context, cancel context.CancelFunc) (stop func() error) {
	var saverErr error
	done := make(chan struct{})
	quit := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(m.o.CheckpointEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if err := m.checkpoint(ctx); err != nil {
					saverErr = err
					cancel()
					return
				}
			}
		}
	}()
	return func() error {
		close(quit)
		<-done
		return saverErr
	}
}

// sample is the progress's: records and bytes copied by this run, and
// offsets left.
func (m *migration) sample() (records, bytes, left int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.parts {
		records += p.records
		bytes += p.bytes
		left += max(p.end-p.ps.SrcNext, 0)
	}
	return records, bytes, left
}

func (m *migration) fillSummary() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sum.Partitions = m.sum.Partitions[:0]
	m.sum.Records, m.sum.Bytes = 0, 0
	for _, p := range m.parts {
		ps := p.ps
		m.sum.Partitions = append(m.sum.Partitions, PartitionSummary{Topic: ps.Topic, Partition: ps.Partition,
			Records: p.records, Bytes: p.bytes, TotalRecords: ps.Records,
			SrcStart: ps.SrcStart, SrcNext: ps.SrcNext, TgtStart: ps.TgtStart, TgtNext: ps.TgtNext,
			Identical: ps.m.identical(), MapFile: m.store.mapPath(tpKey(ps.Topic, ps.Partition))})
		m.sum.Records += p.records
		m.sum.Bytes += p.bytes
		if p.gaps > 0 {
			m.sum.Notes = append(m.sum.Notes, fmt.Sprintf("%s-%d: the source's retention removed records before they were read",
				ps.Topic, ps.Partition))
		}
	}
}

// forEachPartition calls fn with each partition of the topics in the
// directory, in order, and stops at the first error.
func forEachPartition(d *log.Dir, topics []string, fn func(topic string, p int32, l *log.Log) error) error {
	for _, name := range topics {
		desc, err := d.DescribeTopic(name)
		if err != nil {
			return err
		}
		for p := range desc.Partitions {
			l, err := d.Partition(name, p)
			if err != nil {
				return err
			}
			if err := fn(name, p, l); err != nil {
				return err
			}
		}
	}
	return nil
}

// listOffsets lists the offsets of the topics' partitions, asking again
// while some are missing or not yet led: a topic just created takes a
// moment to reach every broker's metadata.
func listOffsets(ctx context.Context, list func(context.Context, ...string) (kadm.ListedOffsets, error), d *log.Dir, topics []string) (kadm.ListedOffsets, error) {
	deadline := time.Now().Add(30 * time.Second)
	for attempt := 0; ; attempt++ {
		listed, err := list(ctx, topics...)
		complete := err == nil
		if err == nil {
			for _, name := range topics {
				desc, derr := d.DescribeTopic(name)
				if derr != nil {
					return nil, derr
				}
				for p := range desc.Partitions {
					if o, ok := listed.Lookup(name, p); !ok || o.Err != nil {
						complete = false
					}
				}
			}
		}
		if complete || time.Now().After(deadline) {
			return listed, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(time.Duration(attempt+1)*20*time.Millisecond, 500*time.Millisecond)):
		}
	}
}
