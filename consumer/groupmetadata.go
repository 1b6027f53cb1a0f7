package consumer

import "github.com/kafkalite/kafkalite/log"

// GroupMetadata identifies a consumer's group membership (Kafka's
// ConsumerGroupMetadata): [log.GroupMetadata] under the consumer's name.
type GroupMetadata = log.GroupMetadata

// GroupMetadata returns the consumer's current group membership.
func (c *Consumer) GroupMetadata() GroupMetadata {
	md := GroupMetadata{GroupID: c.cfg.GroupID, GenerationID: -1, GroupInstanceID: c.cfg.GroupInstanceID}
	if c.group != nil {
		md.MemberID, md.GenerationID = c.group.identity()
	}
	return md
}
