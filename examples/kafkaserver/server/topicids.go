package server

import (
	"encoding/base64"
	"sync"

	"github.com/kafkalite/kafkalite/log"
)

// topicID is a topic's id as the wire carries it (16 bytes), from
// kafkalite's base64 form.
func topicID(id string) [16]byte {
	var out [16]byte
	b, err := base64.RawURLEncoding.DecodeString(id)
	if err == nil && len(b) == 16 {
		copy(out[:], b)
	}
	return out
}

// topicIDs remembers which topic each wire id names, for the requests that
// name topics by id (Produce v13, Fetch v13+, Metadata, DeleteTopics): a
// lookup otherwise describes every topic.
type topicIDs struct {
	mu sync.Mutex
	m  map[[16]byte]idEntry
}

// idEntry is a remembered id: the topic's name and its partition 0's log,
// which tells whether the topic is still the one the id named (a topic
// deleted and created again under the same name has a new id and new
// logs).
type idEntry struct {
	name  string
	first *log.Log
}

// topicByID finds a topic's name by its wire id.
func (s *Server) topicByID(id [16]byte) (string, bool) {
	s.ids.mu.Lock()
	e, ok := s.ids.m[id]
	s.ids.mu.Unlock()
	if ok {
		if l, err := s.dir.Partition(e.name, 0); err == nil && l == e.first {
			return e.name, true
		}
	}
	for _, name := range s.dir.Topics() {
		td, err := s.dir.DescribeTopic(name)
		if err != nil || topicID(td.ID) != id {
			continue
		}
		if l, err := s.dir.Partition(name, 0); err == nil {
			s.ids.mu.Lock()
			if s.ids.m == nil {
				s.ids.m = map[[16]byte]idEntry{}
			}
			s.ids.m[id] = idEntry{name: name, first: l}
			s.ids.mu.Unlock()
		}
		return name, true
	}
	return "", false
}
