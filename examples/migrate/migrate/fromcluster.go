package migrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fromClusterWorkers is how many partitions are copied at once.
const fromClusterWorkers = 4

// fromClusterRun is one run of a copy from a cluster into a directory.
type fromClusterRun struct {
	*migration
}

func runFromCluster(ctx context.Context, o Options) (*Summary, error) {
	began := time.Now()
	path := o.Dir
	if _, err := os.Stat(path); o.DryRun && errors.Is(err, os.ErrNotExist) {
		// A dry run creates nothing: it plans against an empty directory.
		tmp, err := os.MkdirTemp("", "migrate-dry-run-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		path = tmp
	}
	d, err := log.Open(ctx, path, log.DefaultConfig())
	if err != nil {
		return nil, err
	}
	defer d.Close()
	cl, err := newClient(&o)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	r := &fromClusterRun{migration: newMigration(o, d, cl)}
	err = r.run(ctx)
	r.sum.Elapsed = time.Since(began)
	return &r.sum, err
}

func (r *fromClusterRun) run(ctx context.Context) error {
	if err := r.loadState(ctx); err != nil {
		return err
	}
	topics := slices.Clone(r.o.Topics)
	slices.Sort(topics)
	topics = slices.Compact(topics)
	plan, err := r.plan(ctx, topics)
	if err != nil {
		return err
	}
	if r.o.DryRun {
		plan.print(r.o.Out)
		return nil
	}
	for _, t := range plan.topics {
		if !t.create {
			continue
		}
		if _, err := r.dir.CreateTopic(ctx, t.name, t.partitions, t.configs); err != nil {
			return fmt.Errorf("migrate: creating topic %s in the directory: %w", t.name, err)
		}
		r.o.Logger.Info("migrate: created topic", "topic", t.name, "partitions", t.partitions)
	}
	if err := r.startPartitions(ctx, topics); err != nil {
		return err
	}
	for _, f := range r.parts {
		if err := r.reconcile(ctx, f); err != nil {
			return err
		}
	}
	if err := r.checkpoint(ctx); err != nil {
		return err
	}
	copyErr := r.copy(ctx)
	r.fillSummary()
	if copyErr != nil {
		return copyErr
	}
	r.st.Done = true
	return r.checkpoint(ctx)
}

// plan reads the cluster's topics and configs and checks them against the
// directory's.
func (r *fromClusterRun) plan(ctx context.Context, topics []string) (*migrationPlan, error) {
	plan := &migrationPlan{direction: FromCluster}
	listed, err := r.adm.ListTopics(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("migrate: listing the cluster's topics: %w", err)
	}
	configs, err := r.adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("migrate: describing the cluster's topics: %w", err)
	}
	starts, err := r.adm.ListStartOffsets(ctx, topics...)
	if err == nil && !r.o.Since.IsZero() {
		starts, err = r.adm.ListOffsetsAfterMilli(ctx, r.o.Since.UnixMilli(), topics...)
	}
	if err != nil {
		return nil, fmt.Errorf("migrate: the cluster's start offsets: %w", err)
	}
	ends, err := r.adm.ListCommittedOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("migrate: the cluster's last stable offsets: %w", err)
	}
	var errs []error
	for _, name := range topics {
		td, ok := listed[name]
		if !ok || td.Err != nil {
			errs = append(errs, fmt.Errorf("%w: topic %s is not on the cluster", ErrUsage, name))
			continue
		}
		tp := topicPlan{name: name, partitions: int32(len(td.Partitions)), configs: map[string]string{}}
		if rc, err := configs.On(name, nil); err == nil {
			for _, c := range rc.Configs {
				if c.Source != kmsg.ConfigSourceDynamicTopicConfig || c.Value == nil {
					continue
				}
				if _, unknown, err := log.ParseTopicConfig(map[string]string{c.Key: *c.Value}); err != nil || len(unknown) > 0 {
					plan.notes = append(plan.notes, fmt.Sprintf("topic %s: %s=%s is not a kafkalite topic config; left out", name, c.Key, *c.Value))
					continue
				}
				tp.configs[c.Key] = *c.Value
			}
		}
		if desc, err := r.dir.DescribeTopic(name); err == nil {
			if desc.Partitions != tp.partitions {
				errs = append(errs, fmt.Errorf("%w: topic %s has %d partitions on the cluster and %d here",
					ErrPartitionCount, name, tp.partitions, desc.Partitions))
			}
		} else {
			tp.create = true
		}
		for p := range tp.partitions {
			start, _ := starts.Lookup(name, p)
			end, _ := ends.Lookup(name, p)
			from := start.Offset
			if ps := r.st.Partitions[tpKey(name, p)]; ps != nil {
				from = max(from, ps.SrcNext)
			}
			tp.offsets += max(end.Offset-from, 0)
		}
		plan.topics = append(plan.topics, tp)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	r.sum.Notes = append(r.sum.Notes, plan.notes...)
	return plan, nil
}

// startPartitions makes each partition's fetcher with its state. A new
// partition starts at the cluster's log start (or the first offset at
// Since) and keeps its offsets if the local partition ends at or before
// that; otherwise its records go after the local end, through an offset
// map.
func (r *fromClusterRun) startPartitions(ctx context.Context, topics []string) error {
	starts, err := listOffsets(ctx, r.adm.ListStartOffsets, r.dir, topics)
	if err != nil {
		return fmt.Errorf("migrate: the cluster's start offsets: %w", err)
	}
	if !r.o.Since.IsZero() {
		after := func(ctx context.Context, topics ...string) (kadm.ListedOffsets, error) {
			return r.adm.ListOffsetsAfterMilli(ctx, r.o.Since.UnixMilli(), topics...)
		}
		if starts, err = listOffsets(ctx, after, r.dir, topics); err != nil {
			return fmt.Errorf("migrate: the cluster's offsets at %s: %w", r.o.Since.Format(time.RFC3339), err)
		}
	}
	ends, err := listOffsets(ctx, r.adm.ListCommittedOffsets, r.dir, topics)
	if err != nil {
		return fmt.Errorf("migrate: the cluster's last stable offsets: %w", err)
	}
	highs, err := listOffsets(ctx, r.adm.ListEndOffsets, r.dir, topics)
	if err != nil {
		return fmt.Errorf("migrate: the cluster's end offsets: %w", err)
	}
	return forEachPartition(r.dir, topics, func(name string, p int32, l *log.Log) error {
		start, ok1 := starts.Lookup(name, p)
		end, ok2 := ends.Lookup(name, p)
		if !ok1 || !ok2 || start.Err != nil || end.Err != nil {
			return fmt.Errorf("migrate: the cluster's offsets of %s-%d: %v", name, p, errors.Join(start.Err, end.Err))
		}
		if hw, ok := highs.Lookup(name, p); ok && hw.Err == nil && hw.Offset > end.Offset {
			r.sum.Notes = append(r.sum.Notes, fmt.Sprintf("%s-%d: a transaction is open on the cluster; copied up to its start, offset %d",
				name, p, end.Offset))
		}
		key := tpKey(name, p)
		ps := r.st.Partitions[key]
		if ps == nil {
			from := start.Offset
			if from < 0 {
				from = end.Offset
			}
			leo := l.LogEndOffset()
			ps = &partitionState{Topic: name, Partition: p, SrcStart: from, SrcNext: from,
				TgtStart: leo, TgtNext: leo, Replica: leo <= from}
			r.st.Partitions[key] = ps
		}
		r.parts = append(r.parts, &part{ps: ps, l: l, end: end.Offset})
		return nil
	})
}

// reconcile brings a partition's state up to what the directory holds: the
// records past TgtNext were appended by an earlier run after its last
// checkpoint. With offsets kept, each is the source record of its offset;
// otherwise each must be the next source record.
func (r *fromClusterRun) reconcile(ctx context.Context, f *part) error {
	ps := f.ps
	leo := f.l.LogEndOffset()
	switch {
	case leo < ps.TgtNext:
		return fmt.Errorf("%w: %s-%d ends at %d in the directory, but the migration copied up to %d there",
			ErrTargetChanged, ps.Topic, ps.Partition, leo, ps.TgtNext)
	case leo == ps.TgtNext:
		return nil
	}
	local := newDirReader(f.l, ps.TgtNext, leo)
	var source recordReader
	if !ps.Replica {
		source = newClusterReader(r.cl, ps.Topic, ps.Partition, ps.SrcNext, f.end, true)
	}
	for {
		t, err := local.next(ctx)
		if err != nil {
			return err
		}
		if t == nil {
			break
		}
		src := t.Offset
		if source != nil {
			s, err := source.next(ctx)
			if err != nil {
				return err
			}
			if s == nil {
				return fmt.Errorf("%w: %s-%d holds a record at offset %d past everything the cluster has", ErrTargetChanged,
					ps.Topic, ps.Partition, t.Offset)
			}
			if d := difference(s, t, true); d != "" {
				return fmt.Errorf("%w: %s-%d: the record at %d is not the cluster's record at %d: %s",
					ErrTargetChanged, ps.Topic, ps.Partition, t.Offset, s.Offset, d)
			}
			src = s.Offset
		}
		ps.m.add(src, t.Offset)
		ps.SrcNext, ps.TgtNext = src+1, t.Offset+1
		ps.Records++
		ps.Bytes += t.size()
	}
	ps.TgtNext = leo
	return nil
}

// copy runs the partitions' fetchers, a few at a time, checkpointing every
// CheckpointEvery.
func (r *fromClusterRun) copy(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prog := &progress{out: r.o.Out, bar: r.o.ProgressBar, every: r.o.ProgressEvery, sample: r.sample}
	prog.start()
	defer prog.stop()

	work := make(chan *part)
	errs := make(chan error, len(r.parts)+1)
	var wg sync.WaitGroup
	for range min(fromClusterWorkers, len(r.parts)) {
		wg.Go(func() {
			for f := range work {
				if err := r.copyPartition(ctx, f); err != nil {
					errs <- err
					cancel()
				}
			}
		})
	}
	stopSaver := r.saveEvery(ctx, cancel)
feed:
	for _, f := range r.parts {
		select {
		case work <- f:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	if err := stopSaver(); err != nil {
		all = append(all, err)
	}
	if err := r.checkpoint(context.WithoutCancel(ctx)); err != nil {
		all = append(all, err)
	}
	if len(all) == 0 {
		if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
			all = append(all, err)
		}
	}
	return errors.Join(all...)
}

// copyPartition copies one partition from SrcNext to the end the run
// began with, a source batch at a time.
func (r *fromClusterRun) copyPartition(ctx context.Context, f *part) error {
	ps := f.ps
	if ps.SrcNext >= f.end {
		return nil
	}
	src := newClusterReader(r.cl, ps.Topic, ps.Partition, ps.SrcNext, f.end, true)
	emptyBefore := f.l.LogStartOffset() == f.l.LogEndOffset()
	var batch []rec
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := r.appendBatch(f, batch, emptyBefore)
		emptyBefore = false
		batch = batch[:0]
		return err
	}
	for {
		s, err := src.next(ctx)
		if err != nil {
			return err
		}
		if s == nil {
			break
		}
		if len(batch) > 0 && batch[0].Batch != s.Batch {
			if err := flush(); err != nil {
				return err
			}
		}
		batch = append(batch, *s)
	}
	if err := flush(); err != nil {
		return err
	}
	r.mu.Lock()
	f.gaps += src.Gaps
	r.mu.Unlock()
	return nil
}

// appendBatch writes the records of one source batch as one batch of the
// same codec and timestamp type, by a replica append: at their own offsets
// when the partition keeps them, else after the local end.
func (r *fromClusterRun) appendBatch(f *part, recs []rec, emptyBefore bool) error {
	ps := f.ps
	first := recs[0]
	attrs := record.Attributes(0).WithCompression(first.Codec)
	var maxTs int64 = -1
	for i := range recs {
		maxTs = max(maxTs, recs[i].Timestamp)
	}
	if first.LogAppendTime {
		attrs = attrs.WithTimestampType(record.LogAppendTime)
	}
	r.mu.Lock()
	base := ps.TgtNext
	r.mu.Unlock()
	if ps.Replica {
		base = first.Offset
	}
	h := record.BatchHeader{BaseOffset: base, PartitionLeaderEpoch: f.l.LeaderEpoch(), Magic: 2, Attributes: attrs,
		MaxTimestamp: maxTs, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	out := make([]record.Record, len(recs))
	for i := range recs {
		delta := int64(i)
		if ps.Replica {
			delta = recs[i].Offset - base
		}
		out[i] = record.Record{Timestamp: recs[i].Timestamp, Key: recs[i].Key, Value: recs[i].Value,
			Headers: recs[i].Headers, OffsetDelta: int32(delta)}
	}
	b, err := record.AppendBatch(nil, h, record.DefaultLevel, out)
	if err != nil {
		return fmt.Errorf("migrate: encoding %s-%d's batch at %d: %w", ps.Topic, ps.Partition, first.Offset, err)
	}
	if _, err := f.l.AppendAsReplica(b); err != nil {
		return fmt.Errorf("migrate: appending to %s-%d at %d: %w", ps.Topic, ps.Partition, base, err)
	}
	if ps.Replica && emptyBefore && f.l.LogStartOffset() < base {
		// A partition that was empty starts where the cluster's copy does.
		if _, err := f.l.DeleteRecordsBefore(base); err != nil {
			return fmt.Errorf("migrate: moving %s-%d's log start to %d: %w", ps.Topic, ps.Partition, base, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range recs {
		tgt := base + int64(out[i].OffsetDelta)
		ps.m.add(recs[i].Offset, tgt)
		sz := recs[i].size()
		ps.Records++
		ps.Bytes += sz
		f.records++
		f.bytes += sz
	}
	last := recs[len(recs)-1].Offset
	ps.SrcNext = last + 1
	ps.TgtNext = base + int64(out[len(out)-1].OffsetDelta) + 1
	return nil
}
