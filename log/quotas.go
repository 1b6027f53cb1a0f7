package log

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// The client quota store: the quotas of users and client ids, in one file
// in the root of the log directory, next to the topic store.
//
//	<log.dir>/kafkalite-client-quotas.json
//
// Kafka keeps them as ClientQuotaRecords in its KRaft metadata log;
// kafkalite keeps them in this file. Its format, version 1 (UTF-8 JSON;
// key order and whitespace do not matter):
//
//	{
//	  "version": 1,
//	  "entities": [
//	    {"entity": {"user": "alice"}, "quotas": {"producer_byte_rate": 1048576}},
//	    {"entity": {"user": "alice", "client-id": null}, "quotas": {"consumer_byte_rate": 2097152}},
//	    {"entity": {"client-id": "app"}, "quotas": {"request_percentage": 50}}
//	  ]
//	}
//
//   - version: 1. A reader refuses other versions; any change of format
//     bumps it.
//   - entities: one entry per entity with quotas: the entity, naming a
//     user, a client id or both (Kafka's entity types "user" and
//     "client-id"; a name null is the default, Kafka's <default>), and its
//     quotas: Kafka's
//     keys (producer_byte_rate, consumer_byte_rate, request_percentage,
//     controller_mutation_rate) and values, positive and finite, the byte
//     rates whole. No entity appears twice.
//
// Unknown fields are an error, as is anything else that breaks these
// rules: a [*CorruptStoreError]. The file is written as the
// topic store is (a .tmp file, fsynced, renamed over it, the directory
// fsynced), so after a crash it is the old one or the new one.

const (
	quotaStoreFile    = "kafkalite-client-quotas.json"
	quotaStoreVersion = 1
	// maxQuotaStoreBytes bounds the store: an alteration that would make
	// it larger is refused, and loadQuotaStore reads no more.
	maxQuotaStoreBytes = 64 << 20
)

// Kafka's client quota keys (QuotaConfig).
const (
	QuotaProducerByteRate       = "producer_byte_rate"
	QuotaConsumerByteRate       = "consumer_byte_rate"
	QuotaRequestPercentage      = "request_percentage"
	QuotaControllerMutationRate = "controller_mutation_rate"
)

// Kafka's client quota entity types.
const (
	QuotaEntityUser     = "user"
	QuotaEntityClientID = "client-id"
)

// quotaKeyIsLong: Kafka's LONG keys, whose values must be whole.
var quotaKeyIsLong = map[string]bool{
	QuotaProducerByteRate: true, QuotaConsumerByteRate: true, QuotaRequestPercentage: false, QuotaControllerMutationRate: false,
}

// ErrInvalidQuota is the cause of a refused quota alteration or
// description, Kafka's INVALID_REQUEST: an entity without components, of
// an unknown type, with a type twice or an empty name; an unknown key; a
// value not finite, not above 0, or fractional for a byte rate; an entity
// or a key twice in one request; a filter Kafka refuses.
var ErrInvalidQuota = errors.New("log: invalid client quota")

// ErrCorruptClientQuotaStore matches a [*CorruptStoreError] about this store.
var ErrCorruptClientQuotaStore = errors.New("log: corrupt client quota store")

// QuotaEntityName is one component of a [QuotaEntity]: absent (the entity
// does not name this type), the default (Kafka's <default>, a null name on
// the wire) or a name.
type QuotaEntityName struct {
	Set     bool // the entity has this component
	Default bool // the component is the default entity
	Name    string
}

// QuotaName is the component naming name.
func QuotaName(name string) QuotaEntityName { return QuotaEntityName{Set: true, Name: name} }

// QuotaDefault is the default component.
func QuotaDefault() QuotaEntityName { return QuotaEntityName{Set: true, Default: true} }

func (n QuotaEntityName) String() string {
	switch {
	case !n.Set:
		return "-"
	case n.Default:
		return "<default>"
	}
	return n.Name
}

// QuotaEntity is what a quota applies to, as Kafka's ClientQuotaEntity: a
// user, a client id, or a user's client id; each may be the default.
type QuotaEntity struct {
	User, ClientID QuotaEntityName
}

func (e QuotaEntity) String() string {
	var parts []string
	if e.User.Set {
		parts = append(parts, "user="+e.User.String())
	}
	if e.ClientID.Set {
		parts = append(parts, "client-id="+e.ClientID.String())
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (e QuotaEntity) check() error {
	if !e.User.Set && !e.ClientID.Set {
		return fmt.Errorf("%w: Invalid empty client quota entity", ErrInvalidQuota)
	}
	for _, c := range []struct {
		typ string
		n   QuotaEntityName
	}{{QuotaEntityUser, e.User}, {QuotaEntityClientID, e.ClientID}} {
		if c.n.Set && !c.n.Default && c.n.Name == "" {
			return fmt.Errorf("%w: Empty %s not supported", ErrInvalidQuota, c.typ)
		}
	}
	return nil
}

func checkQuotaValue(key string, v float64) error {
	long, ok := quotaKeyIsLong[key]
	switch {
	case !ok:
		return fmt.Errorf("%w: Invalid configuration key %s", ErrInvalidQuota, key)
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%w: Quota %s must be a finite number", ErrInvalidQuota, key)
	case v <= 0:
		return fmt.Errorf("%w: Quota %s must be greater than 0", ErrInvalidQuota, key)
	case long && v > math.MaxInt64:
		return fmt.Errorf("%w: Proposed value for %s is too large for a LONG.", ErrInvalidQuota, key)
	case long && math.Abs(math.Mod(v, 1)) > 1e-6:
		return fmt.Errorf("%w: %s cannot be a fractional value.", ErrInvalidQuota, key)
	}
	return nil
}

// QuotaOp sets a quota key to Value, or removes it.
type QuotaOp struct {
	Key    string
	Value  float64
	Remove bool
}

// QuotaAlteration changes one entity's quotas.
type QuotaAlteration struct {
	Entity QuotaEntity
	Ops    []QuotaOp
}

// QuotaAlterationResult is the outcome of one entity's alteration.
type QuotaAlterationResult struct {
	Entity QuotaEntity
	Err    error
}

// QuotaEntry is an entity with its quotas.
type QuotaEntry struct {
	Entity QuotaEntity
	Quotas map[string]float64
}

// Kafka's DescribeClientQuotas match types.
const (
	QuotaMatchExact   = 0 // the component's name, or the default for none
	QuotaMatchDefault = 1 // the default component
	QuotaMatchAny     = 2 // any component of the type, named or default
)

// QuotaFilterComponent is one component of a DescribeClientQuotas filter.
type QuotaFilterComponent struct {
	EntityType string
	MatchType  int8
	Match      *string
}

type quotaEntityDoc struct {
	Entity map[string]*string `json:"entity"`
	Quotas map[string]float64 `json:"quotas"`
}

type quotaStoreDoc struct {
	Version  *int             `json:"version"`
	Entities []quotaEntityDoc `json:"entities"`
}

type quotaEntries map[QuotaEntity]map[string]float64

func entityDoc(e QuotaEntity) map[string]*string {
	m := map[string]*string{}
	for typ, n := range map[string]QuotaEntityName{QuotaEntityUser: e.User, QuotaEntityClientID: e.ClientID} {
		if n.Set && n.Default {
			m[typ] = nil
		} else if n.Set {
			m[typ] = &n.Name
		}
	}
	return m
}

// EntityOf returns the entity of Kafka's entity components (type to name,
// nil for the default); unknown types, "ip" too, are [ErrInvalidQuota].
func EntityOf(components map[string]*string) (QuotaEntity, error) {
	var e QuotaEntity
	for typ, name := range components {
		n := QuotaDefault()
		if name != nil {
			n = QuotaName(*name)
		}
		switch typ {
		case QuotaEntityUser:
			e.User = n
		case QuotaEntityClientID:
			e.ClientID = n
		default:
			return QuotaEntity{}, fmt.Errorf("%w: Unhandled client quota entity type: %s", ErrInvalidQuota, typ)
		}
	}
	return e, e.check()
}

func loadQuotaStore(fsys vfs.FS, dir string) (quotaEntries, error) {
	name := filepath.Join(dir, quotaStoreFile)
	corrupt := func(reason string, err error) (quotaEntries, error) {
		return nil, &CorruptStoreError{Store: ErrCorruptClientQuotaStore, File: name, Reason: reason, Err: err}
	}
	var doc quotaStoreDoc
	found, err := readVersionedStore(fsys, name, maxQuotaStoreBytes, &doc, func() *int { return doc.Version }, quotaStoreVersion, ErrCorruptClientQuotaStore)
	if err != nil {
		return nil, err
	}
	if !found {
		return quotaEntries{}, nil
	}
	out := make(quotaEntries, len(doc.Entities))
	for i, ed := range doc.Entities {
		e, err := EntityOf(ed.Entity)
		if err != nil {
			return corrupt(fmt.Sprintf("entity %d: %v", i, err), err)
		}
		if _, dup := out[e]; dup {
			return corrupt(fmt.Sprintf("entity %s twice", e), nil)
		}
		if len(ed.Quotas) == 0 {
			return corrupt(fmt.Sprintf("entity %s: no quotas", e), nil)
		}
		for k, v := range ed.Quotas {
			if err := checkQuotaValue(k, v); err != nil {
				return corrupt(fmt.Sprintf("entity %s: %v", e, err), err)
			}
		}
		out[e] = ed.Quotas
	}
	return out, nil
}

func entityOrder(a, b QuotaEntity) int { return strings.Compare(a.String(), b.String()) }

func saveQuotaStore(fsys vfs.FS, dir string, entries quotaEntries, limit int) error {
	doc := quotaStoreDoc{Version: new(int), Entities: []quotaEntityDoc{}}
	*doc.Version = quotaStoreVersion
	for _, e := range slices.SortedFunc(maps.Keys(entries), entityOrder) {
		doc.Entities = append(doc.Entities, quotaEntityDoc{Entity: entityDoc(e), Quotas: entries[e]})
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if data = append(data, '\n'); len(data) > limit {
		return fmt.Errorf("%w: the client quota store would take %d bytes, over its %d", ErrStoreFull, len(data), limit)
	}
	return writeRootFile(fsys, dir, quotaStoreFile, data)
}

// clientQuotas holds a Dir's client quotas and writes them to the store.
type clientQuotas struct {
	fsys     vfs.FS
	dir      string
	maxBytes int // the store's bound: maxQuotaStoreBytes

	writeMu sync.Mutex // serialises alterations; taken before mu
	mu      sync.RWMutex
	entries quotaEntries // replaced, never changed in place
	version uint64       // counts the alterations applied, for caches
}

func openClientQuotas(fsys vfs.FS, dir string) (*clientQuotas, error) {
	entries, err := loadQuotaStore(fsys, dir)
	if err != nil {
		return nil, err
	}
	return &clientQuotas{fsys: fsys, dir: dir, maxBytes: maxQuotaStoreBytes, entries: entries}, nil
}

func (q *clientQuotas) alter(alts []QuotaAlteration, validateOnly bool) ([]QuotaAlterationResult, error) {
	q.writeMu.Lock()
	defer q.writeMu.Unlock()
	q.mu.RLock()
	before := q.entries
	q.mu.RUnlock()
	failed := map[QuotaEntity]error{}
	seen := map[QuotaEntity]bool{}
	after := maps.Clone(before)
	changed := map[QuotaEntity]bool{}
	for _, a := range alts {
		e := a.Entity
		if seen[e] {
			failed[e] = fmt.Errorf("%w: Ignoring duplicate entity %s", ErrInvalidQuota, e)
			continue
		}
		seen[e] = true
		if err := e.check(); err != nil {
			failed[e] = err
			continue
		}
		quotas := maps.Clone(before[e])
		if quotas == nil {
			quotas = map[string]float64{}
		}
		keys := map[string]bool{}
		var err error
		for _, op := range a.Ops {
			if keys[op.Key] {
				err = fmt.Errorf("%w: Duplicate quota key %s not updating quota for this entity %s", ErrInvalidQuota, op.Key, e)
				break
			}
			keys[op.Key] = true
			if _, known := quotaKeyIsLong[op.Key]; !known {
				err = fmt.Errorf("%w: Invalid configuration key %s", ErrInvalidQuota, op.Key)
				break
			}
			if op.Remove {
				delete(quotas, op.Key)
				continue
			}
			if err = checkQuotaValue(op.Key, op.Value); err != nil {
				break
			}
			quotas[op.Key] = op.Value
		}
		if err != nil {
			failed[e] = err
			continue
		}
		changed[e] = true
		if len(quotas) == 0 {
			delete(after, e)
		} else {
			after[e] = quotas
		}
	}
	// A duplicate fails the entity's earlier alteration too.
	for e := range failed {
		if changed[e] {
			delete(changed, e)
			if old, ok := before[e]; ok {
				after[e] = old
			} else {
				delete(after, e)
			}
		}
	}
	if !validateOnly && len(changed) > 0 {
		if err := saveQuotaStore(q.fsys, q.dir, after, q.maxBytes); errors.Is(err, ErrStoreFull) {
			for e := range changed {
				failed[e] = err
			}
		} else if err != nil {
			return nil, errors.Join(err, saveQuotaStore(q.fsys, q.dir, before, math.MaxInt))
		} else {
			q.mu.Lock()
			q.entries = after
			q.version++
			q.mu.Unlock()
		}
	}
	out := make([]QuotaAlterationResult, 0, len(alts))
	done := map[QuotaEntity]bool{}
	for _, a := range alts {
		if !done[a.Entity] {
			done[a.Entity] = true
			out = append(out, QuotaAlterationResult{Entity: a.Entity, Err: failed[a.Entity]})
		}
	}
	return out, nil
}

func checkQuotaFilter(filter []QuotaFilterComponent) error {
	types := map[string]bool{}
	for _, c := range filter {
		switch c.EntityType {
		case "":
			return fmt.Errorf("%w: Invalid empty entity type.", ErrInvalidQuota)
		case QuotaEntityUser, QuotaEntityClientID:
		default:
			return fmt.Errorf("%w: Unsupported entity type %s", ErrInvalidQuota, c.EntityType)
		}
		if types[c.EntityType] {
			return fmt.Errorf("%w: Entity type %s cannot appear more than once in the filter.", ErrInvalidQuota, c.EntityType)
		}
		types[c.EntityType] = true
		switch c.MatchType {
		case QuotaMatchExact:
			if c.Match == nil {
				return fmt.Errorf("%w: Request specified MATCH_TYPE_EXACT, but set match string to null.", ErrInvalidQuota)
			}
		case QuotaMatchDefault:
			if c.Match != nil {
				return fmt.Errorf("%w: Request specified MATCH_TYPE_DEFAULT, but also specified a match string.", ErrInvalidQuota)
			}
		case QuotaMatchAny:
			if c.Match != nil {
				return fmt.Errorf("%w: Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.", ErrInvalidQuota)
			}
		default:
			return fmt.Errorf("%w: Unknown match type %d", ErrInvalidQuota, c.MatchType)
		}
	}
	return nil
}

func matchesFilter(e QuotaEntity, filter []QuotaFilterComponent, strict bool) bool {
	used := map[string]bool{}
	for _, c := range filter {
		n := e.User
		if c.EntityType == QuotaEntityClientID {
			n = e.ClientID
		}
		used[c.EntityType] = true
		if !n.Set {
			return false
		}
		switch c.MatchType {
		case QuotaMatchExact:
			if n.Default || n.Name != *c.Match {
				return false
			}
		case QuotaMatchDefault:
			if !n.Default {
				return false
			}
		}
	}
	if strict {
		return (!e.User.Set || used[QuotaEntityUser]) && (!e.ClientID.Set || used[QuotaEntityClientID])
	}
	return true
}

func (q *clientQuotas) describe(filter []QuotaFilterComponent, strict bool) ([]QuotaEntry, error) {
	if err := checkQuotaFilter(filter); err != nil {
		return nil, err
	}
	q.mu.RLock()
	defer q.mu.RUnlock()
	var out []QuotaEntry
	for _, e := range slices.SortedFunc(maps.Keys(q.entries), entityOrder) {
		if matchesFilter(e, filter, strict) {
			out = append(out, QuotaEntry{Entity: e, Quotas: maps.Clone(q.entries[e])})
		}
	}
	return out, nil
}

// ClientQuota is the quota that applies to a client for one key: Limit
// (math.Inf(1) for none) and the entity whose quota it is, which clients
// sharing it share (Kafka's quota metric tags): a user's quota is shared
// by all its client ids, a default user quota is each user's own.
type ClientQuota struct {
	Limit float64
	// User and ClientID are the client's names that the quota's entity
	// matched ("" for a component the entity does not have).
	User, ClientID string
}

// quotaFor resolves the quota of key for user and clientID in Kafka's
// order of precedence (DefaultQuotaCallback): user and client id, user and
// default client id, user, default user and client id, default user and
// default client id, default user, client id, default client id.
func (q *clientQuotas) quotaFor(key, user, clientID string) ClientQuota {
	q.mu.RLock()
	defer q.mu.RUnlock()
	u, du, c, dc, none := QuotaName(user), QuotaDefault(), QuotaName(clientID), QuotaDefault(), QuotaEntityName{}
	for _, cand := range []struct {
		e           QuotaEntity
		user, cliID string
	}{
		{QuotaEntity{u, c}, user, clientID},
		{QuotaEntity{u, dc}, user, clientID},
		{QuotaEntity{u, none}, user, ""},
		{QuotaEntity{du, c}, user, clientID},
		{QuotaEntity{du, dc}, user, clientID},
		{QuotaEntity{du, none}, user, ""},
		{QuotaEntity{none, c}, "", clientID},
		{QuotaEntity{none, dc}, "", clientID},
	} {
		if v, ok := q.entries[cand.e][key]; ok {
			return ClientQuota{Limit: v, User: cand.user, ClientID: cand.cliID}
		}
	}
	return ClientQuota{Limit: math.Inf(1)}
}

func (q *clientQuotas) current() uint64 {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return q.version
}

// AlterClientQuotas sets and removes client quotas as Kafka 4.4's
// AlterClientQuotas does, durably (the client quota store is written
// before it returns) unless validateOnly, and returns one result per
// entity in the order of their first mention. An entity fails with
// [ErrInvalidQuota] (Kafka's INVALID_REQUEST) for an entity without
// components or with an empty name, an unknown key, a value not finite,
// not above 0 or fractional for a byte rate, and a key or an entity named
// twice; the other entities' alterations are applied together. An
// alteration that would take the store past 64 MiB fails its entities
// with [ErrStoreFull]. The error is the store's write failing (nothing is
// changed) or the directory closed.
func (d *Dir) AlterClientQuotas(ctx context.Context, alterations []QuotaAlteration, validateOnly bool) ([]QuotaAlterationResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.RLock()
	closed := d.closed
	d.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	return d.quotas.alter(alterations, validateOnly)
}

// DescribeClientQuotas lists the entities with quotas that match filter,
// as Kafka 4.4's DescribeClientQuotas does: each component matches a name
// exactly, the default, or any; strict excludes entities with components
// the filter does not name. A filter Kafka refuses is [ErrInvalidQuota].
func (d *Dir) DescribeClientQuotas(filter []QuotaFilterComponent, strict bool) ([]QuotaEntry, error) {
	return d.quotas.describe(filter, strict)
}

// ClientQuota returns the quota of key (QuotaProducerByteRate, ...) that
// applies to a client authenticated as user (Kafka's "ANONYMOUS" without
// authentication) with client id clientID, resolved in Kafka's order of
// precedence.
func (d *Dir) ClientQuota(key, user, clientID string) ClientQuota {
	return d.quotas.quotaFor(key, user, clientID)
}

// ClientQuotasVersion counts the client quota alterations applied since
// the directory opened: a cache of [Dir.ClientQuota]'s answers is stale
// once it changes.
func (d *Dir) ClientQuotasVersion() uint64 { return d.quotas.current() }
