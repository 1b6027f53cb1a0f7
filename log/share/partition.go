package share

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/internal/sharecodec"
)

// The states of a record of a share-partition, with Kafka's ids (its
// RecordState; the ids are what __share_group_state stores). A record is
// Available until a consumer acquires it, Acquired (by one member, under an
// acquisition lock) until that member acknowledges it or the lock expires,
// then Acknowledged (accepted), Archived (rejected, past the delivery
// limit, or not a record a consumer is given: a transaction marker, an
// aborted transaction's record under read_committed), or Available again
// (released).
const (
	stateAvailable    uint8 = 0
	stateAcquired     uint8 = 1
	stateAcknowledged uint8 = 2
	stateArchived     uint8 = 4
)

// recState is one offset's state in a share-partition's window.
type recState struct {
	state uint8
	count int16 // delivery count: the acquisitions so far
	// member holds the record while it is acquired; deadline is when its
	// acquisition lock expires (Unix nanoseconds).
	member   string
	deadline int64
}

// limits are the group's settings a share-partition applies, read from the
// group's configuration at each acquisition.
type limits struct {
	lock      time.Duration // share.record.lock.duration.ms
	delivery  int16         // share.delivery.count.limit
	maxLocks  int           // share.partition.max.record.locks
	isolation int8          // share.isolation.level (log.IsolationLevel)
	renew     bool          // share.renew.acknowledge.enable
}

// sharePartition is one share group's view of one topic partition: Kafka's
// SharePartition. Its window holds the state of every offset from the
// share-partition start offset (start, Kafka's SPSO) to end (the first
// offset never acquired; Kafka's SPEO is end-1). Offsets before start are
// done (acknowledged or archived); offsets from end on were never handed
// out. A record of the window is Available with a delivery count of 0 when
// the window came from a stored state that did not list it (Kafka's gaps).
type sharePartition struct {
	key stateKey
	// wmu serializes the writes of the state, in the order of the changes
	// they store; it is taken before mu.
	wmu sync.Mutex
	// queued is the deadline of the share-partition's entry in the
	// manager's lock heap, 0 for none; PartitionManager.mu protects it.
	queued int64

	mu         sync.Mutex // protects the fields below
	start, end int64
	recs       []recState // recs[i] is offset start+i; len(recs) == end-start
	acquired   int        // records in stateAcquired
	// stateEpoch is bumped when the start offset is set from outside
	// (initialization, AlterShareGroupOffsets); snapshotEpoch at every
	// write of the state.
	stateEpoch, snapshotEpoch int32
	// created is when the state was first written, in milliseconds.
	created int64
	// avail is closed and replaced when records become Available again
	// (released, or their lock expired), waking fetches waiting for them.
	avail chan struct{}
	// broken is set when a write of the state failed: the window in memory
	// may be ahead of the stored one, so the manager drops the partition
	// and loads it again from the store on its next use.
	broken bool
}

func newSharePartition(key stateKey, start int64) *sharePartition {
	return &sharePartition{key: key, start: start, end: start, avail: make(chan struct{})}
}

// at returns the state of offset o, which must be in [start, end).
func (p *sharePartition) at(o int64) *recState { return &p.recs[o-p.start] }

// grow extends the window to offset o (exclusive) with records of state st.
func (p *sharePartition) grow(o int64, st recState) {
	for p.end < o {
		p.recs = append(p.recs, st)
		p.end++
	}
}

// advance moves the start offset past the acknowledged and archived
// records at the front of the window, as Kafka's SPSO moves.
func (p *sharePartition) advance() {
	n := 0
	for n < len(p.recs) && (p.recs[n].state == stateAcknowledged || p.recs[n].state == stateArchived) {
		n++
	}
	if n == 0 {
		return
	}
	p.start += int64(n)
	p.recs = p.recs[n:]
	// Copy the window down once the dropped front is larger than what
	// is left, so that a long-lived partition does not keep it alive.
	if cap(p.recs) > 64 && len(p.recs) < cap(p.recs)/2 {
		p.recs = append([]recState(nil), p.recs...)
	}
}

// skipTo moves the start offset to o when the log no longer holds the
// records before it (retention, DeleteRecords): they are archived, as
// Kafka's share-partition moves its start offset to the log start offset.
func (p *sharePartition) skipTo(o int64) {
	if o <= p.start {
		return
	}
	for _, r := range p.recs[:min(int64(len(p.recs)), o-p.start)] {
		if r.state == stateAcquired {
			p.acquired--
		}
	}
	if o >= p.end {
		p.recs = p.recs[:0]
		p.start, p.end = o, o
		return
	}
	p.recs = p.recs[o-p.start:]
	p.start = o
}

// release makes an acquired record Available again, or Archived when it
// has been delivered delivery times (Kafka's delivery count limit).
func (p *sharePartition) release(r *recState, delivery int16) {
	r.member, r.deadline = "", 0
	p.acquired--
	if r.count >= delivery {
		r.state = stateArchived
		return
	}
	r.state = stateAvailable
}

// notifyAvailable wakes the fetches waiting for released records.
func (p *sharePartition) notifyAvailable() {
	close(p.avail)
	p.avail = make(chan struct{})
}

// firstAvailable returns the first Available offset of the window, or end.
func (p *sharePartition) firstAvailable() int64 {
	for i := range p.recs {
		if p.recs[i].state == stateAvailable {
			return p.start + int64(i)
		}
	}
	return p.end
}

// deliveryComplete counts the window's acknowledged and archived records
// (Kafka's deliveryCompleteCount: what the lag leaves out).
func (p *sharePartition) deliveryComplete() int64 {
	var n int64
	for i := range p.recs {
		if s := p.recs[i].state; s == stateAcknowledged || s == stateArchived {
			n++
		}
	}
	return n
}

// nextDeadline returns the earliest acquisition lock deadline of the
// window, 0 when nothing is acquired.
func (p *sharePartition) nextDeadline() int64 {
	if p.acquired == 0 {
		return 0
	}
	var d int64
	for i := range p.recs {
		if r := &p.recs[i]; r.state == stateAcquired && (d == 0 || r.deadline < d) {
			d = r.deadline
		}
	}
	return d
}

// expire releases the records whose acquisition lock expired at now and
// reports whether any did.
func (p *sharePartition) expire(now int64, delivery int16) bool {
	changed := false
	for i := range p.recs {
		if r := &p.recs[i]; r.state == stateAcquired && r.deadline <= now {
			p.release(r, delivery)
			changed = true
		}
	}
	if changed {
		p.advance()
		p.notifyAvailable()
	}
	return changed
}

// releaseMember releases every record member holds and reports whether
// any was.
func (p *sharePartition) releaseMember(member string, delivery int16) bool {
	changed := false
	for i := range p.recs {
		if r := &p.recs[i]; r.state == stateAcquired && r.member == member {
			p.release(r, delivery)
			changed = true
		}
	}
	if changed {
		p.advance()
		p.notifyAvailable()
	}
	return changed
}

// state returns the share-partition's state as stored: the start offset
// and the window as runs of records of one state and delivery count.
// Acquired records are stored Available, with the delivery count of their
// acquisition, as Kafka stores them; Available records never delivered
// are left out (Kafka's gaps: a loaded window treats them so).
func (p *sharePartition) state(leaderEpoch int32, now time.Time) sharecodec.Snapshot {
	p.snapshotEpoch++
	if p.created == 0 {
		p.created = now.UnixMilli()
	}
	st := sharecodec.Snapshot{SnapshotEpoch: p.snapshotEpoch, StateEpoch: p.stateEpoch, LeaderEpoch: leaderEpoch,
		StartOffset: p.start, DeliveryCompleteCount: int32(p.deliveryComplete()), CreateTimestamp: p.created, WriteTimestamp: now.UnixMilli()}
	for i := range p.recs {
		r := &p.recs[i]
		s := r.state
		if s == stateAcquired {
			s = stateAvailable
		}
		if s == stateAvailable && r.count == 0 {
			continue
		}
		o := p.start + int64(i)
		if n := len(st.StateBatches); n > 0 {
			if b := &st.StateBatches[n-1]; b.LastOffset == o-1 && b.DeliveryState == int8(s) && b.DeliveryCount == r.count {
				b.LastOffset = o
				continue
			}
		}
		st.StateBatches = append(st.StateBatches, sharecodec.StateBatch{FirstOffset: o, LastOffset: o, DeliveryState: int8(s), DeliveryCount: r.count})
	}
	return st
}

// fromState builds a share-partition from its stored state: the window runs
// from the start offset to the last stored batch; offsets no batch covers
// are Available and never delivered.
func fromState(key stateKey, st sharecodec.Snapshot) *sharePartition {
	p := newSharePartition(key, st.StartOffset)
	p.stateEpoch, p.snapshotEpoch, p.created = st.StateEpoch, st.SnapshotEpoch, st.CreateTimestamp
	batches := append([]sharecodec.StateBatch(nil), st.StateBatches...)
	sortBatches(batches)
	for _, b := range batches {
		if b.LastOffset < p.end {
			continue
		}
		p.grow(max(b.FirstOffset, p.start), recState{state: stateAvailable})
		var s uint8
		switch b.DeliveryState {
		case sharecodec.StateAcknowledged:
			s = stateAcknowledged
		case sharecodec.StateArchived, sharecodec.StateArchiving:
			s = stateArchived // archiving: on its way to a dead-letter queue, which kafkalite has not
		default:
			s = stateAvailable // acquired by a member of the process before
		}
		p.grow(b.LastOffset+1, recState{state: s, count: b.DeliveryCount})
	}
	p.advance()
	return p
}

// sortBatches orders state batches by first offset.
func sortBatches(bs []sharecodec.StateBatch) {
	slices.SortFunc(bs, func(a, b sharecodec.StateBatch) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
}
