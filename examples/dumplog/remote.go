package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kafkalite/kafkalite/internal/remotecodec"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// remoteCopy is a segment copy's last known state, from
// __remote_log_metadata.
type remoteCopy struct {
	partition string // <topic>-<partition>
	id        string
	meta      remotecodec.RemoteLogSegmentMetadataRecord
	state     remotecodec.RemoteLogSegmentState
}

// dumpRemoteSegments prints, after a log directory's partitions, the
// segments of its tiered partitions that are in remote storage, as its
// __remote_log_metadata partitions record them (replayed in order, each
// copy with its latest state; those whose deletion finished are gone).
func (d *dumper) dumpRemoteSegments(dir string) {
	if !d.text() {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	copies := map[string]*remoteCopy{}
	var order []string
	for _, e := range entries {
		pd, err := log.ParsePartitionDir(e.Name())
		if err != nil || pd.Kind != log.LivePartitionDir || pd.Topic != log.RemoteLogMetadataTopic {
			continue
		}
		if err := readRemoteMetadata(filepath.Join(dir, e.Name()), func(v remotecodec.Record) {
			switch r := v.(type) {
			case remotecodec.RemoteLogSegmentMetadataRecord:
				id := remoteID(r.RemoteLogSegmentID)
				if _, ok := copies[id]; !ok {
					order = append(order, id)
				}
				tip := r.RemoteLogSegmentID.TopicIdPartition
				copies[id] = &remoteCopy{partition: fmt.Sprintf("%s-%d", tip.Name, tip.Partition), id: id, meta: r,
					state: r.RemoteLogSegmentState}
			case remotecodec.RemoteLogSegmentMetadataUpdateRecord:
				if c := copies[remoteID(r.RemoteLogSegmentID)]; c != nil {
					c.state = r.RemoteLogSegmentState
				}
			}
		}); err != nil {
			d.fail(fmt.Errorf("%s: %w", e.Name(), err))
		}
	}
	var live []*remoteCopy
	for _, id := range order {
		if c := copies[id]; c.state != remotecodec.DeleteSegmentFinished {
			if d.opts.topic != "" && !strings.HasPrefix(c.partition, d.opts.topic+"-") {
				continue
			}
			live = append(live, c)
		}
	}
	if len(live) == 0 {
		return
	}
	slices.SortStableFunc(live, func(a, b *remoteCopy) int {
		return cmp.Or(strings.Compare(a.partition, b.partition), cmp.Compare(a.meta.StartOffset, b.meta.StartOffset))
	})
	d.printf("Remote segments (from %s):\n", log.RemoteLogMetadataTopic)
	for _, c := range live {
		d.printf("partition: %s startOffset: %d endOffset: %d size: %d maxTimestamp: %d state: %s id: %s\n",
			c.partition, c.meta.StartOffset, c.meta.EndOffset, c.meta.SegmentSizeInBytes, c.meta.MaxTimestampMs, c.state, c.id)
	}
}

func remoteID(id remotecodec.RemoteLogSegmentID) string {
	return fmt.Sprintf("%x", id.ID)
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
		if base, suffix, err := segment.ParseFileName(e.Name()); err == nil && suffix == ".log" {
			bases = append(bases, base)
		}
	}
	slices.Sort(bases)
	r := record.NewReader(record.ReaderOptions{})
	var errs []error
	for _, base := range bases {
		b, err := os.ReadFile(filepath.Join(dir, segment.FileName(base, ".log")))
		if err != nil {
			return err
		}
		for pos := 0; pos < len(b); {
			n, err := record.BatchSize(b[pos:])
			if err != nil || pos+n > len(b) {
				break // a torn tail: what recovery would truncate
			}
			if err := r.Reset(b[pos : pos+n]); err != nil {
				errs = append(errs, fmt.Errorf("batch at %d: %w", pos, err))
				pos += n
				continue
			}
			for r.Next() {
				if v, err := remotecodec.ParseValue(r.Record().Value); err == nil {
					fn(v)
				} else {
					errs = append(errs, fmt.Errorf("offset %d: %w", r.Record().Offset, err))
				}
			}
			pos += n
		}
	}
	return errors.Join(errs...)
}
