package server

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Share sessions (KIP-932): a share group member's ShareFetch and
// ShareAcknowledge requests run in a session, as Kafka's ShareSessionCache
// keeps them. ShareSessionEpoch 0 opens one for the member (replacing the
// one it had) with the partitions the request names; a later request
// carries the epoch the session expects next (1, 2, ..., after
// math.MaxInt32 1 again), adds the partitions its Topics name and drops
// its ForgottenTopicsData; -1 closes it, and the records the member holds
// go back to the group. A dropped connection closes the sessions it opened.
// On a cluster of virtual brokers each broker keeps its own sessions, as
// each Kafka broker does: a member has a session with every broker leading
// a partition it reads, and closing one gives back the records of that
// partitions that session held only.
//
// What a client can make the server keep is bounded: at most
// Config.MaxShareSessions sessions (group.share.max.share.sessions), each
// holding only partitions the directory has.

// Share session errors.
var (
	errShareSessionNotFound  = errors.New("server: share session not found")
	errInvalidShareEpoch     = errors.New("server: invalid share session epoch")
	errShareSessionLimit     = errors.New("server: share session limit reached (group.share.max.share.sessions)")
	errShareRequestMalformed = errors.New("server: invalid share request")
)

// Kafka's share group error codes, and the session epochs with a meaning.
const (
	codeInvalidRecordState   int16 = 121
	codeShareSessionNotFound int16 = 122
	codeInvalidShareEpoch    int16 = 123
	codeShareSessionLimit    int16 = 133
	shareFinalEpoch          int32 = -1
	shareInitialEpoch        int32 = 0
	defaultMaxShareSessions        = 2000 // group.share.max.share.sessions
)

// sharePart is a partition of a share session, by topic id as the
// requests name it.
type sharePart struct {
	topicID   [16]byte
	partition int32
}

// shareSessionKey names a session: the broker it is kept by (the
// directory's node id on a server of one broker), the group and member.
type shareSessionKey struct {
	broker        int32
	group, member string
}

// shareSession is one member's session. Its fields are guarded by the
// cache's mutex.
type shareSession struct {
	epoch int32                  // the epoch the next request must carry
	parts []sharePart            // in the order they were added
	set   map[sharePart]struct{} // parts, for lookups
	owner *connState             // the connection that opened it
	// ever are the partitions the session ever held, forgotten ones too:
	// the member may hold records of a partition it forgot, and they go
	// back when the session ends.
	ever    []sharePart
	everSet map[sharePart]struct{}
}

// shareSessions is the server's share session cache.
type shareSessions struct {
	mu  sync.Mutex
	max int
	m   map[shareSessionKey]*shareSession
}

// nextShareEpoch is the epoch after e, as Kafka's ShareRequestMetadata
// counts: past math.MaxInt32 it wraps to 1.
func nextShareEpoch(e int32) int32 {
	if e == math.MaxInt32 {
		return 1
	}
	return e + 1
}

// open opens a session for the member on owner's connection, replacing the
// member's session if it had one, with parts; errShareSessionLimit when
// the cache is full. The partitions the replaced session held count as
// the new one's for the release at its end: the member may still hold
// records of them.
func (c *shareSessions) open(key shareSessionKey, owner *connState, parts []sharePart) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[shareSessionKey]*shareSession{}
	}
	old, ok := c.m[key]
	if !ok && len(c.m) >= c.max {
		return fmt.Errorf("%w: %d sessions open", errShareSessionLimit, len(c.m))
	}
	ss := &shareSession{epoch: nextShareEpoch(shareInitialEpoch), owner: owner}
	if ok {
		ss.ever, ss.everSet = old.ever, old.everSet
	}
	ss.add(parts)
	c.m[key] = ss
	return nil
}

// advance checks a request's epoch against the member's session, then
// adds and removes its partitions and moves its epoch on; it returns the
// session's partitions after the change.
func (c *shareSessions) advance(key shareSessionKey, epoch int32, add, forget []sharePart) ([]sharePart, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ss, ok := c.m[key]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: group %q member %q", errShareSessionNotFound, key.group, key.member)
	case ss.epoch != epoch:
		return nil, fmt.Errorf("%w: expected %d, got %d", errInvalidShareEpoch, ss.epoch, epoch)
	}
	ss.add(add)
	if len(forget) > 0 {
		drop := make(map[sharePart]struct{}, len(forget))
		for _, p := range forget {
			drop[p] = struct{}{}
			delete(ss.set, p)
		}
		ss.parts = slices.DeleteFunc(ss.parts, func(p sharePart) bool { _, ok := drop[p]; return ok })
	}
	ss.epoch = nextShareEpoch(ss.epoch)
	return slices.Clone(ss.parts), nil
}

// has reports whether the member has a session.
func (c *shareSessions) has(key shareSessionKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[key]
	return ok
}

// close removes the session and returns the partitions it ever held;
// false if there was none.
func (c *shareSessions) close(key shareSessionKey) ([]sharePart, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ss, ok := c.m[key]
	if !ok {
		return nil, false
	}
	delete(c.m, key)
	return ss.ever, true
}

// closeMember removes the member's sessions, with every broker.
func (c *shareSessions) closeMember(group, member string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if k.group == group && k.member == member {
			delete(c.m, k)
		}
	}
}

// dropConn removes the sessions owner opened and returns them with the
// partitions they ever held.
func (c *shareSessions) dropConn(owner *connState) map[shareSessionKey][]sharePart {
	c.mu.Lock()
	defer c.mu.Unlock()
	var dropped map[shareSessionKey][]sharePart
	for k, ss := range c.m {
		if ss.owner == owner {
			if dropped == nil {
				dropped = map[shareSessionKey][]sharePart{}
			}
			dropped[k] = ss.ever
			delete(c.m, k)
		}
	}
	return dropped
}

// add adds the partitions it does not hold yet.
func (ss *shareSession) add(parts []sharePart) {
	if ss.set == nil {
		ss.set = make(map[sharePart]struct{}, len(parts))
	}
	for _, p := range parts {
		if _, ok := ss.set[p]; !ok {
			ss.set[p] = struct{}{}
			ss.parts = append(ss.parts, p)
			if _, ok := ss.everSet[p]; !ok {
				if ss.everSet == nil {
					ss.everSet = map[sharePart]struct{}{}
				}
				ss.everSet[p] = struct{}{}
				ss.ever = append(ss.ever, p)
			}
		}
	}
}
