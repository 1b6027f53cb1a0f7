package migrate

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/twmb/franz-go/pkg/kadm"
)

// maxListedDifferences bounds the differences a report lists (all are
// counted).
const maxListedDifferences = 100

// VerifyReport is what Verify compared and found.
type VerifyReport struct {
	Partitions int
	Records    int64 // source records compared
	Groups     int
	// Differences lists the first differences found; Different counts all.
	Differences []string
	Different   int
}

func (v *VerifyReport) differ(format string, args ...any) {
	v.Different++
	if len(v.Differences) < maxListedDifferences {
		v.Differences = append(v.Differences, fmt.Sprintf(format, args...))
	}
}

// Print writes the report for a person.
func (v *VerifyReport) Print(w io.Writer) {
	if v.Different == 0 {
		fmt.Fprintf(w, "migrate: verify: %d partitions, %d records and %d groups: both sides agree\n", v.Partitions, v.Records, v.Groups)
		return
	}
	fmt.Fprintf(w, "migrate: verify: %d differences in %d partitions, %d records and %d groups:\n", v.Different, v.Partitions, v.Records, v.Groups)
	for _, d := range v.Differences {
		fmt.Fprintf(w, "  %s\n", d)
	}
	if v.Different > len(v.Differences) {
		fmt.Fprintf(w, "  ... and %d more\n", v.Different-len(v.Differences))
	}
}

// Verify compares both sides of the migration the options describe, from
// its state: every copied source record must be at its mapped offset in
// the target, with the same key, value, headers and timestamp (and, from
// a cluster, timestamp type), the target must hold nothing else in the
// ranges the migration wrote, and each copied group's offsets on the target
// must be the translation of its offsets at the source. It returns
// ErrDifferent, with the report, if anything differs.
func Verify(ctx context.Context, o Options) (*VerifyReport, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	store := stateStore{dir: o.StateDir}
	st, err := store.load()
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("%w: no migration state in %s: verify compares what a migration copied", ErrState, o.StateDir)
	}
	if st.Direction != o.Direction.String() {
		return nil, fmt.Errorf("%w: %s holds a migration %s, not %s", ErrState, o.StateDir, st.Direction, o.Direction)
	}
	d, err := openSourceDir(ctx, o.Dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	cl, err := newClient(&o)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: reaching the cluster: %w", err)
	}
	if md.Cluster != st.ClusterID || d.ClusterID() != st.DirClusterID {
		return nil, fmt.Errorf("%w: %s belongs to a migration between directory %s and cluster %s, not %s and %s",
			ErrState, o.StateDir, st.DirClusterID, st.ClusterID, d.ClusterID(), md.Cluster)
	}
	rep := &VerifyReport{}
	for _, key := range slices.Sorted(maps.Keys(st.Partitions)) {
		ps := st.Partitions[key]
		l, err := d.Partition(ps.Topic, ps.Partition)
		if err != nil {
			rep.differ("%s: not in the directory: %v", key, err)
			continue
		}
		var source, target recordReader
		withType := o.Direction == FromCluster
		if o.Direction == ToCluster {
			source = newDirReader(l, max(ps.SrcStart, l.LogStartOffset()), ps.SrcNext)
			target = newClusterReader(cl, ps.Topic, ps.Partition, ps.TgtStart, ps.TgtNext, false)
		} else {
			source = newClusterReader(cl, ps.Topic, ps.Partition, ps.SrcStart, ps.SrcNext, true)
			target = newDirReader(l, max(ps.TgtStart, l.LogStartOffset()), ps.TgtNext)
		}
		n, err := comparePartition(ctx, key, ps, source, target, withType, rep)
		rep.Records += n
		rep.Partitions++
		if err != nil {
			return rep, err
		}
	}
	if o.Direction == ToCluster {
		if err := verifyGroups(ctx, d, adm, st, rep); err != nil {
			return rep, err
		}
	}
	if rep.Different > 0 {
		return rep, fmt.Errorf("%w: %d differences", ErrDifferent, rep.Different)
	}
	return rep, nil
}

// comparePartition walks the source's records and the target's together:
// each source record must be at its mapped offset in the target, and the
// target must hold nothing between them.
func comparePartition(ctx context.Context, key string, ps *partitionState, source, target recordReader, withType bool, rep *VerifyReport) (int64, error) {
	var n int64
	t, err := target.next(ctx)
	if err != nil {
		return n, err
	}
	for {
		s, err := source.next(ctx)
		if err != nil {
			return n, err
		}
		if s == nil {
			break
		}
		n++
		want, ok := ps.m.lookup(s.Offset)
		if !ok {
			rep.differ("%s: the source's record at %d was not copied", key, s.Offset)
			continue
		}
		for t != nil && t.Offset < want {
			rep.differ("%s: the target holds a record at %d that is no source record", key, t.Offset)
			if t, err = target.next(ctx); err != nil {
				return n, err
			}
		}
		if t == nil || t.Offset != want {
			rep.differ("%s: the source's record at %d is missing at %d in the target", key, s.Offset, want)
			continue
		}
		if d := difference(s, t, withType); d != "" {
			rep.differ("%s: the source's record at %d differs at %d in the target: %s", key, s.Offset, want, d)
		}
		if t, err = target.next(ctx); err != nil {
			return n, err
		}
	}
	for t != nil {
		rep.differ("%s: the target holds a record at %d that is no source record", key, t.Offset)
		if t, err = target.next(ctx); err != nil {
			return n, err
		}
	}
	return n, nil
}

// verifyGroups checks that each group the migration committed has, on the
// target, the translation of its offsets at the source.
func verifyGroups(ctx context.Context, d *log.Dir, adm *kadm.Client, st *state, rep *VerifyReport) error {
	groups := make([]string, 0, len(st.Groups))
	for g := range st.Groups {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	for _, g := range groups {
		rep.Groups++
		desc, err := consumer.DescribeGroup(ctx, d, g)
		if err != nil {
			return err
		}
		var current kadm.OffsetResponses
		err = retryCoordinator(ctx, func() (err error) {
			current, err = adm.FetchOffsets(ctx, g)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate: fetching group %s's offsets on the target: %w", g, err)
		}
		for tp, om := range desc.Offsets {
			key := tpKey(tp.Topic, tp.Partition)
			ps := st.Partitions[key]
			if ps == nil {
				continue
			}
			want := ps.m.translate(om.Offset, ps.TgtNext)
			got, ok := current.Lookup(tp.Topic, tp.Partition)
			switch {
			case !ok || got.Err != nil:
				rep.differ("group %s: %s: no offset on the target, want %d (source %d)", g, key, want, om.Offset)
			case got.At != want:
				rep.differ("group %s: %s: offset %d on the target, want %d (source %d)", g, key, got.At, want, om.Offset)
			case got.Metadata != om.Metadata:
				rep.differ("group %s: %s: metadata %q on the target, want %q", g, key, got.Metadata, om.Metadata)
			}
		}
	}
	return nil
}
