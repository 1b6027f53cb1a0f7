package coordinator

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/kafkalite/kafkalite/internal/groupcodec"
	"github.com/kafkalite/kafkalite/record"
)

// txnKey names the offsets one producer committed in its open transaction
// in one __consumer_offsets partition: what one marker completes.
type txnKey struct {
	partition  int32 // of __consumer_offsets
	producerID int64
}

// pendingOffset is an offset committed in a transaction, with the offset of
// the batch that holds it.
type pendingOffset struct {
	om  OffsetAndMetadata
	pos int64
}

// offsetsPartitionOf returns the __consumer_offsets partition of a group.
func (c *GroupCoordinator) offsetsPartitionOf(groupID string) TopicPartition {
	return TopicPartition{Topic: OffsetsTopic, Partition: groupcodec.PartitionFor(groupID, int32(len(c.partitions)))}
}

// TxnCommitOffsets is Kafka's TxnOffsetCommit: it commits offsets for m's
// group inside producer pe's transaction, which must have added the group with
// [TxnCoordinator.AddOffsets] (else [ErrInvalidTxnState]; another producer
// id or epoch: [ErrProducerFenced]). The offsets are written durably to the
// group's __consumer_offsets partition in a transactional batch of the
// producer, and stay pending — invisible to FetchOffsets — until the
// transaction's COMMIT marker applies them; an ABORT marker discards them.
// A commit written to the partition after this one and before the marker
// is not replaced by it.
//
// A consumer group member passes its member id, generation and
// group.instance.id, checked as CommitOffsets checks them; generation -1
// (a consumer without membership, or an application that only produces)
// skips the check.
func (c *GroupCoordinator) TxnCommitOffsets(ctx context.Context, transactionalID string, pe ProducerIDAndEpoch, m GroupMetadata,
	offsets map[TopicPartition]OffsetAndMetadata) error {
	groupID, memberID, generation := m.GroupID, m.MemberID, m.GenerationID
	tc, err := Transactions(ctx, c.dir)
	if err != nil {
		return err
	}
	tp := c.offsetsPartitionOf(groupID)
	return tc.inTransaction(ctx, transactionalID, pe, tp, func() error {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return ErrClosed
		}
		if generation >= 0 {
			// A member's commit: its group exists (a lookup creates none).
			g, ok := c.groups[groupID]
			err := fmt.Errorf("%w: %s in group %s", ErrUnknownMember, memberID, groupID)
			if ok {
				err = c.checkInstanceLocked(m)
			}
			switch {
			case err == nil && g.cg != nil:
				err = c.checkConsumerCommitLocked(g, memberID, generation, slices.Collect(maps.Keys(offsets)))
			case err == nil:
				err = g.checkCommitter(memberID, generation, true)
			}
			if err != nil {
				c.mu.Unlock()
				return err
			}
		}
		c.mu.Unlock()
		now := c.now().UnixMilli()
		stamped := make(map[TopicPartition]OffsetAndMetadata, len(offsets))
		for tp, om := range offsets {
			om.CommitTimestamp = now
			stamped[tp] = om
		}
		h := record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch,
			BaseSequence: 0, Attributes: record.Attributes(0).WithTransactional(true)}
		pos, err := c.appendOffsets(ctx, groupID, stamped, &h)
		if err != nil {
			return err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		for otp, om := range stamped {
			c.addPendingLocked(tp.Partition, pe.ProducerID, groupID, otp, om, pos)
		}
		return nil
	})
}

// addPendingLocked records an offset committed in producerID's open
// transaction in partition p.
func (c *GroupCoordinator) addPendingLocked(p int32, producerID int64, groupID string, tp TopicPartition, om OffsetAndMetadata, pos int64) {
	k := txnKey{p, producerID}
	byGroup := c.pendingTxn[k]
	if byGroup == nil {
		byGroup = map[string]map[TopicPartition]pendingOffset{}
		c.pendingTxn[k] = byGroup
	}
	offs := byGroup[groupID]
	if offs == nil {
		offs = map[TopicPartition]pendingOffset{}
		byGroup[groupID] = offs
	}
	offs[tp] = pendingOffset{om, pos}
}

// completeTxn applies (commit) or discards the offsets producerID committed
// in its transaction in __consumer_offsets partition p, once the
// transaction coordinator wrote the marker there.
func (c *GroupCoordinator) completeTxn(p int32, producerID int64, commit bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.completeTxnLocked(p, producerID, commit)
}

func (c *GroupCoordinator) completeTxnLocked(p int32, producerID int64, commit bool) {
	k := txnKey{p, producerID}
	byGroup := c.pendingTxn[k]
	delete(c.pendingTxn, k)
	if !commit {
		return
	}
	for groupID, offs := range byGroup {
		g := c.groupLocked(groupID)
		for tp, po := range offs {
			g.setOffset(tp, po.om, po.pos)
		}
	}
}

// setOffset makes om the group's committed offset of tp unless a commit
// appended later (at a higher pos) is already there.
func (g *group) setOffset(tp TopicPartition, om OffsetAndMetadata, pos int64) {
	if cur, ok := g.offsetPos[tp]; ok && cur > pos {
		if _, ok := g.offsets[tp]; ok {
			return
		}
	}
	g.offsets[tp] = om
	g.offsetPos[tp] = pos
}

// PendingTxnOffsets returns the offsets of groupID committed in
// transactions that are not decided yet: Kafka answers an OffsetFetch
// with require_stable with UNSTABLE_OFFSET_COMMIT for their partitions.
func (c *GroupCoordinator) PendingTxnOffsets(groupID string) map[TopicPartition]OffsetAndMetadata {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[TopicPartition]OffsetAndMetadata{}
	for _, byGroup := range c.pendingTxn {
		for tp, po := range byGroup[groupID] {
			out[tp] = po.om
		}
	}
	return out
}
