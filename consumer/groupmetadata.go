package consumer

// GroupMetadata identifies a consumer's group membership: Kafka's
// ConsumerGroupMetadata. A transactional producer's
// SendOffsetsToTransaction takes it, so that the coordinator can refuse the
// offsets of a member that was fenced by a rebalance (zombie fencing,
// KIP-447).
type GroupMetadata struct {
	// GroupID is group.id.
	GroupID string
	// MemberID is the member id the coordinator gave the consumer; empty
	// for a consumer that is not in a group (Assign) or has not joined.
	MemberID string
	// GenerationID is the group generation the consumer joined, -1 when
	// not in a group.
	GenerationID int32
	// GroupInstanceID mirrors group.instance.id; kafkalite has no static
	// membership, so it is always empty.
	GroupInstanceID string
}

// GroupMetadata returns the consumer's current group membership.
func (c *Consumer) GroupMetadata() GroupMetadata {
	md := GroupMetadata{GroupID: c.cfg.GroupID, GenerationID: -1}
	if c.group != nil {
		md.MemberID, md.GenerationID = c.group.identity()
	}
	return md
}
