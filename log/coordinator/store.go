package coordinator

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/groupcodec"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// partitionOf returns the __consumer_offsets partition of a group.
func (c *GroupCoordinator) partitionOf(groupID string) *log.Log {
	return c.partitions[groupcodec.PartitionFor(groupID, int32(len(c.partitions)))]
}

// appendRecords writes one batch of coordinator records (key, value; nil
// value = tombstone) to the group's partition; durable waits for the fsync.
// A nil h writes a plain batch (producer id -1); a transactional offset
// commit passes its producer's header. It returns the batch's base offset.
// Every batch has base sequence 0, plain ones too, as Kafka's
// CoordinatorRuntime builds them (Log.AppendInternal checks no sequence).
func (c *GroupCoordinator) appendRecords(ctx context.Context, groupID string, h *record.BatchHeader, keys, values [][]byte, durable bool) (int64, error) {
	l, res, err := c.appendBatch(groupID, h, keys, values)
	if err != nil {
		return 0, err
	}
	if durable {
		return res.BaseOffset, l.Sync(ctx, res.LastOffset+1)
	}
	return res.BaseOffset, nil
}

// appendBatch is appendRecords without the wait for the fsync: it returns
// the partition and where the batch went.
func (c *GroupCoordinator) appendBatch(groupID string, h *record.BatchHeader, keys, values [][]byte) (*log.Log, log.AppendResult, error) {
	var b record.Builder
	hdr := record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: 0}
	if h != nil {
		hdr = *h
	}
	b.Reset(hdr, record.DefaultLevel)
	now := c.now().UnixMilli()
	for i := range keys {
		if err := b.Append(now, keys[i], values[i], nil); err != nil {
			return nil, log.AppendResult{}, err
		}
	}
	batch, err := b.Build()
	if err != nil {
		return nil, log.AppendResult{}, err
	}
	l := c.partitionOf(groupID)
	res, err := l.AppendInternal(access.Internal{}, batch)
	return l, res, err
}

// appendOffsets writes offset commit records, durably, in a batch with
// header h (nil for a plain commit). It returns the batch's base offset.
func (c *GroupCoordinator) appendOffsets(ctx context.Context, groupID string, offsets map[TopicPartition]OffsetAndMetadata, h *record.BatchHeader) (int64, error) {
	var keys, values [][]byte
	for tp, om := range offsets {
		k, err := groupcodec.AppendOffsetCommitKey(nil, groupcodec.OffsetCommitKey{Group: groupID, Topic: tp.Topic, Partition: tp.Partition})
		if err != nil {
			return 0, err
		}
		v := groupcodec.NewOffsetCommitValue(om.Offset, om.Metadata, om.CommitTimestamp)
		v.LeaderEpoch = om.LeaderEpoch
		vb, err := groupcodec.AppendOffsetCommitValue(nil, v)
		if err != nil {
			return 0, err
		}
		keys, values = append(keys, k), append(values, vb)
	}
	return c.appendRecords(ctx, groupID, h, keys, values, true)
}

// appendTombstonesLocked deletes offsets (and, with group, the group's
// metadata) as Kafka does: records with the same key and a null value,
// which the cleaner of the compacted topic removes. It appends them
// while the caller holds c.mu, so that they come before any record of a
// group created again under the same id, and returns the partition and
// the offset to sync to (the caller syncs without the lock). Nothing to
// delete returns the partition and 0. REQUIRES c.mu held, and the group's
// commit lock: no commit of it is between its append and its effect.
func (c *GroupCoordinator) appendTombstonesLocked(g *group, tps []TopicPartition, group bool) (*log.Log, int64, error) {
	groupID := g.id
	var keys, values [][]byte
	for _, tp := range tps {
		k, err := groupcodec.AppendOffsetCommitKey(nil, groupcodec.OffsetCommitKey{Group: groupID, Topic: tp.Topic, Partition: tp.Partition})
		if err != nil {
			return nil, 0, err
		}
		keys, values = append(keys, k), append(values, nil)
	}
	switch {
	case group && g.cg != nil:
		// A consumer group's own records (its members have none left).
		for _, k := range consumerGroupTombstones(groupID) {
			keys, values = append(keys, k), append(values, nil)
		}
	case group && g.sg != nil:
		for _, k := range shareGroupTombstones(groupID) {
			keys, values = append(keys, k), append(values, nil)
		}
	case group:
		k, err := groupcodec.AppendGroupMetadataKey(nil, groupcodec.GroupMetadataKey{Group: groupID})
		if err != nil {
			return nil, 0, err
		}
		keys, values = append(keys, k), append(values, nil)
	}
	if len(keys) == 0 {
		return c.partitionOf(groupID), 0, nil
	}
	l, res, err := c.appendBatch(groupID, nil, keys, values)
	return l, res.LastOffset + 1, err
}

// persistGroupLocked writes the group's metadata (members, generation,
// assignment) in Kafka's GroupMetadataValue schema. It is appended without
// waiting for an fsync: after a crash the members are gone anyway, and the
// coordinator starts a new generation above the last one it finds.
func (c *GroupCoordinator) persistGroupLocked(g *group) {
	k, err := groupcodec.AppendGroupMetadataKey(nil, groupcodec.GroupMetadataKey{Group: g.id})
	if err != nil {
		c.logger.Warn("encoding group metadata failed", "group", g.id, "err", err)
		return
	}
	v := groupcodec.GroupMetadataValue{ProtocolType: g.protocolType, Generation: g.generation,
		CurrentStateTimestamp: c.now().UnixMilli()}
	if v.ProtocolType == "" {
		v.ProtocolType = consumerProtocolType
	}
	if g.protocol != "" {
		p, leader := g.protocol, g.leader
		v.Protocol, v.Leader = &p, &leader
	}
	for _, id := range g.sortedMemberIDs() {
		m := g.members[id]
		mm := groupcodec.MemberMetadata{MemberID: m.id, ClientID: m.clientID, ClientHost: m.clientHost,
			RebalanceTimeout: int32(m.rebalanceTimeout.Milliseconds()), SessionTimeout: int32(m.sessionTimeout.Milliseconds()),
			Subscription: m.metadata(g.protocol), Assignment: m.assignmentOut()}
		if m.instanceID != "" {
			inst := m.instanceID
			mm.GroupInstanceID = &inst
		}
		v.Members = append(v.Members, mm)
	}
	vb, err := groupcodec.AppendGroupMetadataValue(nil, v)
	if err == nil {
		_, err = c.appendRecords(context.Background(), g.id, nil, [][]byte{k}, [][]byte{vb}, false)
	}
	if err != nil && !errors.Is(err, log.ErrClosed) {
		c.logger.Warn("writing group metadata failed", "group", g.id, "err", err)
	}
}

// groupTPs groups partitions by topic, in the consumer protocol's shape.
func groupTPs(tps []TopicPartition) []groupcodec.TopicPartitions {
	var out []groupcodec.TopicPartitions
	for _, tp := range tps {
		if n := len(out); n > 0 && out[n-1].Topic == tp.Topic {
			out[n-1].Partitions = append(out[n-1].Partitions, tp.Partition)
			continue
		}
		out = append(out, groupcodec.TopicPartitions{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
	}
	return out
}

// load reads every partition of __consumer_offsets: offset commits and
// their tombstones, and each group's last metadata, whose network members
// it restores (see restoreLocked). Offsets committed in a transaction
// (transactional batches) stay pending until their producer's COMMIT
// marker, which applies them, or ABORT marker, which drops them; those
// still pending at the end wait for the transaction coordinator, which
// completes or aborts their transaction.
func (c *GroupCoordinator) load() error {
	r := record.NewReader(record.ReaderOptions{SkipCRC: true})
	var buf []byte
	for i, l := range c.partitions {
		for off := l.LogStartOffset(); off < l.LogEndOffset(); {
			res, err := l.Read(off, 1<<20, true)
			if err == nil && res.Slice == nil {
				break
			}
			next := off
			if err == nil {
				buf, err = res.Slice.Batches(buf, func(h *record.BatchHeader, batch []byte) error {
					next = max(next, h.NextOffset())
					return c.loadBatch(l, int32(i), r, h, batch, off)
				})
				res.Release()
			}
			if err != nil {
				return fmt.Errorf("coordinator: loading %s-%d: %w", l.Topic(), l.Partition(), err)
			}
			if next <= off {
				break
			}
			off = next
		}
	}
	for _, g := range c.groups {
		c.restoreLocked(g)
	}
	return nil
}

// loadBatch replays one batch of partition p: records at or after from,
// or a transaction marker.
func (c *GroupCoordinator) loadBatch(l *log.Log, p int32, r *record.Reader, h *record.BatchHeader, batch []byte, from int64) error {
	if h.LastOffset() < from {
		return nil
	}
	if err := r.Reset(batch); err != nil {
		return err
	}
	if h.Attributes.IsControl() {
		if !h.Attributes.IsTransactional() || !r.Next() {
			return r.Err() // an empty (cleaned) marker, or another control batch
		}
		rec := r.Record()
		m, err := record.ParseEndTxnMarker(rec.Key, rec.Value)
		if err != nil {
			c.logger.Warn("skipping an unreadable transaction marker", "partition", p, "offset", h.BaseOffset, "err", err)
			return nil
		}
		c.completeTxnLocked(p, h.ProducerID, m.Type == record.ControlCommit)
		return nil
	}
	txn := h.Attributes.IsTransactional() && h.ProducerID >= 0
	for r.Next() {
		rec := r.Record()
		if rec.Offset < from {
			continue
		}
		c.loadRecord(l, p, rec, h, txn)
	}
	return r.Err()
}

func (c *GroupCoordinator) loadRecord(l *log.Log, p int32, r *record.Record, h *record.BatchHeader, txn bool) {
	if len(r.Key) < 2 {
		c.logger.Warn("skipping a __consumer_offsets record without a key type", "partition", l.Partition(), "offset", r.Offset)
		return
	}
	switch groupcodec.RecordType(binary.BigEndian.Uint16(r.Key)) {
	case groupcodec.TypeLegacyOffsetCommit, groupcodec.TypeOffsetCommit:
		k, err := groupcodec.ParseOffsetCommitKey(r.Key)
		if err != nil {
			c.logger.Warn("skipping an unreadable offset commit key", "offset", r.Offset, "err", err)
			return
		}
		tp := TopicPartition{Topic: k.Topic, Partition: k.Partition}
		if r.Value == nil {
			g := c.groupLocked(k.Group)
			delete(g.offsets, tp)
			delete(g.offsetPos, tp)
			return
		}
		v, err := groupcodec.ParseOffsetCommitValue(r.Value)
		if err != nil {
			c.logger.Warn("skipping an unreadable offset commit value", "offset", r.Offset, "err", err)
			return
		}
		om := OffsetAndMetadata{Offset: v.Offset, LeaderEpoch: v.LeaderEpoch, Metadata: v.Metadata, CommitTimestamp: v.CommitTimestamp}
		if txn {
			c.addPendingLocked(p, h.ProducerID, k.Group, tp, om, h.BaseOffset)
			return
		}
		c.groupLocked(k.Group).setOffset(tp, om, h.BaseOffset)
	case groupcodec.TypeGroupMetadata:
		k, err := groupcodec.ParseGroupMetadataKey(r.Key)
		if err != nil {
			c.logger.Warn("skipping an unreadable group metadata key", "offset", r.Offset, "err", err)
			return
		}
		if r.Value == nil {
			// The classic group's metadata goes; its offsets have their
			// own tombstones (before it, when the group was deleted; not
			// at all when it became a consumer group).
			if g, ok := c.groups[k.Group]; ok {
				g.stored = nil
				if len(g.offsets) == 0 && g.cg == nil {
					delete(c.groups, k.Group)
				}
			}
			return
		}
		v, err := groupcodec.ParseGroupMetadataValue(r.Value)
		if err != nil {
			c.logger.Warn("skipping an unreadable group metadata value", "offset", r.Offset, "err", err)
			return
		}
		g := c.groupLocked(k.Group)
		g.generation = max(g.generation, v.Generation)
		g.stored = &v
	case groupcodecTypeGroup, groupcodec.TypeConsumerGroupPartitionMetadata, groupcodecTypeMember,
		groupcodecTypeTargetMeta, groupcodecTypeTargetMember, groupcodecTypeCurrent, groupcodec.TypeConsumerGroupRegularExpression:
		if err := c.loadConsumerRecord(r.Key, r.Value); err != nil {
			c.logger.Warn("skipping an unreadable consumer group record", "offset", r.Offset, "err", err)
		}
	case groupcodec.TypeShareGroupMemberMetadata, groupcodec.TypeShareGroupMetadata, groupcodec.TypeShareGroupTargetAssignmentMetadata,
		groupcodec.TypeShareGroupTargetAssignmentMember, groupcodec.TypeShareGroupCurrentMemberAssignment:
		if err := c.loadShareRecord(r.Key, r.Value); err != nil {
			c.logger.Warn("skipping an unreadable share group record", "offset", r.Offset, "err", err)
		}
	default:
		// Other coordinator record types (type 15, the share-partitions
		// a share group initialized, and streams groups') are not used
		// by kafkalite; Kafka skips unknown ones too.
	}
}

// inProcessHost is the client host written for an in-process member: it
// has no address, and the coordinator that loads the group again does not
// restore it.
const inProcessHost = "in-process"

// restoreLocked brings back the members of a group's last stored metadata
// as Kafka's coordinator does when it loads a group
// (GroupMetadataManager.onLoaded): the same generation, protocol, leader,
// subscriptions and assignments, their sessions starting now, so that
// network clients that reconnect after a restart carry on as members (a
// commit of theirs is accepted; a member that does not come back expires
// with its session). In-process members are not restored: their process
// ended with the directory's last opening. Without them, or without the
// leader, the restored members rebalance at once.
func (c *GroupCoordinator) restoreLocked(g *group) {
	if g.sg != nil {
		c.restoreShareGroupLocked(g, c.now())
		return
	}
	if g.cg != nil {
		c.restoreConsumerGroupLocked(g, c.now())
		return
	}
	v := g.stored
	g.stored = nil
	if v == nil {
		return // offsets only: a group of commits without members
	}
	// An Empty group's offsets expire offsets.retention.minutes after the
	// time its metadata gives, as Kafka loads it (-1: unknown, the
	// commits' own times count).
	g.protocolType, g.emptySince = v.ProtocolType, time.Time{}
	if v.CurrentStateTimestamp >= 0 {
		g.emptySince = time.UnixMilli(v.CurrentStateTimestamp)
	}
	if v.Generation != g.generation || len(v.Members) == 0 || v.Protocol == nil {
		return
	}
	now := c.now()
	missing := false
	for _, mm := range v.Members {
		if mm.ClientHost == inProcessHost {
			missing = true
			continue
		}
		m := &member{id: mm.MemberID, clientID: mm.ClientID, clientHost: mm.ClientHost, protocolType: v.ProtocolType,
			protocols:      []Protocol{{Name: *v.Protocol, Metadata: mm.Subscription}},
			sessionTimeout: time.Duration(mm.SessionTimeout) * time.Millisecond, rebalanceTimeout: time.Duration(mm.RebalanceTimeout) * time.Millisecond,
			lastHeartbeat: now, joined: true, synced: true, assignmentBytes: mm.Assignment}
		if mm.GroupInstanceID != nil {
			m.instanceID = *mm.GroupInstanceID
		}
		m.subscribeFromMetadata(c)
		if v.ProtocolType == consumerProtocolType {
			if a, err := groupcodec.ParseAssignment(mm.Assignment); err == nil {
				m.assignment = flatTPs(a.Partitions)
			}
		}
		g.members[m.id] = m
		g.joinOrder = append(g.joinOrder, m.id)
	}
	if len(g.members) == 0 {
		// Its members were in-process, gone with their process: the
		// group is Empty from now.
		g.emptySince = now
		return
	}
	g.protocolType, g.protocol, g.state = v.ProtocolType, *v.Protocol, StateStable
	if v.Leader != nil && g.members[*v.Leader] != nil {
		g.leader = *v.Leader
		// The leader first, as it joined first.
		g.joinOrder = append([]string{g.leader}, slices.DeleteFunc(g.joinOrder, func(id string) bool { return id == g.leader })...)
	} else {
		missing = true
	}
	c.logger.Info("restored a group's members", "group", g.id, "generation", g.generation, "members", len(g.members))
	if missing {
		c.prepareRebalanceLocked(g)
	}
	c.scheduleLocked(g)
}
