// Package migrate moves data between a kafkalite directory and an Apache
// Kafka cluster, through Kafka's client protocol (franz-go's kgo): the way
// out when an application outgrows one machine, and the way back when a
// test or a developer wants a slice of a cluster's traffic locally.
//
// To the cluster (Run with ToCluster): every user topic of the directory,
// or those named, is created on the cluster if missing, with the same
// partition count and the topic configs Kafka accepts, and every
// partition's committed records are produced to the same partition, in
// order, by an idempotent producer, keeping key, value, headers and
// timestamp. Records of aborted transactions and transaction markers are
// not copied; a partition with an open transaction is refused
// (ErrOpenTransaction). When the target partition is empty and the source
// offsets are dense (starting at 0, no compaction gaps, no transaction
// markers), every record keeps its offset; otherwise the offsets move and
// the partition's offset map in the state directory says where each record
// went. The consumer groups' committed offsets are then translated through
// the maps and committed on the cluster, for groups with no members there
// (ErrGroupNotEmpty otherwise).
//
// From the cluster (Run with FromCluster): the named topics, or the part of
// them since a time, are copied into the directory with the same rules. The
// records are written by replica appends, so that they keep their
// offsets (gaps included) and timestamps, and batches keep their codec and
// timestamp type; into a partition that already holds later offsets they
// are appended after its end, through an offset map.
//
// A migration keeps its state (per partition: where the copy stands, and
// the offset map) in a state directory, by default the kafkalite
// directory's path with ".migrate" appended. A run stopped at any moment,
// kill -9 included, continues where it stopped when started again: records
// the target acknowledged after the last saved state are found by reading
// the target's tail and matching it, record by record, against the
// source, so that nothing is copied twice or skipped. Run again after it
// finished, a migration copies what the source gained since (and
// recommits the groups). Verify compares both sides record by record and
// group by group.
package migrate

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

var (
	// ErrState means the state directory cannot be used: unreadable,
	// damaged, or written by a migration between other endpoints.
	ErrState = errors.New("migrate: unusable state")
	// ErrOpenTransaction means a source partition holds a transaction that
	// is neither committed nor aborted: commit or abort it first.
	ErrOpenTransaction = errors.New("migrate: open transaction at the source")
	// ErrGroupNotEmpty means a consumer group has members on the target, so
	// its offsets were not committed: stop its consumers and run again.
	ErrGroupNotEmpty = errors.New("migrate: group has members on the target")
	// ErrPartitionCount means a topic exists on both sides with different
	// partition counts: records would not land where their keys put them.
	ErrPartitionCount = errors.New("migrate: partition counts differ")
	// ErrTargetChanged means a target partition holds, where the migration
	// wrote or was about to write, records it did not write, or lost
	// records it wrote.
	ErrTargetChanged = errors.New("migrate: target changed behind the migration")
	// ErrDifferent is Verify's: the two sides differ.
	ErrDifferent = errors.New("migrate: source and target differ")
	// ErrUsage means the options are incomplete or contradict each other.
	ErrUsage = errors.New("migrate: bad options")
)

// Direction says which way a migration copies.
type Direction int8

const (
	// ToCluster copies a kafkalite directory into a Kafka cluster.
	ToCluster Direction = iota + 1
	// FromCluster copies a Kafka cluster's topics into a kafkalite
	// directory.
	FromCluster
)

func (d Direction) String() string {
	switch d {
	case ToCluster:
		return toCluster
	case FromCluster:
		return fromCluster
	}
	return "direction(" + strconv.Itoa(int(d)) + ")"
}

// Options configure a migration.
type Options struct {
	Direction Direction
	// Dir is the kafkalite directory (created if missing, FromCluster).
	Dir string
	// Brokers are the cluster's bootstrap servers (host:port).
	Brokers []string
	// Topics to copy; empty means every user topic of the directory
	// (ToCluster) and is refused FromCluster, where they must be named.
	Topics []string
	// Groups whose offsets are copied (ToCluster); empty means every group
	// with offsets on a copied topic. NoGroups copies none.
	Groups   []string
	NoGroups bool
	// Since copies, FromCluster, only the records from the first one at or
	// after this time (ListOffsets by timestamp); the zero time copies
	// everything the cluster still has.
	Since time.Time
	// StateDir keeps the migration's progress and offset maps; default
	// Dir + ".migrate".
	StateDir string
	// Compression is the producer's codec to the cluster: none, gzip,
	// snappy, lz4 (the default) or zstd. The topic's compression.type, if
	// copied, still rules how the broker stores batches.
	Compression string
	// ReplicationFactor of the topics created on the cluster; 0 or -1 is
	// the broker's default.replication.factor.
	ReplicationFactor int16
	// DryRun prints the plan and changes nothing.
	DryRun bool
	// ClientOpts are added to the Kafka client's options: TLS, SASL, a
	// client id.
	ClientOpts []kgo.Opt
	// Out receives the plan, the progress and the summary; nil discards
	// them. ProgressBar draws a bar redrawn in place (for a terminal)
	// instead of a progress line every ProgressEvery (default 5s).
	Out           io.Writer
	ProgressBar   bool
	ProgressEvery time.Duration
	// CheckpointEvery is how often progress is saved while copying
	// (default 1s); it is saved at the end in any case.
	CheckpointEvery time.Duration
	// Logger gets a line at each step; nil discards.
	Logger *slog.Logger
}

func (o *Options) defaults() error {
	switch o.Direction {
	case ToCluster, FromCluster:
	default:
		return fmt.Errorf("%w: no direction", ErrUsage)
	}
	if o.Dir == "" {
		return fmt.Errorf("%w: no kafkalite directory", ErrUsage)
	}
	if len(o.Brokers) == 0 {
		return fmt.Errorf("%w: no brokers", ErrUsage)
	}
	if o.Direction == FromCluster && len(o.Topics) == 0 {
		return fmt.Errorf("%w: name the topics to copy from the cluster", ErrUsage)
	}
	if o.Direction == ToCluster && !o.Since.IsZero() {
		return fmt.Errorf("%w: a time to start from applies to copies from the cluster", ErrUsage)
	}
	if o.StateDir == "" {
		o.StateDir = strings.TrimRight(o.Dir, `/\`) + ".migrate"
	}
	if o.Compression == "" {
		o.Compression = "lz4"
	}
	if o.ReplicationFactor == 0 {
		o.ReplicationFactor = -1
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 5 * time.Second
	}
	if o.CheckpointEvery <= 0 {
		o.CheckpointEvery = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// LooksLikeBrokers reports whether s reads as a bootstrap list
// (host:port[,host:port...]) rather than a directory path.
func LooksLikeBrokers(s string) bool {
	if s == "" || strings.ContainsAny(s, `/\`) {
		return false
	}
	for hp := range strings.SplitSeq(s, ",") {
		_, port, err := net.SplitHostPort(strings.TrimSpace(hp))
		if err != nil {
			return false
		}
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return false
		}
	}
	return true
}

// Summary is what a run did.
type Summary struct {
	Direction  Direction
	Partitions []PartitionSummary
	Groups     []GroupSummary
	// Notes are things the user should know: configs not copied,
	// timestamp types changed, records retention removed meanwhile.
	Notes   []string
	Records int64 // copied by this run
	Bytes   int64 // keys, values and headers copied by this run
	Elapsed time.Duration
}

// PartitionSummary is one partition's outcome.
type PartitionSummary struct {
	Topic     string
	Partition int32
	// Records and Bytes were copied by this run; TotalRecords by all runs.
	Records, Bytes, TotalRecords int64
	// SrcStart..SrcNext is the source range copied so far, TgtStart..TgtNext
	// where it went.
	SrcStart, SrcNext, TgtStart, TgtNext int64
	// Identical is set when every copied record kept its offset.
	Identical bool
	// MapFile is the offset map (in the state directory).
	MapFile string
}

// GroupSummary is one consumer group's outcome.
type GroupSummary struct {
	Group string
	// Committed is the number of partition offsets committed on the target.
	Committed int
	// Skipped says why the group was left alone, if it was.
	Skipped string
}

// Print writes the summary for a person.
func (s *Summary) Print(w io.Writer) {
	fmt.Fprintf(w, "migrate: %s: %d records, %s in %s (%s)\n", s.Direction, s.Records, formatBytes(s.Bytes),
		s.Elapsed.Round(time.Millisecond), rate(s.Records, s.Bytes, s.Elapsed))
	for _, p := range s.Partitions {
		offsets := "offsets identical"
		if !p.Identical {
			offsets = "offsets mapped, see " + p.MapFile
		}
		fmt.Fprintf(w, "  %s-%d: %d records this run (%d in all), source [%d, %d) -> target [%d, %d), %s\n",
			p.Topic, p.Partition, p.Records, p.TotalRecords, p.SrcStart, p.SrcNext, p.TgtStart, p.TgtNext, offsets)
	}
	for _, g := range s.Groups {
		if g.Skipped != "" {
			fmt.Fprintf(w, "  group %s: left alone: %s\n", g.Group, g.Skipped)
			continue
		}
		fmt.Fprintf(w, "  group %s: %d offsets committed\n", g.Group, g.Committed)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

func rate(records, bytes int64, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	s := d.Seconds()
	return fmt.Sprintf("%.0f records/s, %s/s", float64(records)/s, formatBytes(int64(float64(bytes)/s)))
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
