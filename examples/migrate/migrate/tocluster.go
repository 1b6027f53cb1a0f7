package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// stopFlushTimeout bounds how long a stopped run (its context ended)
// waits for the records in flight before saving its state. (kgo's record
// delivery timeout cannot bound it: it counts from the record's timestamp,
// which a migration keeps from the source.)
const stopFlushTimeout = 10 * time.Second

// kafkaMinSegmentBytes is Kafka 4's smallest segment.bytes; kafkalite
// allows smaller segments (for tests), which the cluster refuses.
const kafkaMinSegmentBytes = 1 << 20

// toClusterRun is one run of a copy into a cluster.
type toClusterRun struct {
	*migration
	topics []string
	// lat are the topics whose records carry LogAppendTime at the source.
	lat map[string]bool
}

func runToCluster(ctx context.Context, o Options) (*Summary, error) {
	began := time.Now()
	d, err := openSourceDir(ctx, o.Dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	codec, err := producerCodec(o.Compression)
	if err != nil {
		return nil, err
	}
	cl, err := newClient(&o, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(codec), kgo.MaxBufferedBytes(64<<20), kgo.MaxBufferedRecords(1<<20),
		kgo.ProducerBatchMaxBytes(batchMaxBytes(d, o.Topics)))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	r := &toClusterRun{migration: newMigration(o, d, cl), lat: map[string]bool{}}
	err = r.run(ctx)
	r.sum.Elapsed = time.Since(began)
	return &r.sum, err
}

// batchMaxBytes is the producer's largest batch: the smallest
// max.message.bytes of the topics to copy, capped at the producer's
// default (1 MiB), so that no batch is refused as too large by a topic
// whose limit is lower. (The limit is per client, not per topic: a topic
// with records larger than another topic's limit is copied on its own,
// with -topics.)
func batchMaxBytes(d *log.Dir, topics []string) int32 {
	if len(topics) == 0 {
		topics = d.Topics()
	}
	limit := int32(1 << 20)
	for _, t := range topics {
		if desc, err := d.DescribeTopic(t); err == nil && !desc.Internal {
			limit = min(limit, int32(desc.Config.MaxMessageBytes))
		}
	}
	return limit
}

func producerCodec(name string) (kgo.CompressionCodec, error) {
	switch name {
	case "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("%w: compression %q (none, gzip, snappy, lz4 or zstd)", ErrUsage, name)
}

func (r *toClusterRun) run(ctx context.Context) error {
	if err := r.loadState(ctx); err != nil {
		return err
	}
	if err := r.selectTopics(); err != nil {
		return err
	}
	plan, err := r.plan(ctx)
	if err != nil {
		return err
	}
	if r.o.DryRun {
		plan.print(r.o.Out)
		return nil
	}
	if err := r.createTopics(ctx, plan); err != nil {
		return err
	}
	if err := r.startPartitions(ctx); err != nil {
		return err
	}
	if err := r.checkpoint(ctx); err != nil {
		return err
	}
	for _, c := range r.parts {
		if err := r.reconcile(ctx, c); err != nil {
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
	groupErr := r.copyGroups(ctx)
	if err := r.restoreTimestampTypes(ctx); err != nil {
		return err
	}
	r.st.Done = groupErr == nil
	if err := r.checkpoint(ctx); err != nil {
		return err
	}
	return groupErr
}

// selectTopics picks the user topics to copy.
func (r *toClusterRun) selectTopics() error {
	if len(r.o.Topics) == 0 {
		for _, t := range r.dir.Topics() {
			if !log.IsInternalTopic(t) {
				r.topics = append(r.topics, t)
			}
		}
		return nil
	}
	for _, t := range r.o.Topics {
		if _, err := r.dir.DescribeTopic(t); err != nil {
			return fmt.Errorf("%w: topic %q: %v", ErrUsage, t, err)
		}
		r.topics = append(r.topics, t)
	}
	slices.Sort(r.topics)
	r.topics = slices.Compact(r.topics)
	return nil
}

// migrationPlan is what a run will do.
type migrationPlan struct {
	direction Direction
	topics    []topicPlan
	groups    []string
	notes     []string
}

type topicPlan struct {
	name       string
	partitions int32
	create     bool
	configs    map[string]string
	offsets    int64 // offsets left to copy (records, markers and gaps)
}

func (p *migrationPlan) print(w interface{ Write([]byte) (int, error) }) {
	fmt.Fprintf(w, "migrate: plan (%s):\n", p.direction)
	for _, t := range p.topics {
		action := "exists on the target"
		if t.create {
			action = "to create"
		}
		fmt.Fprintf(w, "  topic %s: %d partitions, %s, %d offsets to copy", t.name, t.partitions, action, t.offsets)
		if len(t.configs) > 0 {
			keys := make([]string, 0, len(t.configs))
			for k := range t.configs {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			fmt.Fprintf(w, ", configs:")
			for _, k := range keys {
				fmt.Fprintf(w, " %s=%s", k, t.configs[k])
			}
		}
		fmt.Fprintln(w)
	}
	for _, g := range p.groups {
		fmt.Fprintf(w, "  group %s: offsets to translate and commit\n", g)
	}
	for _, n := range p.notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// plan checks the source and the target and says what is to be done:
// source partitions with open transactions, and topics whose partition
// counts differ, are refused here, before anything is written.
func (r *toClusterRun) plan(ctx context.Context) (*migrationPlan, error) {
	plan := &migrationPlan{direction: ToCluster}
	existing, err := r.adm.ListTopics(ctx, r.topics...)
	if err != nil {
		return nil, fmt.Errorf("migrate: listing the target's topics: %w", err)
	}
	var errs []error
	for _, name := range r.topics {
		desc, err := r.dir.DescribeTopic(name)
		if err != nil {
			return nil, err
		}
		tp := topicPlan{name: name, partitions: desc.Partitions}
		tp.configs, plan.notes = targetConfigs(name, desc, plan.notes)
		if desc.Config.MessageTimestampType == record.LogAppendTime {
			r.lat[name] = true
		}
		for p := range desc.Partitions {
			l, err := r.dir.Partition(name, p)
			if err != nil {
				return nil, err
			}
			for _, pi := range l.Producers() {
				if pi.CurrentTxnStartOffset >= 0 {
					errs = append(errs, fmt.Errorf("%w: %s-%d: producer %d has a transaction open since offset %d; commit or abort it first",
						ErrOpenTransaction, name, p, pi.ProducerID, pi.CurrentTxnStartOffset))
				}
			}
			from := l.LogStartOffset()
			if ps := r.st.Partitions[tpKey(name, p)]; ps != nil {
				from = max(ps.SrcNext, from)
			}
			tp.offsets += max(l.HighWatermark()-from, 0)
		}
		if td, ok := existing[name]; ok && td.Err == nil {
			if n := int32(len(td.Partitions)); n != desc.Partitions {
				errs = append(errs, fmt.Errorf("%w: topic %s has %d partitions here and %d on the target",
					ErrPartitionCount, name, desc.Partitions, n))
			}
		} else {
			tp.create = true
		}
		plan.topics = append(plan.topics, tp)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	groups, err := r.sourceGroups(ctx)
	if err != nil {
		return nil, err
	}
	for g := range groups {
		plan.groups = append(plan.groups, g)
	}
	slices.Sort(plan.groups)
	r.sum.Notes = append(r.sum.Notes, plan.notes...)
	return plan, nil
}

// targetConfigs returns the topic's overrides that the cluster is given:
// all but a segment.bytes below Kafka's minimum, and message.timestamp.type
// LogAppendTime, which is set once the records are copied (a broker would
// otherwise stamp its own time on them).
func targetConfigs(topic string, desc log.TopicDescription, notes []string) (map[string]string, []string) {
	out := map[string]string{}
	for k, v := range desc.Overrides {
		switch k {
		case "segment.bytes":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n < kafkaMinSegmentBytes {
				notes = append(notes, fmt.Sprintf("topic %s: segment.bytes=%s is below Kafka's minimum (%d); the cluster's default is used",
					topic, v, kafkaMinSegmentBytes))
				continue
			}
		case "message.timestamp.type":
			if v == "LogAppendTime" {
				notes = append(notes, fmt.Sprintf("topic %s: its records keep the times the directory appended them, as CreateTime; message.timestamp.type=LogAppendTime is set after the copy",
					topic))
				continue
			}
		}
		out[k] = v
	}
	return out, notes
}

func (r *toClusterRun) createTopics(ctx context.Context, plan *migrationPlan) error {
	for _, t := range plan.topics {
		if !t.create {
			continue
		}
		configs := map[string]*string{}
		for k, v := range t.configs {
			configs[k] = &v
		}
		resp, err := r.adm.CreateTopic(ctx, t.partitions, r.o.ReplicationFactor, configs, t.name)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("migrate: creating topic %s on the target: %w", t.name, err)
		}
		r.o.Logger.Info("migrate: created topic", "topic", t.name, "partitions", t.partitions)
	}
	return nil
}

// startPartitions makes each partition's copier, with its state: a new
// one starts at the source's log start and the target's end; an old one is
// checked against the target (which must still hold what was copied).
func (r *toClusterRun) startPartitions(ctx context.Context) error {
	ends, err := listOffsets(ctx, r.adm.ListEndOffsets, r.dir, r.topics)
	if err != nil {
		return fmt.Errorf("migrate: the target's end offsets: %w", err)
	}
	return forEachPartition(r.dir, r.topics, func(name string, p int32, l *log.Log) error {
		end, ok := ends.Lookup(name, p)
		if !ok || end.Err != nil {
			return fmt.Errorf("migrate: the target's end offset of %s-%d: %v", name, p, end.Err)
		}
		key := tpKey(name, p)
		ps := r.st.Partitions[key]
		if ps == nil {
			ps = &partitionState{Topic: name, Partition: p, TgtStart: end.Offset, TgtNext: end.Offset,
				SrcStart: l.LogStartOffset(), SrcNext: l.LogStartOffset()}
			r.st.Partitions[key] = ps
		} else if end.Offset < ps.TgtNext {
			return fmt.Errorf("%w: %s-%d ends at %d on the target, but the migration copied up to %d there",
				ErrTargetChanged, name, p, end.Offset, ps.TgtNext)
		}
		if start := l.LogStartOffset(); ps.SrcNext < start {
			r.sum.Notes = append(r.sum.Notes, fmt.Sprintf("%s: offsets %d to %d were removed by retention before they were copied",
				key, ps.SrcNext, start))
			ps.SrcNext = start
		}
		r.parts = append(r.parts, &part{ps: ps, l: l, end: l.HighWatermark()})
		return nil
	})
}

// reconcile brings a partition's state up to what the target holds: the
// records past TgtNext were written by an earlier run after its last
// checkpoint (acknowledged, or in flight when it stopped). Each must be the
// next source record; they are mapped as if this run had copied them.
func (r *toClusterRun) reconcile(ctx context.Context, c *part) error {
	ps := c.ps
	ends, err := r.adm.ListEndOffsets(ctx, ps.Topic)
	if err != nil {
		return fmt.Errorf("migrate: the target's end offsets: %w", err)
	}
	end, _ := ends.Lookup(ps.Topic, ps.Partition)
	if end.Offset <= ps.TgtNext {
		return nil
	}
	target := newClusterReader(r.cl, ps.Topic, ps.Partition, ps.TgtNext, end.Offset, false)
	source := newDirReader(c.l, ps.SrcNext, c.end)
	n := 0
	for {
		t, err := target.next(ctx)
		if err != nil {
			return err
		}
		if t == nil {
			break
		}
		s, err := source.next(ctx)
		if err != nil {
			return err
		}
		if s == nil {
			return fmt.Errorf("%w: %s-%d holds a record at target offset %d past everything the source has", ErrTargetChanged,
				ps.Topic, ps.Partition, t.Offset)
		}
		if d := difference(s, t, false); d != "" {
			return fmt.Errorf("%w: %s-%d: the target's record at %d is not the source's record at %d, which the migration would have written there: %s",
				ErrTargetChanged, ps.Topic, ps.Partition, t.Offset, s.Offset, d)
		}
		ps.m.add(s.Offset, t.Offset)
		ps.SrcNext, ps.TgtNext = s.Offset+1, t.Offset+1
		ps.Records++
		ps.Bytes += s.size()
		n++
	}
	if n > 0 {
		r.o.Logger.Info("migrate: found records an earlier run wrote after its checkpoint", "partition", tpKey(ps.Topic, ps.Partition),
			"records", n)
	}
	return nil
}

// copy produces every partition's records past SrcNext, round robin a
// chunk at a time, and checkpoints as the acknowledgements come.
func (r *toClusterRun) copy(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prog := &progress{out: r.o.Out, bar: r.o.ProgressBar, every: r.o.ProgressEvery, sample: r.sample}
	prog.start()
	defer prog.stop()

	stopSaver := r.saveEvery(ctx, cancel)
	readers := make([]*dirReader, len(r.parts))
	for i, c := range r.parts {
		readers[i] = newDirReader(c.l, c.ps.SrcNext, c.end)
	}
	produceErr := r.produceAll(ctx, readers)
	flushCtx, stopFlush := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFlush()
	if ctx.Err() != nil {
		flushCtx, stopFlush = context.WithTimeout(context.WithoutCancel(ctx), stopFlushTimeout)
		defer stopFlush()
	}
	flushErr := r.cl.Flush(flushCtx)
	if err := stopSaver(); err != nil {
		return err
	}
	if err := r.checkpoint(ctx); err != nil {
		return err
	}
	for _, c := range r.parts {
		if c.err != nil {
			return fmt.Errorf("migrate: producing to %s-%d: %w (run again to continue)", c.ps.Topic, c.ps.Partition, c.err)
		}
	}
	if produceErr != nil {
		return produceErr
	}
	return flushErr
}

func (r *toClusterRun) produceAll(ctx context.Context, readers []*dirReader) error {
	live := len(readers)
	for live > 0 {
		live = 0
		for i, rd := range readers {
			if rd == nil {
				continue
			}
			more, err := r.produceChunk(ctx, r.parts[i], rd)
			if err != nil {
				return err
			}
			if !more {
				readers[i] = nil
				continue
			}
			live++
		}
	}
	return nil
}

// produceChunk produces one read's worth of a partition's records and
// reports whether there are more.
func (r *toClusterRun) produceChunk(ctx context.Context, c *part, rd *dirReader) (bool, error) {
	promise := func(kr *kgo.Record, err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		src, size := c.inflight[0], c.sizes[0]
		c.inflight, c.sizes = c.inflight[1:], c.sizes[1:]
		if err != nil || c.err != nil {
			if c.err == nil {
				c.err = err
			}
			return
		}
		ps := c.ps
		ps.m.add(src, kr.Offset)
		ps.SrcNext, ps.TgtNext = src+1, kr.Offset+1
		ps.Records++
		ps.Bytes += size
		c.records++
		c.bytes += size
	}
	for {
		s, err := rd.next(ctx)
		if err != nil {
			return false, err
		}
		if s == nil {
			return false, nil
		}
		kr := &kgo.Record{Topic: c.ps.Topic, Partition: c.ps.Partition, Key: s.Key, Value: s.Value,
			Timestamp: time.UnixMilli(s.Timestamp)}
		if len(s.Headers) > 0 {
			kr.Headers = make([]kgo.RecordHeader, len(s.Headers))
			for i, h := range s.Headers {
				kr.Headers[i] = kgo.RecordHeader{Key: string(h.Key), Value: h.Value}
			}
		}
		r.mu.Lock()
		failed := c.err
		c.inflight = append(c.inflight, s.Offset)
		c.sizes = append(c.sizes, s.size())
		r.mu.Unlock()
		if failed != nil {
			return false, nil
		}
		r.cl.Produce(ctx, kr, promise)
		if rd.i == len(rd.buf) {
			// The end of this read: on to the next partition.
			return true, nil
		}
	}
}

// sourceGroups returns the groups to copy, with their committed offsets on
// the copied topics.
func (r *toClusterRun) sourceGroups(ctx context.Context) (map[string]map[log.TopicPartition]log.OffsetAndMetadata, error) {
	out := map[string]map[log.TopicPartition]log.OffsetAndMetadata{}
	if r.o.NoGroups {
		return out, nil
	}
	ids := r.o.Groups
	if len(ids) == 0 {
		var err error
		if ids, err = consumer.ListGroups(ctx, r.dir); err != nil {
			return nil, err
		}
	}
	for _, g := range ids {
		desc, err := consumer.DescribeGroup(ctx, r.dir, g)
		if err != nil {
			return nil, fmt.Errorf("migrate: group %s: %w", g, err)
		}
		offs := map[log.TopicPartition]log.OffsetAndMetadata{}
		for tp, om := range desc.Offsets {
			if slices.Contains(r.topics, tp.Topic) {
				offs[tp] = om
			}
		}
		if len(offs) > 0 {
			out[g] = offs
		} else if len(r.o.Groups) > 0 {
			return nil, fmt.Errorf("%w: group %s has no offsets on the copied topics", ErrUsage, g)
		}
	}
	return out, nil
}

// copyGroups commits each group's translated offsets on the target. A
// group with members there is refused; one whose offsets moved since the
// migration last committed them is left alone (its consumers run on the
// cluster now).
func (r *toClusterRun) copyGroups(ctx context.Context) error {
	groups, err := r.sourceGroups(ctx)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(groups))
	for g := range groups {
		ids = append(ids, g)
	}
	slices.Sort(ids)
	if r.st.Groups == nil {
		r.st.Groups = map[string]map[string]int64{}
	}
	var errs []error
	for _, g := range ids {
		gs, err := r.copyGroup(ctx, g, groups[g])
		if err != nil {
			errs = append(errs, err)
		}
		r.sum.Groups = append(r.sum.Groups, gs)
	}
	return errors.Join(errs...)
}

func (r *toClusterRun) copyGroup(ctx context.Context, g string, offs map[log.TopicPartition]log.OffsetAndMetadata) (GroupSummary, error) {
	gs := GroupSummary{Group: g}
	var described kadm.DescribedGroups
	err := retryCoordinator(ctx, func() (err error) {
		described, err = r.adm.DescribeGroups(ctx, g)
		if err == nil {
			err = described.Error()
		}
		return err
	})
	if errors.Is(err, kerr.GroupIDNotFound) {
		err = nil // a group the cluster does not know yet
	}
	if err != nil {
		return gs, fmt.Errorf("migrate: describing group %s on the target: %w", g, err)
	}
	if dg, ok := described[g]; ok && dg.Err == nil && len(dg.Members) > 0 {
		gs.Skipped = fmt.Sprintf("%d members on the target (state %s)", len(dg.Members), dg.State)
		return gs, fmt.Errorf("%w: group %s has %d members on the target (state %s); stop its consumers and run again",
			ErrGroupNotEmpty, g, len(dg.Members), dg.State)
	}
	if prev, ok := r.st.Groups[g]; ok {
		var current kadm.OffsetResponses
		err := retryCoordinator(ctx, func() (err error) {
			current, err = r.adm.FetchOffsets(ctx, g)
			return err
		})
		if err != nil {
			return gs, fmt.Errorf("migrate: fetching group %s's offsets on the target: %w", g, err)
		}
		for key, at := range prev {
			var found int64 = -1
			current.Each(func(o kadm.OffsetResponse) {
				if tpKey(o.Topic, o.Partition) == key && o.Err == nil {
					found = o.At
				}
			})
			if found != at {
				gs.Skipped = fmt.Sprintf("its offset of %s is %d on the target, not the %d the migration committed: it moved on there", key, found, at)
				return gs, nil
			}
		}
	}
	commit := kadm.Offsets{}
	committed := map[string]int64{}
	r.mu.Lock()
	for tp, om := range offs {
		ps := r.st.Partitions[tpKey(tp.Topic, tp.Partition)]
		if ps == nil {
			continue
		}
		at := ps.m.translate(om.Offset, ps.TgtNext)
		commit.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: at, LeaderEpoch: -1, Metadata: om.Metadata})
		committed[tpKey(tp.Topic, tp.Partition)] = at
	}
	r.mu.Unlock()
	err = retryCoordinator(ctx, func() error {
		resp, err := r.adm.CommitOffsets(ctx, g, commit)
		if err == nil {
			err = resp.Error()
		}
		return err
	})
	if err != nil {
		return gs, fmt.Errorf("migrate: committing group %s's offsets on the target: %w", g, err)
	}
	r.st.Groups[g] = committed
	gs.Committed = len(committed)
	r.o.Logger.Info("migrate: committed a group's offsets", "group", g, "partitions", len(committed))
	return gs, nil
}

// restoreTimestampTypes sets message.timestamp.type=LogAppendTime on the
// target topics that had it, now that their records are copied.
func (r *toClusterRun) restoreTimestampTypes(ctx context.Context) error {
	for topic := range r.lat {
		v := "LogAppendTime"
		resp, err := r.adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "message.timestamp.type", Value: &v}}, topic)
		if err == nil {
			for _, rr := range resp {
				if rr.Err != nil {
					err = rr.Err
				}
			}
		}
		if err != nil {
			return fmt.Errorf("migrate: setting message.timestamp.type on %s: %w", topic, err)
		}
	}
	return nil
}

// retryCoordinator runs a group request until it does not fail for want
// of a coordinator: a cluster just started, or whose __consumer_offsets is
// being created or loaded, answers so for a while.
func retryCoordinator(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(time.Minute)
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || time.Now().After(deadline) || !(errors.Is(err, kerr.CoordinatorNotAvailable) ||
			errors.Is(err, kerr.CoordinatorLoadInProgress) || errors.Is(err, kerr.NotCoordinator)) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(time.Duration(attempt)*50*time.Millisecond, time.Second)):
		}
	}
}
