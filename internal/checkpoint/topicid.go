package checkpoint

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
)

// TopicID is one of Kafka's 128-bit Uuids (org.apache.kafka.common.Uuid):
// a topic id, and in the same form a cluster id or a log directory id. The
// 16 bytes are the most significant long, then the least significant one,
// big-endian.
type TopicID [16]byte

// Kafka's reserved ids, which its random generator never returns.
var (
	// ZeroTopicID is Kafka's ZERO_UUID, "AAAAAAAAAAAAAAAAAAAAAA": no id.
	ZeroTopicID = TopicID{}
	// MetadataTopicID is Kafka's ONE_UUID, "AAAAAAAAAAAAAAAAAAAAAQ", the
	// topic id of the KRaft metadata log __cluster_metadata.
	MetadataTopicID = TopicID{15: 1}
)

// topicIDEncoding is Java's Base64.getUrlEncoder().withoutPadding().
var topicIDEncoding = base64.RawURLEncoding

// String returns the id as Kafka's Uuid.toString prints it: URL-safe
// base64 without padding, 22 characters from [A-Za-z0-9_-].
func (id TopicID) String() string {
	return topicIDEncoding.EncodeToString(id[:])
}

// IsZero reports whether id is [ZeroTopicID].
func (id TopicID) IsZero() bool { return id == ZeroTopicID }

// MarshalText returns id.String().
func (id TopicID) MarshalText() ([]byte, error) {
	return topicIDEncoding.AppendEncode(nil, id[:]), nil
}

// UnmarshalText parses text with [ParseTopicID].
func (id *TopicID) UnmarshalText(text []byte) error {
	v, err := ParseTopicID(string(text))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// ParseTopicID parses a Uuid string as Kafka's Uuid.fromString does: at
// most 24 characters of URL-safe base64 that decode to exactly 16 bytes,
// so 22 characters, or 24 ending in "==" (Java's decoder accepts the
// padding). As in Java, the 4 unused low bits of the last character are
// ignored, so a few strings map to each id; [TopicID.String] gives the
// canonical one. The zero id parses (the readers of this package reject it
// where Kafka does). Errors match [ErrInvalid].
func ParseTopicID(s string) (TopicID, error) {
	var id TopicID
	if len(s) > 24 {
		return id, invalidf("topic id %q is longer than 24 characters", clip([]byte(s)))
	}
	b := s
	if len(b) == 24 && b[22:] == "==" {
		b = b[:22]
	}
	if len(b) != 22 {
		return id, invalidf("topic id %q is not 22 characters of base64", s)
	}
	for i := 0; i < len(b); i++ {
		// Go's decoder skips '\r' and '\n'; Java's rejects them, as any
		// character outside the URL-safe alphabet.
		c := b[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return id, invalidf("topic id %q has a character outside URL-safe base64", s)
		}
	}
	n, err := topicIDEncoding.Decode(id[:], []byte(b))
	if err != nil || n != len(id) {
		return TopicID{}, invalidf("topic id %q does not decode to 16 bytes", s)
	}
	return id, nil
}

// maxRandomTries bounds the draws of [NewTopicID] from a reader that keeps
// producing reserved ids (a broken or adversarial one); a working random
// source needs a second draw once in 64.
const maxRandomTries = 100

// NewTopicID returns a random id as Kafka's Uuid.randomUuid does: a
// version 4, variant 2 UUID built from 16 bytes of r (like
// java.util.UUID.randomUUID), drawn again while it is [ZeroTopicID],
// [MetadataTopicID] or one whose string starts with '-' (a command-line
// argument). Such an id is also never one of the 100 ids Kafka reserves for
// log directories, so it serves for cluster.id and directory.id too. A nil
// r means crypto/rand.Reader. The error is r's.
func NewTopicID(r io.Reader) (TopicID, error) {
	if r == nil {
		r = rand.Reader
	}
	for range maxRandomTries {
		var id TopicID
		if _, err := io.ReadFull(r, id[:]); err != nil {
			return TopicID{}, fmt.Errorf("checkpoint: reading a random topic id: %w", err)
		}
		id[6] = id[6]&0x0f | 0x40                                         // version 4
		id[8] = id[8]&0x3f | 0x80                                         // variant 2 (IETF)
		if id != ZeroTopicID && id != MetadataTopicID && id[0]>>2 != 62 { // 62 is '-'
			return id, nil
		}
	}
	return TopicID{}, errors.New("checkpoint: random source keeps producing reserved topic ids")
}

// reservedDirectoryID reports whether id is one of the 100 ids Kafka
// reserves for log directories (DirectoryId.reserved: most significant long
// 0, least significant below 100), which meta.properties must not hold.
func reservedDirectoryID(id TopicID) bool {
	for _, b := range id[:15] {
		if b != 0 {
			return false
		}
	}
	return id[15] < 100
}
