package consumer

import (
	"context"
	"fmt"
	"slices"

	"github.com/kafkalite/kafkalite/internal/coordinator"
	"github.com/kafkalite/kafkalite/log"
)

// GroupDescription describes a consumer group (kafka-consumer-groups
// --describe).
type GroupDescription struct {
	GroupID    string
	State      string // Empty, PreparingRebalance, Stable, ...
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
	coord, err := coordinator.For(ctx, dir)
	if err != nil {
		return nil, err
	}
	return coord.ListGroups(), nil
}

// DescribeGroup describes a group, with its lag per committed partition.
func DescribeGroup(ctx context.Context, dir *log.Dir, groupID string) (GroupDescription, error) {
	coord, err := coordinator.For(ctx, dir)
	if err != nil {
		return GroupDescription{}, err
	}
	d, err := coord.Describe(groupID)
	if err != nil {
		return GroupDescription{}, err
	}
	out := GroupDescription{GroupID: d.GroupID, State: string(d.State), Generation: d.Generation, Assignor: d.Protocol,
		Offsets: map[TopicPartition]OffsetAndMetadata{}, Lag: map[TopicPartition]int64{}}
	for _, m := range d.Members {
		md := MemberDescription{MemberID: m.MemberID, ClientID: m.ClientID, InstanceID: m.InstanceID, Topics: m.Topics,
			Assignment: slices.Clone(m.Assignment)}
		out.Members = append(out.Members, md)
	}
	for tp, om := range d.Offsets {
		out.Offsets[tp] = OffsetAndMetadata{Offset: om.Offset, LeaderEpoch: om.LeaderEpoch, Metadata: om.Metadata}
		if l, err := dir.Partition(tp.Topic, tp.Partition); err == nil {
			out.Lag[tp] = max(l.HighWatermark()-om.Offset, 0)
		}
	}
	return out, nil
}

// DeleteGroup deletes an empty group and its committed offsets.
func DeleteGroup(ctx context.Context, dir *log.Dir, groupID string) error {
	coord, err := coordinator.For(ctx, dir)
	if err != nil {
		return err
	}
	return coord.DeleteGroup(ctx, groupID)
}

// ResetTo says where ResetOffsets moves a partition.
type ResetTo struct {
	// Exactly one of: Earliest, Latest, Timestamp (ms, >= 0) or Offset (>= 0).
	Earliest, Latest bool
	Timestamp        int64
	Offset           int64
}

// ResetEarliest, ResetLatest, ResetToTimestamp and ResetToOffset build a
// ResetTo.
var (
	ResetEarliest = ResetTo{Earliest: true, Timestamp: -1, Offset: -1}
	ResetLatest   = ResetTo{Latest: true, Timestamp: -1, Offset: -1}
)

func ResetToTimestamp(ms int64) ResetTo { return ResetTo{Timestamp: ms, Offset: -1} }
func ResetToOffset(o int64) ResetTo     { return ResetTo{Timestamp: -1, Offset: o} }

// ResetOffsets rewrites an empty group's committed offsets for the
// partitions (kafka-consumer-groups --reset-offsets); a group with members
// is refused (ErrGroupNotEmpty).
func ResetOffsets(ctx context.Context, dir *log.Dir, groupID string, tps []TopicPartition, to ResetTo) (map[TopicPartition]int64, error) {
	coord, err := coordinator.For(ctx, dir)
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
		switch {
		case to.Earliest:
			off = l.LogStartOffset()
		case to.Latest:
			off = l.HighWatermark()
		case to.Timestamp >= 0:
			ot, ok, err := l.OffsetForTimestamp(to.Timestamp)
			if err != nil {
				return nil, err
			}
			off = l.HighWatermark()
			if ok {
				off = ot.Offset
			}
		case to.Offset >= 0:
			off = min(max(to.Offset, l.LogStartOffset()), l.HighWatermark())
		default:
			return nil, fmt.Errorf("consumer: ResetTo says nothing")
		}
		out[tp] = off
		offsets[coordinator.TopicPartition(tp)] = coordinator.OffsetAndMetadata{Offset: off, LeaderEpoch: -1}
	}
	return out, coord.ResetOffsets(ctx, groupID, offsets)
}
