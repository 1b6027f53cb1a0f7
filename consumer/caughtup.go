package consumer

import (
	"errors"
	"fmt"
)

// PartitionsFor returns the partitions of a topic, in order (Kafka's
// partitionsFor): [log.ErrUnknownTopicOrPartition] for a topic the
// directory does not have.
func (c *Consumer) PartitionsFor(topic string) ([]TopicPartition, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	td, err := c.dir.DescribeTopic(topic)
	if err != nil {
		return nil, err
	}
	out := make([]TopicPartition, td.Partitions)
	for p := range out {
		out[p] = TopicPartition{Topic: topic, Partition: int32(p)}
	}
	return out, nil
}

// CaughtUp reports whether the consumer has read up to offsets: each
// partition named is assigned to it and its position is at or past the
// offset. It answers the question a program asks before it moves on from
// a backlog, "have I read everything that was there when I looked?", with
// offsets from [Consumer.EndOffsets] (the end at the consumer's isolation
// level) taken when it looked. A partition not assigned (yet: a group
// still joining, or given to another member) is not caught up; it is not
// an error.
func (c *Consumer) CaughtUp(offsets map[TopicPartition]int64) (bool, error) {
	for tp, end := range offsets {
		pos, err := c.Position(tp)
		if errors.Is(err, ErrNotAssigned) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("consumer: position of %s: %w", tp, err)
		}
		if pos < end {
			return false, nil
		}
	}
	return true, nil
}
