package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/logdir"
	"github.com/kafkalite/kafkalite/log/remote"
)

// dumpRemoteSegments prints, after a log directory's partitions, the
// segments of its tiered partitions that are in remote storage, as its
// __remote_log_metadata partitions record them (replayed in order, each
// copy with its latest state; those whose deletion finished are gone).
func (d *dumper) dumpRemoteSegments(dir string) {
	if !d.text() {
		return
	}
	copies, err := logdir.ReadRemoteSegments(dir)
	if err != nil {
		d.fail(err)
	}
	var live []remote.SegmentMetadata
	for _, c := range copies {
		if d.opts.topic != "" && !strings.HasPrefix(partitionName(c), d.opts.topic+"-") {
			continue
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return
	}
	slices.SortStableFunc(live, func(a, b remote.SegmentMetadata) int {
		return cmp.Or(strings.Compare(partitionName(a), partitionName(b)), cmp.Compare(a.StartOffset, b.StartOffset))
	})
	d.printf("Remote segments (from %s):\n", log.RemoteLogMetadataTopic)
	for _, c := range live {
		d.printf("partition: %s startOffset: %d endOffset: %d size: %d maxTimestamp: %d state: %s id: %x\n",
			partitionName(c), c.StartOffset, c.EndOffset, c.SizeInBytes, c.MaxTimestamp, c.State, c.ID.ID)
	}
}

// partitionName is a copy's partition as "<topic>-<partition>".
func partitionName(c remote.SegmentMetadata) string {
	return fmt.Sprintf("%s-%d", c.ID.Topic, c.ID.Partition)
}
