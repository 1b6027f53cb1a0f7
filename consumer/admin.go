package consumer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
)

// GroupDescription describes a consumer group (kafka-consumer-groups
// --describe).
type GroupDescription struct {
	GroupID string
	State   string // Empty, PreparingRebalance, Stable, ...; a consumer group's Assigning, Reconciling
	// Generation is a classic group's generation, a consumer group's
	// (KIP-848) group epoch.
	Generation int32
	Assignor   string
	Members    []MemberDescription
	// Offsets are the committed offsets, Lag the records between them and
	// the partitions' high watermarks.
	Offsets map[TopicPartition]OffsetAndMetadata
	Lag     map[TopicPartition]int64
}

// MemberDescription describes a group member.
type MemberDescription struct {
	MemberID, ClientID, InstanceID string
	Topics                         []string
	Assignment                     []TopicPartition
}

// ListGroups returns the ids of the groups known to the Dir's coordinator
// (those with committed offsets or members), sorted.
func ListGroups(ctx context.Context, dir *log.Dir) ([]string, error) {
	coord, err := coordinator.Groups(ctx, dir)
	if err != nil {
		return nil, err
	}
	listed := coord.ListGroups()
	ids := make([]string, len(listed))
	for i, g := range listed {
		ids[i] = g.GroupID
	}
	return ids, nil
}

// DescribeGroup describes a group, with its lag per committed partition.
func DescribeGroup(ctx context.Context, dir *log.Dir, groupID string) (GroupDescription, error) {
	coord, err := coordinator.Groups(ctx, dir)
	if err != nil {
		return GroupDescription{}, err
	}
	var out GroupDescription
	var offsets map[TopicPartition]coordinator.OffsetAndMetadata
	d, err := coord.DescribeGroup(groupID)
	switch {
	case errors.Is(err, coordinator.ErrUnknownGroup):
		// A consumer group (KIP-848's protocol), or no group.
		cd, cerr := coord.DescribeConsumerGroup(groupID)
		if cerr != nil {
			return GroupDescription{}, err
		}
		out = GroupDescription{GroupID: cd.GroupID, State: string(cd.State), Generation: cd.GroupEpoch, Assignor: cd.AssignorName}
		names := map[coordinator.TopicID]string{}
		for _, t := range dir.Topics() {
			if id, ok := topicID(dir, t); ok {
				names[id] = t
			}
		}
		for _, m := range cd.Members {
			md := MemberDescription{MemberID: m.MemberID, ClientID: m.ClientID, InstanceID: m.InstanceID, Topics: m.SubscribedTopicNames}
			for _, tp := range m.Assignment {
				for _, p := range tp.Partitions {
					md.Assignment = append(md.Assignment, TopicPartition{Topic: names[tp.TopicID], Partition: p})
				}
			}
			out.Members = append(out.Members, md)
		}
		offsets = coord.FetchOffsets(groupID, nil)
	case err != nil:
		return GroupDescription{}, err
	default:
		out = GroupDescription{GroupID: d.GroupID, State: string(d.State), Generation: d.Generation, Assignor: d.Protocol}
		for _, m := range d.Members {
			md := MemberDescription{MemberID: m.MemberID, ClientID: m.ClientID, InstanceID: m.InstanceID, Topics: m.Topics,
				Assignment: slices.Clone(m.Assignment)}
			out.Members = append(out.Members, md)
		}
		offsets = d.Offsets
	}
	out.Offsets, out.Lag = map[TopicPartition]OffsetAndMetadata{}, map[TopicPartition]int64{}
	for tp, om := range offsets {
		out.Offsets[tp] = OffsetAndMetadata{Offset: om.Offset, LeaderEpoch: om.LeaderEpoch, Metadata: om.Metadata}
		if l, err := dir.Partition(tp.Topic, tp.Partition); err == nil {
			out.Lag[tp] = max(l.HighWatermark()-om.Offset, 0)
		}
	}
	return out, nil
}

// DeleteGroup deletes an empty group and its committed offsets.
func DeleteGroup(ctx context.Context, dir *log.Dir, groupID string) error {
	coord, err := coordinator.Groups(ctx, dir)
	if err != nil {
		return err
	}
	return coord.DeleteGroup(ctx, groupID)
}

// ResetTo says where [ResetOffsets] moves a partition: one of
// kafka-consumer-groups' --to-earliest, --to-latest, --by-duration,
// --to-offset and --to-datetime. The first three are auto.offset.reset's
// places ([OffsetReset]) applied now, computed as the consumer computes
// them. Build it with [ResetToEarliest], [ResetToLatest],
// [ResetToDuration], [ResetToOffset] or [ResetToTimestamp]; its zero value
// says nothing and is refused with [ErrInvalidReset], as is a negative
// offset, timestamp or duration.
type ResetTo struct {
	reset OffsetReset // earliest, latest or by_duration, with kind resetPolicy
	kind  resetKind
	value int64 // the offset, the timestamp in ms, or the duration in ns
}

type resetKind int8

const (
	resetNone resetKind = iota
	resetPolicy
	resetOffset
	resetTimestamp
)

// ResetToEarliest moves to the log start offset (--to-earliest,
// auto.offset.reset=earliest).
func ResetToEarliest() ResetTo { return ResetTo{kind: resetPolicy, reset: OffsetResetEarliest} }

// ResetToLatest moves to the high watermark (--to-latest,
// auto.offset.reset=latest).
func ResetToLatest() ResetTo { return ResetTo{kind: resetPolicy, reset: OffsetResetLatest} }

// ResetToDuration moves to the first offset whose timestamp is at or after
// now minus d, or to the high watermark where there is none
// (--by-duration, auto.offset.reset=by_duration). d must not be negative.
func ResetToDuration(d time.Duration) ResetTo {
	return ResetTo{kind: resetPolicy, reset: OffsetResetByDuration, value: int64(d)}
}

// ResetToOffset moves to offset o (--to-offset), clamped to the log's
// [log start offset, high watermark], as Kafka's tool clamps it. o must not
// be negative.
func ResetToOffset(o int64) ResetTo { return ResetTo{kind: resetOffset, value: o} }

// ResetToTimestamp moves to the first offset whose timestamp is at or
// after ms, milliseconds since the Unix epoch (--to-datetime), or to the
// high watermark where there is none. ms must not be negative.
func ResetToTimestamp(ms int64) ResetTo { return ResetTo{kind: resetTimestamp, value: ms} }

// String says what the ResetTo does, in the tool's words.
func (r ResetTo) String() string {
	switch {
	case r.kind == resetPolicy && r.reset == OffsetResetByDuration:
		return fmt.Sprintf("--by-duration %v", time.Duration(r.value))
	case r.kind == resetPolicy:
		return "--to-" + r.reset.String()
	case r.kind == resetOffset:
		return fmt.Sprintf("--to-offset %d", r.value)
	case r.kind == resetTimestamp:
		return fmt.Sprintf("--to-datetime %d ms", r.value)
	}
	return "ResetTo{} (nothing)"
}

// validate refuses the zero value and negative offsets, timestamps and
// durations.
func (r ResetTo) validate() error {
	switch {
	case r.kind == resetNone:
		return fmt.Errorf("%w: the zero ResetTo says nothing; use ResetToEarliest, ResetToLatest, ResetToDuration, ResetToOffset or ResetToTimestamp", ErrInvalidReset)
	case r.value < 0:
		return fmt.Errorf("%w: %s is negative", ErrInvalidReset, r)
	}
	return nil
}

// ResetOffsets rewrites an empty group's committed offsets for the
// partitions (kafka-consumer-groups --reset-offsets); a group with members
// is refused (ErrGroupNotEmpty).
func ResetOffsets(ctx context.Context, dir *log.Dir, groupID string, tps []TopicPartition, to ResetTo) (map[TopicPartition]int64, error) {
	if err := to.validate(); err != nil {
		return nil, err
	}
	coord, err := coordinator.Groups(ctx, dir)
	if err != nil {
		return nil, err
	}
	out := map[TopicPartition]int64{}
	offsets := map[coordinator.TopicPartition]coordinator.OffsetAndMetadata{}
	for _, tp := range tps {
		l, err := dir.Partition(tp.Topic, tp.Partition)
		if err != nil {
			return nil, err
		}
		var off int64
		switch to.kind {
		case resetPolicy:
			off = positionFor(l, to.reset, time.Duration(to.value), time.Now(), l.HighWatermark())
		case resetTimestamp:
			ot, ok, err := l.OffsetForTimestamp(to.value)
			if err != nil {
				return nil, err
			}
			off = l.HighWatermark()
			if ok {
				off = ot.Offset
			}
		case resetOffset:
			off = min(max(to.value, l.LogStartOffset()), l.HighWatermark())
		}
		out[tp] = off
		offsets[coordinator.TopicPartition(tp)] = coordinator.OffsetAndMetadata{Offset: off, LeaderEpoch: -1}
	}
	// The group must be empty; a member joining meanwhile fences the
	// commit (made without membership) with ErrIllegalGeneration.
	if d, err := coord.DescribeGroup(groupID); err == nil && len(d.Members) > 0 {
		return nil, fmt.Errorf("%w: %s has %d members", ErrGroupNotEmpty, groupID, len(d.Members))
	}
	return out, coord.CommitOffsets(ctx, coordinator.GroupMetadata{GroupID: groupID, GenerationID: -1}, offsets)
}
