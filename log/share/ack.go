package share

import "fmt"

// AckType is how a consumer acknowledges a record it acquired: Kafka's
// AcknowledgeType, with its ids (those of ShareFetch and ShareAcknowledge).
type AckType int8

const (
	// AckGap marks an offset of an acquired range that holds no record (a
	// compacted log's gap): it is archived.
	AckGap AckType = 0
	// AckAccept marks the record processed: it is never delivered again.
	AckAccept AckType = 1
	// AckRelease gives the record back: it is delivered again, to any
	// member, unless it reached the delivery count limit (then archived).
	AckRelease AckType = 2
	// AckReject marks the record unprocessable: it is archived, never
	// delivered again.
	AckReject AckType = 3
	// AckRenew keeps the record acquired and starts its acquisition lock
	// again (KIP-1222).
	AckRenew AckType = 4
)

// String returns Kafka's name of the type.
func (t AckType) String() string {
	switch t {
	case AckGap:
		return "gap"
	case AckAccept:
		return "accept"
	case AckRelease:
		return "release"
	case AckReject:
		return "reject"
	case AckRenew:
		return "renew"
	}
	return fmt.Sprintf("AckType(%d)", int8(t))
}

// AckBatch acknowledges the offsets FirstOffset to LastOffset of one
// partition: with one type in Types all of them alike, or with one type
// per offset (LastOffset-FirstOffset+1 types), as Kafka's
// AcknowledgementBatch.
type AckBatch struct {
	FirstOffset, LastOffset int64
	Types                   []AckType
}

// checkAcks checks the shape of acknowledgements: ranges in order without
// overlap, one type or one per offset, types Kafka knows (renew only when
// allowed).
func checkAcks(batches []AckBatch, renew bool) error {
	last := int64(-1)
	for i, b := range batches {
		switch {
		case b.FirstOffset < 0 || b.LastOffset < b.FirstOffset:
			return fmt.Errorf("%w: acknowledgement batch %d covers offsets %d to %d", ErrInvalidRequest, i, b.FirstOffset, b.LastOffset)
		case i > 0 && b.FirstOffset <= last:
			return fmt.Errorf("%w: acknowledgement batch %d (from offset %d) overlaps or precedes the one before it (to %d)", ErrInvalidRequest, i, b.FirstOffset, last)
		case len(b.Types) != 1 && int64(len(b.Types)) != b.LastOffset-b.FirstOffset+1:
			return fmt.Errorf("%w: acknowledgement batch %d has %d types for %d offsets", ErrInvalidRequest, i, len(b.Types), b.LastOffset-b.FirstOffset+1)
		}
		for _, t := range b.Types {
			if t < AckGap || t > AckRenew || (t == AckRenew && !renew) {
				return fmt.Errorf("%w: acknowledge type %d", ErrInvalidRequest, t)
			}
		}
		last = b.LastOffset
	}
	return nil
}

// ackType returns the type of offset o of b.
func (b *AckBatch) ackType(o int64) AckType {
	if len(b.Types) == 1 {
		return b.Types[0]
	}
	return b.Types[o-b.FirstOffset]
}

// acknowledge applies acknowledgements of member, all or nothing: every
// offset at or after the start offset must be acquired by member (Kafka's
// INVALID_RECORD_STATE otherwise); offsets before the start offset are
// done already and skipped, as Kafka skips them. It reports whether the
// stored state changes (anything but renewals) and whether records became
// Available.
func (p *sharePartition) acknowledge(member string, batches []AckBatch, lim limits, now int64) (write bool, err error) {
	for _, b := range batches {
		for o := max(b.FirstOffset, p.start); o <= b.LastOffset; o++ {
			if o >= p.end {
				return false, fmt.Errorf("%w: offset %d of %s was never acquired (the share-partition's end offset is %d)", ErrInvalidRecordState, o, p.key, p.end-1)
			}
			r := p.at(o)
			if r.state != stateAcquired || r.member != member {
				return false, fmt.Errorf("%w: offset %d of %s is not acquired by member %s", ErrInvalidRecordState, o, p.key, member)
			}
		}
	}
	released := false
	for _, b := range batches {
		for o := max(b.FirstOffset, p.start); o <= b.LastOffset; o++ {
			r := p.at(o)
			switch b.ackType(o) {
			case AckAccept:
				r.state, r.member, r.deadline = stateAcknowledged, "", 0
				p.acquired--
				write = true
			case AckGap, AckReject:
				r.state, r.member, r.deadline = stateArchived, "", 0
				p.acquired--
				write = true
			case AckRelease:
				p.release(r, lim.delivery)
				released, write = released || r.state == stateAvailable, true
			case AckRenew:
				r.deadline = now + int64(lim.lock)
			}
		}
	}
	p.advance()
	if released {
		p.notifyAvailable()
	}
	return write, nil
}
