package log

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Topic names and partition directory names (Kafka's Topic.java and
// LocalLog.java).
//
// A topic name is 1–249 characters of [a-zA-Z0-9._-], and not "." or "..".
// So it can never hold a path separator, a NUL byte or whitespace, and
// "<topic>-<partition>" is always a single, safe path element.
//
// A partition lives in the directory "<topic>-<partition>" (orders-3). Kafka
// renames a directory to "<topic>-<partition>.<uuid>-delete" when the topic
// is deleted (asynchronous deletion), "...-future" while a replica moves
// between log directories, and "...-stray" for a KRaft replica the node no
// longer hosts; <uuid> is a random UUID printed as 32 lowercase hex digits.
// For -delete and -stray Kafka truncates the topic part so that the whole
// name fits 255 characters.

// maxTopicNameLen is Kafka's limit on a topic name's length.
const maxTopicNameLen = 249

// internalTopics are the names Kafka reserves for its own topics.
var internalTopics = map[string]bool{
	"__consumer_offsets":   true, // group coordinator
	"__transaction_state":  true, // transaction coordinator
	"__share_group_state":  true, // share coordinator
	"__cluster_metadata":   true, // the KRaft metadata log
	RemoteLogMetadataTopic: true, // tiered storage's metadata
}

// ErrInvalidTopicName is matched by [*TopicNameError].
var ErrInvalidTopicName = errors.New("log: invalid topic name")

// TopicNameError says why a topic name is invalid. It matches
// [ErrInvalidTopicName].
type TopicNameError struct {
	Name   string
	Reason string
}

func (e *TopicNameError) Error() string {
	return fmt.Sprintf("log: invalid topic name %q: %s", e.Name, e.Reason)
}

// Is matches ErrInvalidTopicName.
func (e *TopicNameError) Is(target error) bool { return target == ErrInvalidTopicName }

// ValidateTopicName applies Kafka's rules: non-empty, not "." or "..", at
// most 249 characters, only ASCII letters, digits, '.', '_' and '-'.
func ValidateTopicName(name string) error {
	reason := ""
	switch {
	case name == "":
		reason = "the empty string is not allowed"
	case name == "." || name == "..":
		reason = "'.' and '..' are not allowed"
	case !validTopicChars(name):
		reason = "contains characters other than ASCII alphanumerics, '.', '_' and '-'"
	case len(name) > maxTopicNameLen:
		reason = fmt.Sprintf("longer than %d characters", maxTopicNameLen)
	default:
		return nil
	}
	return &TopicNameError{Name: name, Reason: reason}
}

func validTopicChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// TopicNamesCollide reports whether a and b are equal once '.' is replaced
// by '_' (Kafka's metric names cannot tell them apart, so Kafka refuses to
// create a topic colliding with an existing one). Equal names collide.
func TopicNamesCollide(a, b string) bool {
	return len(a) == len(b) && strings.ReplaceAll(a, ".", "_") == strings.ReplaceAll(b, ".", "_")
}

// internalTopicConfigs are the topic configurations Kafka gives the
// internal topics the coordinators keep (GroupCoordinator's and
// TransactionStateManager's offsetsTopicConfigs / transactionTopicConfigs,
// with offsets.topic.segment.bytes and transaction.state.log.segment.bytes
// at their defaults). A directory a broker wrote does not say them (the
// broker keeps them in its metadata log), so adoption gives them these.
var internalTopicConfigs = map[string]map[string]string{
	"__consumer_offsets":  {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"},
	"__transaction_state": {"cleanup.policy": "compact", "compression.type": "uncompressed", "segment.bytes": "104857600"},
	// TopicBasedRemoteLogMetadataManager's: deleted never
	// (remote.log.metadata.topic.retention.ms -1).
	RemoteLogMetadataTopic: {"cleanup.policy": "delete", "retention.ms": "-1"},
}

// IsInternalTopic reports whether name is one of Kafka's reserved topics:
// __consumer_offsets, __transaction_state, __share_group_state, the KRaft
// metadata log __cluster_metadata, and tiered storage's
// __remote_log_metadata.
func IsInternalTopic(name string) bool { return internalTopics[name] }

// PartitionDirName returns the directory name of a partition:
// "<topic>-<partition>".
//
// REQUIRES: topic is valid ([ValidateTopicName]) and partition ≥ 0;
// otherwise the name does not parse back.
func PartitionDirName(topic string, partition int32) string {
	return topic + "-" + strconv.FormatInt(int64(partition), 10)
}

// PartitionDirKind says what a partition directory is for.
type PartitionDirKind int8

// The kinds of partition directory.
const (
	LivePartitionDir    PartitionDirKind = iota // "<topic>-<p>": the partition's log
	DeletedPartitionDir                         // "<topic>-<p>.<uuid>-delete": awaiting removal
	FuturePartitionDir                          // "<topic>-<p>.<uuid>-future": a replica being moved in
	StrayPartitionDir                           // "<topic>-<p>.<uuid>-stray": a replica the node no longer hosts
)

var partitionDirSuffixes = [...]string{"", "-delete", "-future", "-stray"}

func (k PartitionDirKind) String() string {
	switch k {
	case LivePartitionDir:
		return "live"
	case DeletedPartitionDir:
		return "delete"
	case FuturePartitionDir:
		return "future"
	case StrayPartitionDir:
		return "stray"
	}
	return fmt.Sprintf("PartitionDirKind(%d)", int8(k))
}

// PartitionDir is a parsed partition directory name.
type PartitionDir struct {
	Topic     string // for -delete and -stray, possibly truncated by Kafka
	Partition int32
	Kind      PartitionDirKind
	UniqueID  string // the 32 hex digits of a special directory; "" for a live one
}

// String returns the directory name.
func (d PartitionDir) String() string {
	name := PartitionDirName(d.Topic, d.Partition)
	if d.Kind <= LivePartitionDir || int(d.Kind) >= len(partitionDirSuffixes) {
		return name
	}
	return name + "." + d.UniqueID + partitionDirSuffixes[d.Kind]
}

// Partition directory errors.
var (
	// ErrInvalidPartitionDir: a name that is not a partition directory
	// name. Kafka refuses to start on such a directory in a log dir.
	ErrInvalidPartitionDir = errors.New("log: not a partition directory name")
	// ErrSpecialPartitionDir: a partition directory Kafka renamed for
	// deletion, a move between log dirs, or as a stray; not a live log.
	// Each kind also matches its own sentinel below.
	ErrSpecialPartitionDir = errors.New("log: partition directory marked -delete, -future or -stray")
	// ErrDeletedPartitionDir: "<topic>-<p>.<uuid>-delete", a deleted
	// topic's partition awaiting removal. Matches ErrSpecialPartitionDir.
	ErrDeletedPartitionDir = errors.New("log: partition directory marked for deletion")
	// ErrFuturePartitionDir: "<topic>-<p>.<uuid>-future", a replica being
	// moved from another log dir. Matches ErrSpecialPartitionDir.
	ErrFuturePartitionDir = errors.New("log: future partition directory")
	// ErrStrayPartitionDir: "<topic>-<p>.<uuid>-stray", a replica Kafka
	// found it no longer hosts. Matches ErrSpecialPartitionDir.
	ErrStrayPartitionDir = errors.New("log: stray partition directory")
)

var specialDirErrs = [...]error{nil, ErrDeletedPartitionDir, ErrFuturePartitionDir, ErrStrayPartitionDir}

// PartitionDirError describes a directory name that is not a live
// partition's. Err is ErrSpecialPartitionDir (Kind says which, and the
// error also matches that kind's sentinel, e.g. [ErrDeletedPartitionDir])
// or ErrInvalidPartitionDir; for an invalid topic part, it also matches
// [ErrInvalidTopicName].
type PartitionDirError struct {
	Name   string
	Kind   PartitionDirKind // for ErrSpecialPartitionDir
	Reason string           // for ErrInvalidPartitionDir
	Err    error
	topic  error // the *TopicNameError behind an invalid topic part
}

func (e *PartitionDirError) Error() string {
	if e.Err == ErrSpecialPartitionDir {
		return fmt.Sprintf("log: partition directory %q is marked %s", e.Name, e.Kind)
	}
	return fmt.Sprintf("log: %q is not a partition directory name: %s", e.Name, e.Reason)
}

// Unwrap returns Err, and the kind's sentinel of a special directory or
// the topic name error of an invalid one.
func (e *PartitionDirError) Unwrap() []error {
	switch {
	case e.topic != nil:
		return []error{e.Err, e.topic}
	case e.Err == ErrSpecialPartitionDir && e.Kind > LivePartitionDir && int(e.Kind) < len(specialDirErrs):
		return []error{e.Err, specialDirErrs[e.Kind]}
	}
	return []error{e.Err}
}

// ParsePartitionDir parses any partition directory name, live or special.
// The partition is decimal without sign or leading zeros (so each partition
// has exactly one name), at most 2^31-1; the topic part must be a valid
// topic name; a special directory's unique id is 32 lowercase hex digits,
// as Kafka writes it. Anything else is an error matching
// [ErrInvalidPartitionDir].
func ParsePartitionDir(name string) (PartitionDir, error) {
	bad := func(reason string) (PartitionDir, error) {
		return PartitionDir{}, &PartitionDirError{Name: name, Reason: reason, Err: ErrInvalidPartitionDir}
	}
	var d PartitionDir
	rest := name
	for k := DeletedPartitionDir; k <= StrayPartitionDir; k++ {
		if s, ok := strings.CutSuffix(name, partitionDirSuffixes[k]); ok {
			dot := strings.LastIndexByte(s, '.')
			if dot < 0 || !isUniqueID(s[dot+1:]) {
				return bad(fmt.Sprintf("a %s directory needs .<32 lowercase hex digits> before %s", k, partitionDirSuffixes[k]))
			}
			d.Kind, d.UniqueID, rest = k, s[dot+1:], s[:dot]
			break
		}
	}
	dash := strings.LastIndexByte(rest, '-')
	if dash < 0 {
		return bad("no '-' before the partition number")
	}
	topic, p := rest[:dash], rest[dash+1:]
	if err := ValidateTopicName(topic); err != nil {
		return PartitionDir{}, &PartitionDirError{Name: name, Reason: "invalid topic part", Err: ErrInvalidPartitionDir, topic: err}
	}
	if !isDigits(p) || (len(p) > 1 && p[0] == '0') {
		return bad(fmt.Sprintf("partition %q is not a decimal number without sign or leading zeros", p))
	}
	n, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		return bad(fmt.Sprintf("partition %s is out of range", p))
	}
	d.Topic, d.Partition = topic, int32(n)
	return d, nil
}

// ParsePartitionDirName parses a live partition's directory name,
// "<topic>-<partition>", splitting at the last '-' (topic names may contain
// '-'). For a -delete, -future or -stray directory it returns the topic and
// partition with an error matching [ErrSpecialPartitionDir] and the kind's
// own sentinel ([ErrDeletedPartitionDir], [ErrFuturePartitionDir],
// [ErrStrayPartitionDir]); use [ParsePartitionDir] for its unique id. Other names are errors matching [ErrInvalidPartitionDir].
func ParsePartitionDirName(name string) (topic string, partition int32, err error) {
	d, err := ParsePartitionDir(name)
	if err != nil {
		return "", 0, err
	}
	if d.Kind != LivePartitionDir {
		return d.Topic, d.Partition, &PartitionDirError{Name: name, Kind: d.Kind, Err: ErrSpecialPartitionDir}
	}
	return d.Topic, d.Partition, nil
}

func isUniqueID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
