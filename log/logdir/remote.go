package logdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/kafkalite/kafkalite/internal/remotecodec"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// ReadRemoteSegments replays the __remote_log_metadata partitions of the
// log directory dir and returns the segment copies recorded there that
// are not deleted (DELETE_SEGMENT_FINISHED), each with its latest state,
// in the order they were announced. A copy's record carries its
// partition (ID.Topic, ID.Partition), offsets, size and leader epochs; a
// later state change sets State, EventTimestamp, BrokerID and, when given,
// CustomMetadata. The records are taken as they stand, without the
// checks of the order of states that a log.Dir makes when it replays
// them.
//
// Each partition's segments are read in offset order up to a torn tail,
// where recovery would cut them. A batch or a record that does not decode
// is skipped: the copies read are returned with those errors joined, each
// matching [ErrCorrupt]. A directory without __remote_log_metadata has
// none.
func ReadRemoteSegments(dir string) ([]remote.SegmentMetadata, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	copies := map[remote.SegmentID]*remote.SegmentMetadata{}
	var order []remote.SegmentID
	var errs []error
	for _, e := range entries {
		pd, err := log.ParsePartitionDir(e.Name())
		if err != nil || pd.Kind != log.LivePartitionDir || pd.Topic != log.RemoteLogMetadataTopic {
			continue
		}
		err = readRemoteMetadata(filepath.Join(dir, e.Name()), func(v remotecodec.Record) {
			switch r := v.(type) {
			case remotecodec.RemoteLogSegmentMetadataRecord:
				m := segmentMetadata(r)
				if _, ok := copies[m.ID]; !ok {
					order = append(order, m.ID)
				}
				copies[m.ID] = &m
			case remotecodec.RemoteLogSegmentMetadataUpdateRecord:
				if m := copies[segmentID(r.RemoteLogSegmentID)]; m != nil {
					m.State, m.EventTimestamp, m.BrokerID = remote.SegmentState(r.RemoteLogSegmentState), r.EventTimestampMs, r.BrokerID
					if r.CustomMetadata != nil {
						m.CustomMetadata = r.CustomMetadata
					}
				}
			}
			// A partition's deletion and snapshots (which kafkalite does
			// not write) name no copy.
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.Name(), err))
		}
	}
	var out []remote.SegmentMetadata
	for _, id := range order {
		if m := copies[id]; m.State != remote.DeleteSegmentFinished {
			out = append(out, *m)
		}
	}
	return out, errors.Join(errs...)
}

// readRemoteMetadata decodes every record of one __remote_log_metadata
// partition directory, its segments in offset order.
func readRemoteMetadata(dir string, fn func(remotecodec.Record)) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var bases []int64
	for _, e := range entries {
		if base, suffix, err := segment.ParseFileName(e.Name()); err == nil && suffix == segment.LogSuffix {
			bases = append(bases, base)
		}
	}
	slices.Sort(bases)
	r := record.NewReader(record.ReaderOptions{})
	var errs []error
	for _, base := range bases {
		b, err := os.ReadFile(filepath.Join(dir, segment.FileName(base, segment.LogSuffix)))
		if err != nil {
			return err
		}
		for pos := 0; pos < len(b); {
			n, err := record.BatchSize(b[pos:])
			if err != nil || pos+n > len(b) {
				break // a torn tail: what recovery would truncate
			}
			if err := r.Reset(b[pos : pos+n]); err != nil {
				errs = append(errs, &corruptError{fmt.Errorf("batch at %d: %w", pos, err)})
				pos += n
				continue
			}
			for r.Next() {
				if v, err := remotecodec.ParseValue(r.Record().Value); err == nil {
					fn(v)
				} else {
					errs = append(errs, mark(fmt.Errorf("offset %d: %w", r.Record().Offset, err)))
				}
			}
			pos += n
		}
	}
	return errors.Join(errs...)
}

// segmentMetadata is a copy's announcement as package remote describes a
// copy.
func segmentMetadata(r remotecodec.RemoteLogSegmentMetadataRecord) remote.SegmentMetadata {
	m := remote.SegmentMetadata{ID: segmentID(r.RemoteLogSegmentID), StartOffset: r.StartOffset, EndOffset: r.EndOffset,
		MaxTimestamp: r.MaxTimestampMs, SizeInBytes: r.SegmentSizeInBytes, TxnIndexEmpty: r.TxnIndexEmpty,
		State: remote.SegmentState(r.RemoteLogSegmentState), EventTimestamp: r.EventTimestampMs, BrokerID: r.BrokerID,
		CustomMetadata: r.CustomMetadata}
	for _, e := range r.SegmentLeaderEpochs {
		m.LeaderEpochs = append(m.LeaderEpochs, remote.EpochStart{LeaderEpoch: e.LeaderEpoch, StartOffset: e.Offset})
	}
	return m
}

func segmentID(id remotecodec.RemoteLogSegmentID) remote.SegmentID {
	return remote.SegmentID{Topic: id.TopicIdPartition.Name, TopicID: id.TopicIdPartition.ID,
		Partition: id.TopicIdPartition.Partition, ID: id.ID}
}
