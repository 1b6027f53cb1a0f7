package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/log/share"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// A server with Config.Brokers above one serves its directory as a cluster
// of virtual brokers: broker ids the directory's node id and the ones
// after it, each served on its own listener ([Server.ServeBroker]). Each
// partition has a replica set among them and a leader, one of its
// replicas; a request that names a partition is served by its leader's
// connections only (route.go), Metadata, DescribeCluster and
// DescribeTopicPartitions list the brokers and the partitions' leaders,
// replicas and in-sync replicas, FindCoordinator gives the leader of the
// coordinator's partition of its internal topic. Leadership moves on
// ElectLeaders, on [Server.MoveLeader], and when a broker stops
// ([Server.StopBroker]): each move starts a new leader epoch in the
// partition's log ([log.Log.BecomeLeader]), so that clients holding the
// old one are fenced.
//
// The replicas are bookkeeping: one directory holds every partition's
// one log, which every leader serves. A stopped broker loses nothing, and
// a partition whose replicas are all stopped is offline (leader -1,
// LEADER_NOT_AVAILABLE in Metadata) until one of them starts again.
//
// The assignments (replicas, leader, leader epoch of each partition) are
// kept in the directory, in kafkalite-replica-assignments.json, written
// whole (a .tmp file, fsynced, renamed over it, the directory fsynced) at
// each change, so that leaders and epochs survive a restart:
//
//	{"version": 1, "topics": {"<topic>": {"id": "<topic id>",
//	  "partitions": [{"replicas": [1, 2, 3], "leader": 1, "leaderEpoch": 0}]}}}
//
// A topic the file does not list (one created before the cluster, or by
// the directory's own API) is given replicas when the cluster first sees
// it: the default replication factor's count of brokers (the internal
// topics': min(3, brokers), Kafka's offsets.topic.replication.factor and
// transaction.state.log.replication.factor), starting at a broker given by
// a hash of the topic's name and shifted by one per partition, the first
// replica leading. A topic deleted is dropped from the file at the next
// write, one re-created under the name (another id) assigned anew.

// Kafka's error codes of the cluster's answers.
const (
	coordinatorKeyTypeGroup        int8  = 0
	errNotCoordinator              int16 = 16
	errPreferredLeaderNotAvailable int16 = 80
	errEligibleLeadersNotAvailable int16 = 83
)

// Errors of the cluster's Go API.
var (
	// ErrUnknownBroker is a broker id the server does not serve.
	ErrUnknownBroker = errors.New("server: no such broker")
	// ErrNotReplica is a leader asked for that is not one of the
	// partition's replicas.
	ErrNotReplica = errors.New("server: the broker is not a replica of the partition")
	// ErrBrokerStopped is a leader asked for that is stopped.
	ErrBrokerStopped = errors.New("server: the broker is stopped")
	// ErrNotCluster is a cluster operation on a server of one broker.
	ErrNotCluster = errors.New("server: the server is not a cluster of virtual brokers (Config.Brokers is 1)")
	// ErrCorruptReplicaStore is matched by a [*log.CorruptStoreError]
	// for an unreadable kafkalite-replica-assignments.json.
	ErrCorruptReplicaStore = errors.New("server: corrupt replica assignment store")
)

const (
	replicaStoreFile    = "kafkalite-replica-assignments.json"
	replicaStoreVersion = 1
	// maxReplicaStoreBytes bounds what a load reads: the file of
	// Config.MaxPartitions partitions of a few brokers each is far
	// smaller.
	maxReplicaStoreBytes = 256 << 20
	// internalReplicationFactor is Kafka's default
	// offsets.topic.replication.factor and
	// transaction.state.log.replication.factor.
	internalReplicationFactor = 3
)

type replicaStoreDoc struct {
	Version *int                    `json:"version"`
	Topics  map[string]*storedTopic `json:"topics"`
}

type storedTopic struct {
	ID         string            `json:"id"`
	Partitions []storedPartition `json:"partitions"`
}

type storedPartition struct {
	Replicas    []int32 `json:"replicas"`
	Leader      int32   `json:"leader"`
	LeaderEpoch int32   `json:"leaderEpoch"`
}

// vbroker is one virtual broker's state.
type vbroker struct {
	host    string // advertised; empty until first served
	port    int32
	stopped bool
	ln      net.Listener          // while served
	conns   map[net.Conn]struct{} // its connections open
}

// cluster is a server's virtual brokers and its partitions' assignments.
type cluster struct {
	dir       *log.Dir
	fsys      vfs.FS
	ids       []int32 // ascending
	defaultRF int
	advHost   string // Config.AdvertisedAddr's host, "" for each listener's
	advPort   int32  // its port, the first broker's (the others' follow); 0 for each listener's
	lg        *slog.Logger

	mu      sync.Mutex // protects the following
	brokers map[int32]*vbroker
	topics  map[string]*storedTopic
}

func openCluster(d *log.Dir, cfg Config, lg *slog.Logger) (*cluster, error) {
	c := &cluster{dir: d, lg: lg, fsys: d.Config().FS, defaultRF: int(cfg.DefaultReplicationFactor), brokers: map[int32]*vbroker{}}
	if c.fsys == nil {
		c.fsys = vfs.Default
	}
	if adv := cmp.Or(cfg.AdvertisedAddr, firstAdvertised(cfg)); adv != "" {
		host, port, err := net.SplitHostPort(adv)
		if err != nil {
			return nil, fmt.Errorf("server: advertised address %q: %w", adv, err)
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("server: advertised port %q: %w", port, err)
		}
		if p != 0 && int(p)+cfg.Brokers-1 > 65535 {
			return nil, fmt.Errorf("server: advertised port %d: %d brokers need the ports up to %d", p, cfg.Brokers, int(p)+cfg.Brokers-1)
		}
		c.advHost, c.advPort = host, int32(p)
	}
	for i := range cfg.Brokers {
		id := d.NodeID() + int32(i)
		c.ids = append(c.ids, id)
		c.brokers[id] = &vbroker{conns: map[net.Conn]struct{}{}}
	}
	topics, err := c.load()
	if err != nil {
		return nil, err
	}
	c.topics = topics
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := false
	for _, name := range d.Topics() {
		_, ch, err := c.topicLocked(name)
		if err != nil && !errors.Is(err, log.ErrUnknownTopicOrPartition) {
			return nil, err
		}
		changed = changed || ch
	}
	// A leader epoch no batch reached is not in the log's checkpoint
	// after a restart: it is given to the log again.
	for name, st := range c.topics {
		for p, sp := range st.Partitions {
			if l, err := d.Partition(name, int32(p)); err == nil && sp.LeaderEpoch > l.LeaderEpoch() {
				if err := l.BecomeLeader(sp.LeaderEpoch); err != nil {
					return nil, err
				}
			}
		}
	}
	if changed {
		if err := c.persistLocked(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *cluster) load() (map[string]*storedTopic, error) {
	name := filepath.Join(c.dir.Path(), replicaStoreFile)
	corrupt := func(reason string, err error) error {
		return &log.CorruptStoreError{Store: ErrCorruptReplicaStore, File: name, Reason: reason, Err: err}
	}
	f, err := c.fsys.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*storedTopic{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	if size > maxReplicaStoreBytes {
		return nil, corrupt(fmt.Sprintf("%d bytes, more than %d", size, maxReplicaStoreBytes), nil)
	}
	data := make([]byte, size)
	if n, err := f.ReadAt(data, 0); err != nil && n != int(size) {
		return nil, err
	}
	var doc replicaStoreDoc
	if err := decodeStrict(data, &doc); err != nil {
		return nil, corrupt("not a JSON replica store: "+err.Error(), err)
	}
	switch {
	case doc.Version == nil:
		return nil, corrupt("no version", nil)
	case *doc.Version != replicaStoreVersion:
		return nil, corrupt(fmt.Sprintf("unsupported version %d", *doc.Version), nil)
	}
	if doc.Topics == nil {
		doc.Topics = map[string]*storedTopic{}
	}
	for topic, st := range doc.Topics {
		if st == nil {
			return nil, corrupt(fmt.Sprintf("topic %s: null", topic), nil)
		}
		for p, sp := range st.Partitions {
			if len(sp.Replicas) == 0 || sp.Leader != -1 && !slices.Contains(sp.Replicas, sp.Leader) || sp.LeaderEpoch < 0 {
				return nil, corrupt(fmt.Sprintf("%s-%d: leader %d of replicas %v, epoch %d", topic, p, sp.Leader, sp.Replicas, sp.LeaderEpoch), nil)
			}
		}
	}
	return doc.Topics, nil
}

// persistLocked writes the store, without the topics deleted since.
// REQUIRES c.mu held.
func (c *cluster) persistLocked() error {
	live := c.dir.Topics()
	for name := range c.topics {
		if !slices.Contains(live, name) {
			delete(c.topics, name)
		}
	}
	v := replicaStoreVersion
	data, err := json.Marshal(replicaStoreDoc{Version: &v, Topics: c.topics})
	if err != nil {
		return err
	}
	return checkpoint.WriteFileAtomic(c.fsys, filepath.Join(c.dir.Path(), replicaStoreFile), data)
}

// topicLocked is a topic's assignment, made (changed true) for a topic
// the store does not list or lists under another id, and for partitions
// added since. REQUIRES c.mu held.
func (c *cluster) topicLocked(name string) (*storedTopic, bool, error) {
	td, err := c.dir.DescribeTopic(name)
	if err != nil {
		return nil, false, err
	}
	id := fmt.Sprintf("%x", td.ID)
	st := c.topics[name]
	changed := false
	if st == nil || st.ID != id {
		st = &storedTopic{ID: id}
		c.topics[name] = st
		changed = true
	}
	rf := c.defaultRF
	if td.Internal {
		rf = min(internalReplicationFactor, len(c.ids))
	}
	if len(st.Partitions) > 0 {
		rf = len(st.Partitions[0].Replicas)
	}
	for p := int32(len(st.Partitions)); p < td.Partitions; p++ {
		st.Partitions = append(st.Partitions, c.placeLocked(name, p, rf, 0))
		changed = true
	}
	return st, changed, nil
}

// placeLocked is partition p's default placement: rf brokers from the
// topic's hashed start, shifted by p, led by the first alive.
func (c *cluster) placeLocked(name string, p int32, rf int, epoch int32) storedPartition {
	h := fnv.New32a()
	h.Write([]byte(name))
	start := int(h.Sum32() % uint32(len(c.ids)))
	sp := storedPartition{LeaderEpoch: epoch}
	for k := range rf {
		sp.Replicas = append(sp.Replicas, c.ids[(start+int(p)+k)%len(c.ids)])
	}
	sp.Leader = c.firstAliveLocked(sp.Replicas)
	return sp
}

func (c *cluster) firstAliveLocked(replicas []int32) int32 {
	for _, r := range replicas {
		if b := c.brokers[r]; b != nil && !b.stopped {
			return r
		}
	}
	return -1
}

// partitionState is a partition's assignment as the cluster reports it.
type partitionState struct {
	leader   int32 // -1: offline
	epoch    int32
	replicas []int32
	isr      []int32 // the replicas not stopped
	offline  []int32 // the replicas stopped
}

// partition is the state of a partition; ok false if the directory does
// not have it. A topic seen for the first time is assigned and stored.
func (c *cluster) partition(topic string, p int32) (partitionState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.partitionLocked(topic, p)
}

func (c *cluster) partitionLocked(topic string, p int32) (partitionState, bool) {
	st, changed, err := c.topicLocked(topic)
	if err != nil || p < 0 || int(p) >= len(st.Partitions) {
		return partitionState{}, false
	}
	if changed {
		if err := c.persistLocked(); err != nil {
			c.lg.Error("kafkaserver: writing the replica assignments failed", "err", err)
		}
	}
	sp := st.Partitions[p]
	ps := partitionState{leader: sp.Leader, epoch: sp.LeaderEpoch, replicas: slices.Clone(sp.Replicas), isr: []int32{}, offline: []int32{}}
	if l, err := c.dir.Partition(topic, p); err == nil {
		ps.epoch = max(ps.epoch, l.LeaderEpoch())
	}
	for _, r := range sp.Replicas {
		if b := c.brokers[r]; b != nil && !b.stopped {
			ps.isr = append(ps.isr, r)
		} else {
			ps.offline = append(ps.offline, r)
		}
	}
	return ps, true
}

// setLeaderLocked makes leader (-1: none) the partition's leader; a new
// leader starts a new epoch in the log. REQUIRES c.mu held; the caller
// persists.
func (c *cluster) setLeaderLocked(topic string, p int32, leader int32) (int32, error) {
	sp := &c.topics[topic].Partitions[p]
	sp.Leader = leader
	if leader < 0 {
		return sp.LeaderEpoch, nil
	}
	l, err := c.dir.Partition(topic, p)
	if err != nil {
		return 0, err
	}
	epoch := max(sp.LeaderEpoch, l.LeaderEpoch()) + 1
	if err := l.BecomeLeader(epoch); err != nil {
		return 0, err
	}
	sp.LeaderEpoch = epoch
	return epoch, nil
}

// reassign makes replicas partition p's replica set, stored before it
// returns; a leader not among them gives way to the first running one in
// a new leader epoch (offline if none runs).
func (c *cluster) reassign(topic string, p int32, replicas []int32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, _, err := c.topicLocked(topic)
	if err != nil {
		return err
	}
	if p < 0 || int(p) >= len(st.Partitions) {
		return fmt.Errorf("%w: %s-%d", log.ErrUnknownTopicOrPartition, topic, p)
	}
	st.Partitions[p].Replicas = slices.Clone(replicas)
	if !slices.Contains(replicas, st.Partitions[p].Leader) {
		if _, err := c.setLeaderLocked(topic, p, c.firstAliveLocked(replicas)); err != nil {
			return err
		}
	}
	return c.persistLocked()
}

// coordinatorPartition is Kafka's partition of a coordinator key in its
// internal topic: the key's Java hash code, made positive (Kafka's
// Utils.abs), modulo the topic's partitions.
func coordinatorPartition(key string, partitions int32) int32 {
	var h int32
	for _, r := range key {
		if r >= 0x10000 { // a UTF-16 surrogate pair
			r -= 0x10000
			h = 31*h + 0xD800 + int32(r>>10)
			h = 31*h + 0xDC00 + int32(r&0x3FF)
			continue
		}
		h = 31*h + int32(r)
	}
	if h == -1<<31 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % max(1, partitions)
}

// coordinatorTopic is the internal topic of a FindCoordinator key type and
// its partition count (the directory's setting until it exists).
func (c *cluster) coordinatorTopic(kind int8) (string, int32) {
	cfg := c.dir.Config()
	topic, n := coordinator.OffsetsTopic, cfg.OffsetsTopicNumPartitions
	switch kind {
	case coordinatorKeyTypeTransaction:
		topic, n = coordinator.TransactionStateTopic, cfg.TransactionStateNumPartitions
	case coordinatorKeyTypeShare:
		topic, n = share.StateTopic, 50 // share.coordinator.state.topic.num.partitions, as package share makes it
	}
	if td, err := c.dir.DescribeTopic(topic); err == nil {
		return topic, td.Partitions
	}
	return topic, int32(max(1, n))
}

// coordinatorOf is the broker leading the partition of key's coordinator,
// -1 when it is offline.
func (c *cluster) coordinatorOf(kind int8, key string) int32 {
	topic, n := c.coordinatorTopic(kind)
	p := coordinatorPartition(key, n)
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.partitionLocked(topic, p); ok {
		return ps.leader
	}
	// Not created yet: where its placement will put it.
	sp := c.placeLocked(topic, p, min(internalReplicationFactor, len(c.ids)), 0)
	return sp.Leader
}

// brokerAddr is broker id's advertised host and port; ok false while it
// is stopped or was never served.
func (c *cluster) brokerAddr(id int32) (string, int32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.brokers[id]
	if b == nil || b.stopped || b.host == "" {
		return "", 0, false
	}
	return b.host, b.port, true
}

// alive lists the brokers served and not stopped, ascending.
func (c *cluster) alive() []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int32
	for _, id := range c.ids {
		if b := c.brokers[id]; !b.stopped && b.host != "" {
			out = append(out, id)
		}
	}
	return out
}

type brokerKey struct{}

// firstAdvertised is the advertised address of Config.Listeners' first
// listener, the one a cluster serves; "" without listeners.
func firstAdvertised(cfg Config) string {
	if len(cfg.Listeners) == 0 {
		return ""
	}
	return cfg.Listeners[0].AdvertisedAddr
}

// brokerOf is the broker a request came to: the one of the listener its
// connection was accepted on, the directory's node id on a server of one
// broker.
func (s *Server) brokerOf(ctx context.Context) int32 {
	if id, ok := ctx.Value(brokerKey{}).(int32); ok {
		return id
	}
	return s.dir.NodeID()
}

// Brokers lists the server's broker ids, ascending: the directory's node
// id and, with Config.Brokers above one, the ones after it.
func (s *Server) Brokers() []int32 {
	if s.cluster == nil {
		return []int32{s.dir.NodeID()}
	}
	return slices.Clone(s.cluster.ids)
}

// ServeBroker serves broker id (one of [Server.Brokers]) on ln, as Serve
// serves the server's one broker: until ctx ends, Close is called or
// [Server.StopBroker] stops the broker (it then returns net.ErrClosed).
// Each broker advertises its own listener's address, or, when
// Config.AdvertisedAddr (or the first listener's) is set, its host and,
// unless its port is 0, that port for the first broker and the ones
// after it for the others, in id order (a proxy in front of each broker
// is then what clients reach). A broker stopped before is
// started again: the partitions it is a replica of and that have no
// leader (every replica stopped) elect it, with a new leader epoch.
func (s *Server) ServeBroker(ctx context.Context, id int32, ln net.Listener) error {
	c := s.cluster
	if c == nil {
		if id != s.dir.NodeID() {
			ln.Close()
			return fmt.Errorf("%w: %d", ErrUnknownBroker, id)
		}
		return s.Serve(ctx, ln)
	}
	// A cluster serves its first listener on every broker, each at its
	// own port.
	l := s.listeners[0]
	host, port, err := advertisedOf("", ln)
	if err != nil {
		ln.Close()
		return fmt.Errorf("server: broker %d: %w", id, err)
	}
	if c.advHost != "" {
		host = c.advHost
	}
	if i := slices.Index(c.ids, id); c.advPort != 0 && i >= 0 {
		port = c.advPort + int32(i)
	}
	bl := &brokerListener{Listener: ln, c: c, id: id}
	bound := &boundListener{Listener: l, host: host, port: port}
	bound.Addr = ln.Addr().String()
	c.mu.Lock()
	b := c.brokers[id]
	switch {
	case b == nil:
		c.mu.Unlock()
		ln.Close()
		return fmt.Errorf("%w: %d", ErrUnknownBroker, id)
	case b.ln != nil:
		c.mu.Unlock()
		ln.Close()
		return fmt.Errorf("server: broker %d is served already", id)
	}
	restarted := b.stopped
	b.host, b.port, b.stopped, b.ln = host, port, false, bl
	if restarted {
		err = c.electOfflineLocked(id)
	}
	c.mu.Unlock()
	if err != nil {
		ln.Close()
		return err
	}
	err = s.serve(context.WithValue(ctx, brokerKey{}, id), bl, bound)
	c.mu.Lock()
	if b.ln == bl {
		b.ln = nil
	}
	c.mu.Unlock()
	return err
}

// electOfflineLocked gives the partitions without a leader that have id
// among their replicas to id. REQUIRES c.mu held.
func (c *cluster) electOfflineLocked(id int32) error {
	changed := false
	for name, st := range c.topics {
		for p, sp := range st.Partitions {
			if sp.Leader == -1 && slices.Contains(sp.Replicas, id) {
				if _, err := c.setLeaderLocked(name, int32(p), id); err != nil && !errors.Is(err, log.ErrUnknownTopicOrPartition) {
					return err
				}
				changed = true
			}
		}
	}
	if changed {
		return c.persistLocked()
	}
	return nil
}

// StopBroker stops broker id as a broker's controlled shutdown does: its
// listener closes, its connections are dropped, and each partition it
// leads moves to the first other replica not stopped (in replica order)
// with a new leader epoch, or goes offline (leader -1) if there is none.
// The broker leaves Metadata's brokers and the partitions' in-sync
// replicas until ServeBroker starts it again.
func (s *Server) StopBroker(id int32) error {
	c := s.cluster
	if c == nil {
		return ErrNotCluster
	}
	c.mu.Lock()
	b := c.brokers[id]
	if b == nil {
		c.mu.Unlock()
		return fmt.Errorf("%w: %d", ErrUnknownBroker, id)
	}
	if b.stopped {
		c.mu.Unlock()
		return nil
	}
	b.stopped = true
	ln, conns := b.ln, slices.Collect(maps.Keys(b.conns))
	err := c.moveAwayLocked(id)
	c.mu.Unlock()
	// Closed without c.mu: a connection's Close takes it.
	if ln != nil {
		ln.Close()
	}
	for _, conn := range conns {
		conn.Close()
	}
	return err
}

// moveAwayLocked moves the leadership of id's partitions to their other
// replicas. REQUIRES c.mu held.
func (c *cluster) moveAwayLocked(id int32) error {
	changed := false
	for name, st := range c.topics {
		for p, sp := range st.Partitions {
			if sp.Leader != id {
				continue
			}
			if _, err := c.setLeaderLocked(name, int32(p), c.firstAliveLocked(sp.Replicas)); err != nil && !errors.Is(err, log.ErrUnknownTopicOrPartition) {
				return err
			}
			changed = true
		}
	}
	if changed {
		return c.persistLocked()
	}
	return nil
}

// MoveLeader makes broker the leader of a partition, with a new leader
// epoch, as a reassignment's or an election's leader change: the
// partition's requests then go to broker, and the clients holding the old
// epoch are fenced. broker must be one of its replicas and not stopped. It
// returns the new leader epoch.
func (s *Server) MoveLeader(topic string, partition, broker int32) (int32, error) {
	c := s.cluster
	if c == nil {
		return 0, ErrNotCluster
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.partitionLocked(topic, partition)
	switch b := c.brokers[broker]; {
	case !ok:
		return 0, fmt.Errorf("%w: %s-%d", log.ErrUnknownTopicOrPartition, topic, partition)
	case b == nil:
		return 0, fmt.Errorf("%w: %d", ErrUnknownBroker, broker)
	case !slices.Contains(ps.replicas, broker):
		return 0, fmt.Errorf("%w: %d, %s-%d has %v", ErrNotReplica, broker, topic, partition, ps.replicas)
	case b.stopped:
		return 0, fmt.Errorf("%w: %d", ErrBrokerStopped, broker)
	}
	epoch, err := c.setLeaderLocked(topic, partition, broker)
	if err != nil {
		return 0, err
	}
	return epoch, c.persistLocked()
}

// PartitionLeader reports a partition's leader (-1 when offline), leader
// epoch and replicas, as Metadata gives them.
func (s *Server) PartitionLeader(topic string, partition int32) (leader, epoch int32, replicas []int32, err error) {
	if s.cluster == nil {
		l, err := s.dir.Partition(topic, partition)
		if err != nil {
			return 0, 0, nil, err
		}
		return s.dir.NodeID(), l.LeaderEpoch(), []int32{s.dir.NodeID()}, nil
	}
	ps, ok := s.cluster.partition(topic, partition)
	if !ok {
		return 0, 0, nil, fmt.Errorf("%w: %s-%d", log.ErrUnknownTopicOrPartition, topic, partition)
	}
	return ps.leader, ps.epoch, ps.replicas, nil
}

// BrokerAddr is broker id's advertised host:port, empty while it is
// stopped or before it is served.
func (s *Server) BrokerAddr(id int32) string {
	if s.cluster == nil {
		if id == s.dir.NodeID() {
			return s.Addr()
		}
		return ""
	}
	host, port, ok := s.cluster.brokerAddr(id)
	if !ok {
		return ""
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// brokerListener tracks the connections of one virtual broker, so that
// StopBroker drops them.
type brokerListener struct {
	net.Listener
	c  *cluster
	id int32
}

func (bl *brokerListener) Accept() (net.Conn, error) {
	conn, err := bl.Listener.Accept()
	if err != nil {
		return nil, err
	}
	bc := &brokerConn{Conn: conn, c: bl.c, id: bl.id}
	bl.c.mu.Lock()
	b := bl.c.brokers[bl.id]
	stopped := b.stopped
	if !stopped {
		b.conns[bc] = struct{}{}
	}
	bl.c.mu.Unlock()
	if stopped {
		conn.Close()
	}
	return bc, nil
}

type brokerConn struct {
	net.Conn
	c    *cluster
	id   int32
	once sync.Once
}

func (bc *brokerConn) Close() error {
	bc.once.Do(func() {
		bc.c.mu.Lock()
		delete(bc.c.brokers[bc.id].conns, bc)
		bc.c.mu.Unlock()
	})
	return bc.Conn.Close()
}

// decodeStrict decodes one JSON object into doc, refusing unknown fields
// and data after it.
func decodeStrict(data []byte, doc any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(doc); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON object")
	}
	return nil
}

// chainFixes is a response's completion by a, then b (either nil).
func chainFixes(a, b func(kmsg.Response)) func(kmsg.Response) {
	if a == nil {
		return b
	}
	return func(resp kmsg.Response) {
		a(resp)
		b(resp)
	}
}
