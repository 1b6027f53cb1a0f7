package log

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sync"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// The SCRAM credential store: the users' SCRAM credentials, in one file in
// the root of the log directory, next to the topic store.
//
//	<log.dir>/kafkalite-scram-credentials.json
//
// Kafka keeps them as UserScramCredentialRecords in its KRaft metadata log;
// kafkalite keeps them in this file, holding what those records hold (the
// salt, the stored key, the server key and the iteration count: never the
// password). Its format, version 1 (UTF-8 JSON; key order and whitespace
// do not matter):
//
//	{
//	  "version": 1,
//	  "users": {
//	    "alice": {
//	      "SCRAM-SHA-256": {"salt": "<base64>", "stored_key": "<base64>", "server_key": "<base64>", "iterations": 8192}
//	    }
//	  }
//	}
//
//   - version: 1. A reader refuses other versions; any change of format
//     bumps it.
//   - users: one entry per user with credentials, keyed by the user name
//     (not empty), holding one credential per mechanism (SCRAM-SHA-256,
//     SCRAM-SHA-512): salt, stored key and server key in standard base64,
//     the keys as long as the mechanism's hash, and the iteration count
//     within Kafka's bounds (4096 to 16384).
//
// Unknown fields are an error, as is anything else that breaks these
// rules: a [*CorruptStoreError]. The file is written as the topic store
// is (a .tmp file, fsynced, renamed over it, the directory fsynced), so
// after a crash it is the old one or the new one.

const (
	scramStoreFile    = "kafkalite-scram-credentials.json"
	scramStoreVersion = 1
	// maxScramStoreBytes bounds the store: an alteration that would
	// make it larger is refused, and loadScramStore reads no more. A user
	// with both mechanisms takes about 300 bytes: some 200,000 users.
	maxScramStoreBytes = 64 << 20
)

// The SCRAM iteration counts Kafka's controller accepts
// (ScramMechanism.minIterations and ScramControlManager's upper bound).
const (
	ScramMinIterations = 4096
	ScramMaxIterations = 16384
)

// ScramMechanism is a SCRAM mechanism, numbered as Kafka's
// org.apache.kafka.clients.admin.ScramMechanism numbers them on the wire.
type ScramMechanism int8

// The SCRAM mechanisms.
const (
	ScramSHA256 ScramMechanism = 1
	ScramSHA512 ScramMechanism = 2
)

// String returns the mechanism's SASL name ("SCRAM-SHA-256"), or
// "UNKNOWN" as Kafka names the others.
func (m ScramMechanism) String() string {
	switch m {
	case ScramSHA256:
		return "SCRAM-SHA-256"
	case ScramSHA512:
		return "SCRAM-SHA-512"
	}
	return "UNKNOWN"
}

// ParseScramMechanism returns the mechanism of a SASL name; false for
// any other name.
func ParseScramMechanism(name string) (ScramMechanism, bool) {
	for _, m := range []ScramMechanism{ScramSHA256, ScramSHA512} {
		if m.String() == name {
			return m, true
		}
	}
	return 0, false
}

func (m ScramMechanism) valid() bool { return m == ScramSHA256 || m == ScramSHA512 }

// Hash returns the mechanism's hash function (sha256.New for
// SCRAM-SHA-256, sha512.New for SCRAM-SHA-512; nil for another).
func (m ScramMechanism) Hash() func() hash.Hash {
	switch m {
	case ScramSHA256:
		return sha256.New
	case ScramSHA512:
		return sha512.New
	}
	return nil
}

// Errors of the SCRAM credential administration, each Kafka's error of the
// same name.
var (
	// ErrUnsupportedSASLMechanism: a mechanism other than SCRAM-SHA-256
	// and SCRAM-SHA-512.
	ErrUnsupportedSASLMechanism = errors.New("log: unknown SCRAM mechanism")
	// ErrUnacceptableCredential: an empty user name, an iteration count
	// outside [ScramMinIterations, ScramMaxIterations], an empty salted
	// password.
	ErrUnacceptableCredential = errors.New("log: unacceptable credential")
	// ErrResourceNotFound: the deletion or the description of a
	// credential that does not exist.
	ErrResourceNotFound = errors.New("log: resource not found")
	// ErrDuplicateResource: one user named twice in one request.
	ErrDuplicateResource = errors.New("log: duplicate resource")
	// ErrStoreFull: an alteration that would take a store of the
	// directory past its bound.
	ErrStoreFull = errors.New("log: store full")
)

// ErrCorruptScramStore matches a [*CorruptStoreError] about this store.
var ErrCorruptScramStore = errors.New("log: corrupt SCRAM credential store")

// ScramCredential is a user's credential for one mechanism, as Kafka
// stores it (RFC 5802): the salt, the iteration count, StoredKey =
// H(HMAC(SaltedPassword, "Client Key")) and ServerKey =
// HMAC(SaltedPassword, "Server Key"). It does not hold the password.
type ScramCredential struct {
	Salt       []byte `json:"salt"`
	StoredKey  []byte `json:"stored_key"`
	ServerKey  []byte `json:"server_key"`
	Iterations int32  `json:"iterations"`
}

// ScramUpsertion sets User's credential for Mechanism, as Kafka's
// AlterUserScramCredentials upsertion does: the salt and the salted
// password (Hi(password, salt, iterations) of RFC 5802, which
// [NewScramUpsertion] computes) from which the stored and server keys
// are derived.
type ScramUpsertion struct {
	User           string
	Mechanism      ScramMechanism
	Iterations     int32
	Salt           []byte
	SaltedPassword []byte
}

// NewScramUpsertion returns the upsertion of user's password for m with
// the given iteration count, salted as Kafka's admin client salts it (32
// random bytes, PBKDF2 with the mechanism's HMAC).
func NewScramUpsertion(user string, m ScramMechanism, password string, iterations int32) (ScramUpsertion, error) {
	h := m.Hash()
	if h == nil {
		return ScramUpsertion{}, fmt.Errorf("%w: %d", ErrUnsupportedSASLMechanism, m)
	}
	if iterations < ScramMinIterations || iterations > ScramMaxIterations {
		return ScramUpsertion{}, fmt.Errorf("%w: %d iterations, not in [%d, %d]", ErrUnacceptableCredential, iterations, ScramMinIterations, ScramMaxIterations)
	}
	salt := make([]byte, 32)
	_, _ = rand.Read(salt)
	salted, err := pbkdf2.Key(h, password, salt, int(iterations), h().Size())
	if err != nil {
		return ScramUpsertion{}, err
	}
	return ScramUpsertion{User: user, Mechanism: m, Iterations: iterations, Salt: salt, SaltedPassword: salted}, nil
}

// NewScramCredential derives the credential of a salted password (RFC
// 5802's stored key and server key).
func NewScramCredential(m ScramMechanism, salt, saltedPassword []byte, iterations int32) ScramCredential {
	h := m.Hash()
	mac := func(key []byte, msg string) []byte {
		x := hmac.New(h, key)
		x.Write([]byte(msg))
		return x.Sum(nil)
	}
	sum := h()
	sum.Write(mac(saltedPassword, "Client Key"))
	return ScramCredential{Salt: slices.Clone(salt), StoredKey: sum.Sum(nil), ServerKey: mac(saltedPassword, "Server Key"), Iterations: iterations}
}

// ScramDeletion removes User's credential for Mechanism.
type ScramDeletion struct {
	User      string
	Mechanism ScramMechanism
}

// UserScramResult is the outcome of an alteration or a description for
// one user: Err nil, or one of the errors above.
type UserScramResult struct {
	User string
	Err  error
}

// UserScramCredentials describes a user's credentials: the iteration
// count of each mechanism it has one for; or Err.
type UserScramCredentials struct {
	User       string
	Iterations map[ScramMechanism]int32
	Err        error
}

type scramStoreDoc struct {
	Version *int                                  `json:"version"`
	Users   map[string]map[string]ScramCredential `json:"users"`
}

// scramUsers maps a user to its credentials by mechanism.
type scramUsers map[string]map[ScramMechanism]ScramCredential

func loadScramStore(fsys vfs.FS, dir string) (scramUsers, error) {
	name := filepath.Join(dir, scramStoreFile)
	corrupt := func(reason string, err error) (scramUsers, error) {
		return nil, &CorruptStoreError{Store: ErrCorruptScramStore, File: name, Reason: reason, Err: err}
	}
	var doc scramStoreDoc
	found, err := readVersionedStore(fsys, name, maxScramStoreBytes, &doc, func() *int { return doc.Version }, scramStoreVersion, ErrCorruptScramStore)
	if err != nil {
		return nil, err
	}
	if !found {
		return scramUsers{}, nil
	}
	users := make(scramUsers, len(doc.Users))
	for user, creds := range doc.Users {
		if user == "" {
			return corrupt("empty user name", nil)
		}
		if len(creds) == 0 {
			return corrupt(fmt.Sprintf("user %q: no credentials", user), nil)
		}
		byMech := make(map[ScramMechanism]ScramCredential, len(creds))
		for mname, c := range creds {
			m, ok := ParseScramMechanism(mname)
			if !ok {
				return corrupt(fmt.Sprintf("user %q: unknown mechanism %q", user, mname), nil)
			}
			size := m.Hash()().Size()
			if len(c.StoredKey) != size || len(c.ServerKey) != size {
				return corrupt(fmt.Sprintf("user %q, %s: keys of %d and %d bytes, not %d", user, mname, len(c.StoredKey), len(c.ServerKey), size), nil)
			}
			if c.Iterations < ScramMinIterations || c.Iterations > ScramMaxIterations {
				return corrupt(fmt.Sprintf("user %q, %s: %d iterations", user, mname, c.Iterations), nil)
			}
			byMech[m] = c
		}
		users[user] = byMech
	}
	return users, nil
}

// saveScramStore replaces dir's SCRAM credential store with users,
// atomically and durably (writeRootFile); a store above limit bytes is
// refused with ErrStoreFull, writing nothing.
func saveScramStore(fsys vfs.FS, dir string, users scramUsers, limit int) error {
	doc := scramStoreDoc{Version: new(int), Users: make(map[string]map[string]ScramCredential, len(users))}
	*doc.Version = scramStoreVersion
	for user, creds := range users {
		byName := make(map[string]ScramCredential, len(creds))
		for m, c := range creds {
			byName[m.String()] = c
		}
		doc.Users[user] = byName
	}
	data, err := json.MarshalIndent(doc, "", "  ") // keys sorted: the same users give the same bytes
	if err != nil {
		return err
	}
	if data = append(data, '\n'); len(data) > limit {
		return fmt.Errorf("%w: the SCRAM credential store would take %d bytes, over its %d", ErrStoreFull, len(data), limit)
	}
	return writeRootFile(fsys, dir, scramStoreFile, data)
}

// scramCredentials holds a Dir's SCRAM credentials and writes them to the
// store.
type scramCredentials struct {
	fsys     vfs.FS
	dir      string
	maxBytes int // the store's bound: maxScramStoreBytes

	writeMu sync.Mutex // serialises alterations, from the store's write to their publication; taken before mu
	mu      sync.RWMutex
	users   scramUsers // replaced, never changed in place
}

func openScramCredentials(fsys vfs.FS, dir string) (*scramCredentials, error) {
	users, err := loadScramStore(fsys, dir)
	if err != nil {
		return nil, err
	}
	return &scramCredentials{fsys: fsys, dir: dir, maxBytes: maxScramStoreBytes, users: users}, nil
}

func (s *scramCredentials) credential(user string, m ScramMechanism) (ScramCredential, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.users[user][m]
	return c, ok
}

func (s *scramCredentials) describe(users []string) []UserScramCredentials {
	s.mu.RLock()
	defer s.mu.RUnlock()
	describe := func(user string) UserScramCredentials {
		creds, ok := s.users[user]
		if !ok {
			return UserScramCredentials{User: user, Err: fmt.Errorf("%w: Attempt to describe a user credential that does not exist: %s", ErrResourceNotFound, user)}
		}
		its := make(map[ScramMechanism]int32, len(creds))
		for m, c := range creds {
			its[m] = c.Iterations
		}
		return UserScramCredentials{User: user, Iterations: its}
	}
	var out []UserScramCredentials
	if len(users) == 0 {
		for _, user := range slices.Sorted(maps.Keys(s.users)) {
			out = append(out, describe(user))
		}
		return out
	}
	count := map[string]int{}
	for _, user := range users {
		count[user]++
	}
	for _, user := range users {
		switch n := count[user]; {
		case n == 0: // answered already
			continue
		case n > 1:
			out = append(out, UserScramCredentials{User: user, Err: fmt.Errorf("%w: Cannot describe SCRAM credentials for the same user twice in a single request: %s", ErrDuplicateResource, user)})
		default:
			out = append(out, describe(user))
		}
		count[user] = 0
	}
	return out
}

var errScramDuplicate = fmt.Errorf("%w: A user credential cannot be altered twice in the same request", ErrDuplicateResource)

func checkScramUser(user string, m ScramMechanism) error {
	if user == "" {
		return fmt.Errorf("%w: Username must not be empty", ErrUnacceptableCredential)
	}
	if !m.valid() {
		return fmt.Errorf("%w: Unknown SCRAM mechanism", ErrUnsupportedSASLMechanism)
	}
	return nil
}

func (s *scramCredentials) alter(dels []ScramDeletion, ups []ScramUpsertion) ([]UserScramResult, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.RLock()
	before := s.users
	s.mu.RUnlock()

	// As Kafka's ScramControlManager: each user is altered once per
	// request (a second mention fails the user), deletions are checked
	// against the stored credentials, and the valid alterations are
	// applied together.
	failed := map[string]error{}
	var order []string // users in the order of their first mention
	seen := func(user string) {
		if !slices.Contains(order, user) {
			order = append(order, user)
		}
	}
	delOf := map[string]ScramDeletion{}
	upOf := map[string]ScramUpsertion{}
	for _, d := range dels {
		seen(d.User)
		if _, ok := failed[d.User]; ok {
			continue
		}
		if _, ok := delOf[d.User]; ok {
			delete(delOf, d.User)
			failed[d.User] = errScramDuplicate
			continue
		}
		err := checkScramUser(d.User, d.Mechanism)
		if _, ok := before[d.User][d.Mechanism]; err == nil && !ok {
			err = fmt.Errorf("%w: Attempt to delete a user credential that does not exist", ErrResourceNotFound)
		}
		if err != nil {
			failed[d.User] = err
			continue
		}
		delOf[d.User] = d
	}
	for _, u := range ups {
		seen(u.User)
		if _, ok := failed[u.User]; ok {
			continue
		}
		_, isDel := delOf[u.User]
		_, isUp := upOf[u.User]
		if isDel || isUp {
			delete(delOf, u.User)
			delete(upOf, u.User)
			failed[u.User] = errScramDuplicate
			continue
		}
		err := checkScramUser(u.User, u.Mechanism)
		switch {
		case err != nil:
		case u.Iterations < ScramMinIterations:
			err = fmt.Errorf("%w: Too few iterations", ErrUnacceptableCredential)
		case u.Iterations > ScramMaxIterations:
			err = fmt.Errorf("%w: Too many iterations", ErrUnacceptableCredential)
		case len(u.SaltedPassword) == 0:
			// Kafka's HMAC refuses an empty key (an unknown server
			// error there).
			err = fmt.Errorf("%w: empty salted password", ErrUnacceptableCredential)
		}
		if err != nil {
			failed[u.User] = err
			continue
		}
		upOf[u.User] = u
	}

	after := maps.Clone(before)
	for user, d := range delOf {
		creds := maps.Clone(after[user])
		delete(creds, d.Mechanism)
		if len(creds) == 0 {
			delete(after, user)
		} else {
			after[user] = creds
		}
	}
	for user, u := range upOf {
		creds := maps.Clone(after[user])
		if creds == nil {
			creds = map[ScramMechanism]ScramCredential{}
		}
		creds[u.Mechanism] = NewScramCredential(u.Mechanism, u.Salt, u.SaltedPassword, u.Iterations)
		after[user] = creds
	}
	if len(delOf)+len(upOf) > 0 {
		if err := saveScramStore(s.fsys, s.dir, after, s.maxBytes); errors.Is(err, ErrStoreFull) {
			for user := range delOf {
				failed[user] = err
			}
			for user := range upOf {
				failed[user] = err
			}
			delOf, upOf = nil, nil
		} else if err != nil {
			// The failed write may have left the new store in place
			// (renamed, not synced): put the old one back.
			return nil, errors.Join(err, saveScramStore(s.fsys, s.dir, before, math.MaxInt))
		} else {
			s.mu.Lock()
			s.users = after
			s.mu.Unlock()
		}
	}
	out := make([]UserScramResult, 0, len(order))
	for _, user := range order {
		out = append(out, UserScramResult{User: user, Err: failed[user]})
	}
	return out, nil
}

// UserScramCredential returns user's SCRAM credential for m, as the
// directory keeps it ([Dir.AlterUserScramCredentials]); false if it has
// none. A SASL/SCRAM server authenticates with it.
func (d *Dir) UserScramCredential(user string, m ScramMechanism) (ScramCredential, bool) {
	return d.scram.credential(user, m)
}

// DescribeUserScramCredentials describes the named users' credentials as
// Kafka 4.4's DescribeUserScramCredentials does: every user with a
// credential, sorted by name, when users is empty; else one result per
// distinct name in order, with [ErrResourceNotFound] for a user without
// credentials and [ErrDuplicateResource] for one named twice.
func (d *Dir) DescribeUserScramCredentials(users []string) []UserScramCredentials {
	return d.scram.describe(users)
}

// AlterUserScramCredentials deletes and sets (upserts) SCRAM credentials
// as Kafka 4.4's AlterUserScramCredentials does, durably (the SCRAM
// credential store is written before it returns), and returns one result
// per user, in the order of their first mention. A user fails with
// [ErrDuplicateResource] when it is named twice (in deletions and
// upsertions together), [ErrUnsupportedSASLMechanism] for another
// mechanism, [ErrUnacceptableCredential] for an empty name, an iteration
// count outside [ScramMinIterations, ScramMaxIterations] or an empty
// salted password, and [ErrResourceNotFound] for the deletion of a
// credential that does not exist; the other users' alterations are
// applied together, all or none. An alteration that would take the store
// past 64 MiB fails its users with [ErrStoreFull]. The error is the
// store's write failing (nothing is changed) or the directory closed.
func (d *Dir) AlterUserScramCredentials(ctx context.Context, deletions []ScramDeletion, upsertions []ScramUpsertion) ([]UserScramResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.RLock()
	closed := d.closed
	d.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	return d.scram.alter(deletions, upsertions)
}
