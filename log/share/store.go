package share

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/sharecodec"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// StateTopic is Kafka's internal topic of share-partition states, written
// by its share coordinator.
const StateTopic = "__share_group_state"

// stateTopicPartitions is the partition count of StateTopic when kafkalite
// creates it: Kafka's share.coordinator.state.topic.num.partitions default.
const stateTopicPartitions = 50

// stateKey names a share-partition's state: its group, topic (by name and
// by id: the stored key holds the id) and partition.
type stateKey struct {
	group     string
	topic     string
	topicID   string // URL-safe base64, as log.TopicDescription.ID
	partition int32
}

// String names the share-partition as Kafka's logs do: group:topic-partition.
func (k stateKey) String() string { return fmt.Sprintf("%s:%s-%d", k.group, k.topic, k.partition) }

// idKey is a stored state's key: what Kafka's ShareSnapshotKey holds.
type idKey struct {
	group     string
	topicID   [16]byte
	partition int32
}

func (k stateKey) id() (idKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(k.topicID)
	if err != nil || len(b) != 16 {
		return idKey{}, fmt.Errorf("share: topic %s has no valid topic id (%q)", k.topic, k.topicID)
	}
	return idKey{group: k.group, topicID: [16]byte(b), partition: k.partition}, nil
}

// coordinatorKey is Kafka's SharePartitionKey.asCoordinatorKey:
// "group:topicId:partition", which picks the state's partition of
// StateTopic.
func (k stateKey) coordinatorKey() string {
	return fmt.Sprintf("%s:%s:%d", k.group, k.topicID, k.partition)
}

// partitionFor is Kafka's ShareCoordinatorService.partitionFor: the
// absolute value of the Java hash code of the coordinator key, modulo
// the partition count (Kafka's Utils.abs maps MinInt32 to 0).
func partitionFor(coordinatorKey string, n int) int {
	var h int32
	for _, c := range utf16Units(coordinatorKey) {
		h = 31*h + int32(c)
	}
	if h == -1<<31 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return int(h) % n
}

// utf16Units returns s as Java's String holds it, for its hash code.
func utf16Units(s string) []uint16 {
	var u []uint16
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			u = append(u, uint16(0xD800+(r>>10)), uint16(0xDC00+(r&0x3FF)))
			continue
		}
		u = append(u, uint16(r))
	}
	return u
}

// stateStore keeps the share-partitions' states in StateTopic: Kafka's
// share coordinator, reduced to what one node needs. Every write is a
// ShareSnapshot record of the whole state (Kafka writes ShareUpdate
// records between snapshots to save bytes; its share coordinator and
// kafkalite read either), appended and fsynced before it returns. Loading
// replays snapshots, updates and tombstones; the latest state of each key
// stays in memory.
type stateStore struct {
	now        func() time.Time
	partitions []*log.Log

	mu     sync.Mutex // protects states
	states map[idKey]sharecodec.Snapshot
}

func openStore(ctx context.Context, d *log.Dir) (*stateStore, error) {
	parts, err := d.InternalTopic(access.Internal{}, ctx, StateTopic, stateTopicPartitions, nil)
	if err != nil {
		return nil, err
	}
	s := &stateStore{now: d.Config().Now, partitions: parts, states: map[idKey]sharecodec.Snapshot{}}
	if s.now == nil {
		s.now = time.Now
	}
	for _, l := range parts {
		if err := s.loadPartition(l); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// loadPartition replays one partition of StateTopic.
func (s *stateStore) loadPartition(l *log.Log) error {
	var rr log.RecordReader
	for off := l.LogStartOffset(); off < l.HighWatermark(); {
		next, err := rr.ReadRecords(l, off, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
			return s.apply(r.Key, r.Value)
		})
		if err != nil {
			return fmt.Errorf("share: loading %s-%d: %w", StateTopic, l.Partition(), err)
		}
		if next <= off {
			break
		}
		off = next
	}
	return nil
}

// apply replays one stored record.
func (s *stateStore) apply(kb, vb []byte) error {
	k, err := sharecodec.DecodeKey(kb)
	if errors.Is(err, sharecodec.ErrUnknownType) {
		return nil // a record type of a later Kafka: skipped, as Kafka skips it
	}
	if err != nil {
		return err
	}
	key := idKey{group: k.GroupID, topicID: k.TopicID, partition: k.Partition}
	if vb == nil {
		delete(s.states, key)
		return nil
	}
	switch k.Type {
	case sharecodec.TypeShareSnapshot:
		v, err := sharecodec.DecodeSnapshot(vb)
		if err != nil {
			return err
		}
		s.states[key] = v
	case sharecodec.TypeShareUpdate:
		v, err := sharecodec.DecodeUpdate(vb)
		if err != nil {
			return err
		}
		if st, ok := s.states[key]; ok {
			s.states[key] = applyUpdate(st, v)
		}
	}
	return nil
}

// applyUpdate lays an update over a snapshot, as Kafka's share coordinator
// merges them: the update's start offset if it has one, its state batches
// over the snapshot's, those before the start offset dropped.
func applyUpdate(st sharecodec.Snapshot, u sharecodec.Update) sharecodec.Snapshot {
	if u.StartOffset >= 0 {
		st.StartOffset = u.StartOffset
	}
	st.LeaderEpoch = u.LeaderEpoch
	st.StateBatches = mergeBatches(st.StateBatches, u.StateBatches, st.StartOffset)
	return st
}

// mergeBatches returns base with over laid on top (over wins where they
// overlap), without the offsets before start, in offset order.
func mergeBatches(base, over []sharecodec.StateBatch, start int64) []sharecodec.StateBatch {
	var out []sharecodec.StateBatch
	add := func(b sharecodec.StateBatch) {
		b.FirstOffset = max(b.FirstOffset, start)
		if b.FirstOffset > b.LastOffset {
			return
		}
		out = append(out, b)
	}
	for _, b := range base {
		// Cut b around every batch of over.
		cur := b
		for _, o := range over {
			if o.LastOffset < cur.FirstOffset || o.FirstOffset > cur.LastOffset {
				continue
			}
			if o.FirstOffset > cur.FirstOffset {
				left := cur
				left.LastOffset = o.FirstOffset - 1
				add(left)
			}
			cur.FirstOffset = o.LastOffset + 1
			if cur.FirstOffset > cur.LastOffset {
				break
			}
		}
		if cur.FirstOffset <= cur.LastOffset {
			add(cur)
		}
	}
	for _, o := range over {
		add(o)
	}
	sortBatches(out)
	return out
}

// get returns the stored state of key.
func (s *stateStore) get(key stateKey) (sharecodec.Snapshot, bool) {
	k, err := key.id()
	if err != nil {
		return sharecodec.Snapshot{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.states[k]
	return st, ok
}

// write stores st as key's state: a ShareSnapshot record, fsynced.
func (s *stateStore) write(ctx context.Context, key stateKey, st sharecodec.Snapshot) error {
	k, err := key.id()
	if err != nil {
		return err
	}
	kb, err := sharecodec.AppendKey(nil, sharecodec.Key{Type: sharecodec.TypeShareSnapshot, GroupID: k.group, TopicID: k.topicID, Partition: k.partition})
	if err != nil {
		return err
	}
	vb, err := sharecodec.AppendSnapshot(nil, st)
	if err != nil {
		return err
	}
	if err := s.append(ctx, key, [][]byte{kb}, [][]byte{vb}); err != nil {
		return err
	}
	s.mu.Lock()
	s.states[k] = st
	s.mu.Unlock()
	return nil
}

// remove deletes key's state: a tombstone of its snapshot key, as Kafka's
// share coordinator deletes a state (update keys get none: an update
// before the tombstone is replayed before it, and dropped with it).
func (s *stateStore) remove(ctx context.Context, key stateKey) error {
	k, err := key.id()
	if err != nil {
		return err
	}
	var keys, values [][]byte
	for _, t := range []sharecodec.RecordType{sharecodec.TypeShareSnapshot} {
		kb, err := sharecodec.AppendKey(nil, sharecodec.Key{Type: t, GroupID: k.group, TopicID: k.topicID, Partition: k.partition})
		if err != nil {
			return err
		}
		keys, values = append(keys, kb), append(values, nil)
	}
	if err := s.append(ctx, key, keys, values); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.states, k)
	s.mu.Unlock()
	return nil
}

// append writes one batch of records to key's partition of StateTopic and
// waits for its fsync.
func (s *stateStore) append(ctx context.Context, key stateKey, keys, values [][]byte) error {
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1}, record.DefaultLevel)
	now := s.now().UnixMilli()
	for i := range keys {
		if err := b.Append(now, keys[i], values[i], nil); err != nil {
			return err
		}
	}
	batch, err := b.Build()
	if err != nil {
		return err
	}
	l := s.partitions[partitionFor(key.coordinatorKey(), len(s.partitions))]
	res, err := l.AppendInternal(access.Internal{}, batch)
	if err != nil {
		return err
	}
	return l.Sync(ctx, res.LastOffset+1)
}

// keys returns the stored states of group, by topic id.
func (s *stateStore) groupStates(group string) map[idKey]sharecodec.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[idKey]sharecodec.Snapshot{}
	for k, st := range s.states {
		if k.group == group {
			out[k] = st
		}
	}
	return out
}
