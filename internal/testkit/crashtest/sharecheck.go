package crashtest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/internal/sharecodec"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/log/share"
)

// shareSeen is what the children reported of the share group GroupShare
// on TopicShare since the last check. Every offset below start was found
// done at a check (the share-partition start offset had passed it), so
// the maps hold only offsets at or above it.
type shareSeen struct {
	start    int64              // the start offset the last check left: everything before it is done
	done     map[int64]shareAck // "sack" lines of accepted and rejected records
	released map[int64]bool     // "sack" lines of released records
	intent   map[int64]bool     // "sack-start" lines: an acknowledgement was about to be committed
}

// shareAck is a reported acknowledgement.
type shareAck struct {
	typ string
	dc  int16
}

func newShareSeen() shareSeen {
	return shareSeen{done: map[int64]shareAck{}, released: map[int64]bool{}, intent: map[int64]bool{}}
}

// observeShareAck records a "sack" line: the acknowledgement of the
// record at off, of type typ at delivery count dc, returned from
// CommitSync. A record done before (reported so, or below the start
// offset a check found) that a member acknowledges again was delivered
// again: that breaks the contract, and is an error at once.
func (c *Checker) observeShareAck(off int64, typ string, dc int16) error {
	s := &c.share
	if off < s.start {
		return fmt.Errorf("crashtest: %s offset %d acknowledged (%s, delivery %d) after a check found it done (start offset %d): delivered again",
			TopicShare, off, typ, dc, s.start)
	}
	if prev, ok := s.done[off]; ok {
		if typ == consumer.AcknowledgeRelease.String() && dc < prev.dc {
			// The two members print after their commits return, in
			// either order: the release came first, the record was
			// delivered again and acknowledged by the other.
			c.ShareReleased++
			return nil
		}
		return fmt.Errorf("crashtest: %s offset %d acknowledged (%s, delivery %d) after it was acknowledged (%s, delivery %d): delivered again",
			TopicShare, off, typ, dc, prev.typ, prev.dc)
	}
	switch typ {
	case consumer.AcknowledgeAccept.String(), consumer.AcknowledgeReject.String():
		s.done[off] = shareAck{typ, dc}
		c.ShareDone++
	case consumer.AcknowledgeRelease.String():
		s.released[off] = true
		c.ShareReleased++
	default:
		return fmt.Errorf("crashtest: %s offset %d: unknown acknowledgement %q", TopicShare, off, typ)
	}
	return nil
}

// checkShare checks the share group GroupShare on TopicShare:
//
//   - every record of __share_group_state decodes (a torn write is never
//     read back), and the share-partition manager loads the states;
//   - each reported acknowledgement is the one shareAckFor gives the
//     record's value;
//   - the share-partition start offset never goes back;
//   - a share consumer of the group, a new member, is delivered every
//     record not done and none that a child reported done (or that a
//     check found done); it accepts each, so that the group ends the
//     check with its start offset at the high watermark;
//   - every record below the high watermark was reported done, was
//     delivered to the check, or had its acknowledgement about to be
//     committed when the child died ("sack-start" without "sack": the
//     acknowledgement may have been stored), so none is lost.
//
// Accepting in the check, rather than releasing what it was delivered,
// keeps delivery counts where the children leave them (a release would
// count a delivery for every check, archiving records at
// share.delivery.count.limit after a few kills) and lets every check
// start from a group whose records are all done.
func (c *Checker) checkShare(ctx context.Context, d *log.Dir, present bool, data map[tp][]scanned, fail func(string, ...any)) {
	s := &c.share
	for t, recs := range data {
		if t.topic != share.StateTopic {
			continue
		}
		for _, r := range recs {
			if err := decodeShareState(r); err != nil {
				fail("%s offset %d: %v", t, r.offset, err)
			}
			c.ShareStates++
		}
	}
	if !present {
		if len(s.done) > 0 || s.start > 0 {
			fail("topic %s is missing, with %d acknowledged records", TopicShare, len(s.done))
		}
		return
	}
	m, err := share.Partitions(ctx, d)
	if err != nil {
		fail("share-partition manager: %v", err)
		return
	}
	l, err := d.Partition(TopicShare, 0)
	if err != nil {
		fail("%s-0: %v", TopicShare, err)
		return
	}
	hw := l.HighWatermark()
	values := map[int64]string{}
	for _, r := range data[tp{TopicShare, 0}] {
		values[r.offset] = r.value
	}
	for off, a := range s.done {
		v, ok := values[off]
		switch {
		case !ok:
			fail("%s offset %d: acknowledged (%s), but not in the log (high watermark %d)", TopicShare, off, a.typ, hw)
		case shareAckFor(v, a.dc).String() != a.typ:
			fail("%s offset %d: %q acknowledged %s at delivery %d, the rule says %v", TopicShare, off, v, a.typ, a.dc, shareAckFor(v, a.dc))
		}
	}
	tps := []log.TopicPartition{{Topic: TopicShare, Partition: 0}}
	if po := m.Offsets(GroupShare, tps)[0]; po.StartOffset >= 0 && po.StartOffset < s.start {
		fail("share group %s: start offset of %s-0 went back from %d to %d", GroupShare, TopicShare, s.start, po.StartOffset)
	}

	drained, err := c.drainShare(ctx, d, m, hw, values, fail)
	if err != nil {
		fail("share group %s: draining %s-0: %v", GroupShare, TopicShare, err)
		return
	}
	for off := s.start; off < hw; off++ {
		_, done := s.done[off]
		if !done && !drained[off] && !s.intent[off] {
			fail("%s offset %d (%q): lost to share group %s: never acknowledged, not delivered again", TopicShare, off, values[off], GroupShare)
		}
	}
	s.start = hw
	clear(s.done)
	clear(s.released)
	clear(s.intent)
}

// drainShare reads TopicShare as a new member of GroupShare until the
// share-partition start offset reaches hw, accepting every record, and
// returns the offsets delivered. A record delivered that was done is a
// failure.
func (c *Checker) drainShare(ctx context.Context, d *log.Dir, m *share.PartitionManager, hw int64, values map[int64]string, fail func(string, ...any)) (drained map[int64]bool, err error) {
	s := &c.share
	cfg := consumer.DefaultShareConfig()
	cfg.GroupID = GroupShare
	cfg.ClientID = "checker"
	cfg.AcknowledgementMode = consumer.AcknowledgeExplicit
	sc, err := consumer.NewShareConsumer(d, cfg)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, sc.Close(context.WithoutCancel(ctx))) }()
	if err := sc.Subscribe([]string{TopicShare}); err != nil {
		return nil, err
	}
	tps := []log.TopicPartition{{Topic: TopicShare, Partition: 0}}
	drained = map[int64]bool{}
	// Nothing is acquired in this process but by sc: whatever is not done
	// is available at once. The deadline only ends a check that finds
	// records that never come.
	deadline := time.Now().Add(30 * time.Second)
	for {
		po := m.Offsets(GroupShare, tps)[0]
		if po.StartOffset >= hw {
			if po.StartOffset > hw {
				fail("share group %s: start offset %d of %s-0 past the high watermark %d", GroupShare, po.StartOffset, TopicShare, hw)
			}
			if po.Lag != 0 {
				fail("share group %s: lag %d of %s-0 at the high watermark", GroupShare, po.Lag, TopicShare)
			}
			break
		}
		if time.Now().After(deadline) {
			return drained, fmt.Errorf("start offset %d below the high watermark %d, and nothing more is delivered", po.StartOffset, hw)
		}
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		recs, err := sc.Poll(pctx)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return drained, err
		}
		for _, r := range recs {
			off := r.Offset
			switch {
			case off < s.start:
				fail("%s offset %d delivered (delivery %d), below the start offset %d a check found", TopicShare, off, r.DeliveryCount, s.start)
			case s.done[off] != shareAck{}:
				fail("%s offset %d delivered again (delivery %d) after it was acknowledged (%s, delivery %d)", TopicShare, off, r.DeliveryCount, s.done[off].typ, s.done[off].dc)
			case drained[off]:
				fail("%s offset %d delivered twice to the check", TopicShare, off)
			case off >= hw:
				fail("%s offset %d delivered, at or past the high watermark %d", TopicShare, off, hw)
			case string(r.Value) != values[off]:
				fail("%s offset %d delivered with %q, the log holds %q", TopicShare, off, r.Value, values[off])
			}
			if s.released[off] && r.DeliveryCount < 2 {
				fail("%s offset %d: released, and delivered again with delivery count %d", TopicShare, off, r.DeliveryCount)
			}
			drained[off] = true
			c.ShareDrained++
			if r.DeliveryCount > 1 {
				c.ShareRedelivered++
			}
			if err := sc.Acknowledge(r, consumer.AcknowledgeAccept); err != nil {
				return drained, err
			}
		}
		if len(recs) == 0 {
			continue
		}
		res, err := sc.CommitSync(ctx)
		if err != nil {
			return drained, err
		}
		for tp, err := range res {
			if err != nil {
				return drained, fmt.Errorf("accepting %s: %w", tp, err)
			}
		}
	}
	return drained, expireDeadMembers(ctx, d)
}

// expireDeadMembers waits, when the share group holds many members (those
// of killed children stay until their session runs out, 500 ms after
// each Open), until the coordinator expired them, so that the group stays
// below group.share.max.size over long runs.
func expireDeadMembers(ctx context.Context, d *log.Dir) error {
	groups, err := coordinator.Groups(ctx, d)
	if err != nil {
		return err
	}
	const many = 40
	deadline := time.Now().Add(30 * time.Second)
	for {
		desc, err := groups.DescribeShareGroup(GroupShare)
		if err != nil || len(desc.Members) <= many || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// decodeShareState decodes a record of __share_group_state: its key, and
// its value as the key's type says (a tombstone has none).
func decodeShareState(r scanned) error {
	k, err := sharecodec.DecodeKey([]byte(r.key))
	if err != nil {
		return fmt.Errorf("key: %w", err)
	}
	if r.null {
		return nil
	}
	switch k.Type {
	case sharecodec.TypeShareSnapshot:
		_, err = sharecodec.DecodeSnapshot([]byte(r.value))
	case sharecodec.TypeShareUpdate:
		_, err = sharecodec.DecodeUpdate([]byte(r.value))
	default:
		err = fmt.Errorf("unknown record type %v", k.Type)
	}
	return err
}
