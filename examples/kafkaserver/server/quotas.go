package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
)

// Client quotas are enforced as Kafka's ClientQuotaManager enforces them
// for produce and fetch byte rates: each quota entity that applies to a
// client (log.Dir.ClientQuota, Kafka's precedence) has a rate over
// quotaSamples windows of quotaWindow (quota.window.num 11,
// quota.window.size.seconds 1); a request that takes it above the quota
// is answered with the throttle time Kafka computes, (rate − quota) /
// quota × the rate's window, and its connection is muted (no request read)
// for that long. A Produce's bytes are the request's size; a Fetch's the
// response's, and a throttled Fetch is answered empty, as Kafka answers
// it. request_percentage and controller_mutation_rate are stored and
// described but not enforced.
const (
	quotaSamples = 11
	quotaWindow  = time.Second
	// maxQuotaSensors bounds the rates kept: one per quota entity in use
	// (a default client-id quota makes one per client id). Beyond it the
	// rate idle longest is dropped.
	maxQuotaSensors = 1 << 16
)

// quotaSample is one window of a rate: its start and the bytes recorded.
type quotaSample struct {
	start time.Time
	value float64
}

// quotaRate is Kafka's Rate over a SampledStat: a total over the last
// quotaSamples windows divided by the time they span.
type quotaRate struct {
	samples []quotaSample
	cur     int
	last    time.Time // of the last record, for eviction
}

func (r *quotaRate) record(v float64, now time.Time) {
	r.last = now
	if len(r.samples) == 0 {
		r.samples = append(r.samples, quotaSample{start: now})
	} else if now.Sub(r.samples[r.cur].start) >= quotaWindow {
		if len(r.samples) < quotaSamples {
			r.samples = append(r.samples, quotaSample{start: now})
			r.cur = len(r.samples) - 1
		} else {
			r.cur = (r.cur + 1) % quotaSamples
			r.samples[r.cur] = quotaSample{start: now}
		}
	}
	r.samples[r.cur].value += v
}

// measure returns the rate in bytes per second and the window it spans.
func (r *quotaRate) measure(now time.Time) (float64, time.Duration) {
	var total float64
	oldest := now
	for i := range r.samples {
		s := &r.samples[i]
		if now.Sub(s.start) >= quotaSamples*quotaWindow {
			*s = quotaSample{start: now} // obsolete, as Kafka purges it
		}
		total += s.value
		if s.start.Before(oldest) {
			oldest = s.start
		}
	}
	elapsed := now.Sub(oldest)
	if full := int(elapsed / quotaWindow); full < quotaSamples-1 {
		elapsed += time.Duration(quotaSamples-1-full) * quotaWindow
	}
	return total / elapsed.Seconds(), elapsed
}

type sensorKey struct {
	key            string // the quota key: producer_byte_rate or consumer_byte_rate
	user, clientID string // the quota entity's, as log.ClientQuota gives them
}

// quotaManager keeps the rates of the quota entities in use.
type quotaManager struct {
	mu      sync.Mutex
	sensors map[sensorKey]*quotaRate
	max     int
}

func newQuotaManager() *quotaManager {
	return &quotaManager{sensors: map[sensorKey]*quotaRate{}, max: maxQuotaSensors}
}

// record adds v bytes to the rate of the quota of key that applies to
// user and clientID and returns the throttle time (0 within the quota).
func (q *quotaManager) record(dir *log.Dir, key, user, clientID string, v float64, now time.Time) time.Duration {
	quota := dir.ClientQuota(key, user, clientID)
	if math.IsInf(quota.Limit, 1) {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	sk := sensorKey{key, quota.User, quota.ClientID}
	r, ok := q.sensors[sk]
	if !ok {
		if len(q.sensors) >= q.max {
			q.evictLocked()
		}
		r = &quotaRate{}
		q.sensors[sk] = r
	}
	r.record(v, now)
	rate, window := r.measure(now)
	if rate <= quota.Limit {
		return 0
	}
	ms := math.Round((rate - quota.Limit) / quota.Limit * float64(window.Milliseconds()))
	return time.Duration(min(ms, math.MaxInt32)) * time.Millisecond
}

// unrecord takes back v bytes recorded (a throttled Fetch's, answered
// empty).
func (q *quotaManager) unrecord(dir *log.Dir, key, user, clientID string, v float64, now time.Time) {
	quota := dir.ClientQuota(key, user, clientID)
	q.mu.Lock()
	defer q.mu.Unlock()
	if r, ok := q.sensors[sensorKey{key, quota.User, quota.ClientID}]; ok {
		r.record(-v, now)
	}
}

func (q *quotaManager) evictLocked() {
	var oldest sensorKey
	var at time.Time
	first := true
	for k, r := range q.sensors {
		if first || r.last.Before(at) {
			oldest, at, first = k, r.last, false
		}
	}
	delete(q.sensors, oldest)
}

// principal is the user quotas match: the name of the connection's
// principal (the SASL user, the client certificate's mapped name, or
// Kafka's ANONYMOUS).
func principal(st *connState) string {
	return strings.TrimPrefix(st.principal, "User:")
}

// throttle records a quota's bytes for the connection's client and, when
// it is over, mutes the connection for the throttle time, which it
// returns in milliseconds.
func (s *Server) throttle(ctx context.Context, key string, v float64) int32 {
	st := stateOf(ctx)
	if st == nil {
		return 0
	}
	d := s.quotas.record(s.dir, key, principal(st), st.clientID, v, time.Now())
	if d > st.mute {
		st.mute = d
	}
	return int32(d.Milliseconds())
}

// quotaEntity is the entity of Kafka's entity components; a type twice
// is refused as Kafka refuses it.
func quotaEntity(components []kmsg.AlterClientQuotasRequestEntryEntity) (log.QuotaEntity, error) {
	m := make(map[string]*string, len(components))
	for _, c := range components {
		if _, dup := m[c.Type]; dup {
			return log.QuotaEntity{}, fmt.Errorf("%w: Invalid client quota entity, duplicate entity entry %s", log.ErrInvalidQuota, c.Type)
		}
		m[c.Type] = c.Name
	}
	return log.EntityOf(m)
}

func entityComponents(e log.QuotaEntity) []kmsg.AlterClientQuotasResponseEntryEntity {
	var out []kmsg.AlterClientQuotasResponseEntryEntity
	for _, c := range []struct {
		typ string
		n   log.QuotaEntityName
	}{{log.QuotaEntityUser, e.User}, {log.QuotaEntityClientID, e.ClientID}} {
		if !c.n.Set {
			continue
		}
		x := kmsg.NewAlterClientQuotasResponseEntryEntity()
		x.Type = c.typ
		if !c.n.Default {
			name := c.n.Name
			x.Name = &name
		}
		out = append(out, x)
	}
	return out
}

// quotaCode maps a client quota error to Kafka's code, and its message
// as Kafka words it.
func quotaCode(err error) (int16, *string) {
	switch {
	case err == nil:
		return errNone, nil
	case errors.Is(err, log.ErrInvalidQuota):
		m := strings.TrimPrefix(err.Error(), log.ErrInvalidQuota.Error()+": ")
		return errInvalidRequest, &m
	case errors.Is(err, log.ErrStoreFull):
		return errPolicyViolation, messageOf(err)
	}
	return codeOf(err), messageOf(err)
}

// handleAlterClientQuotas sets and removes the quotas of users and client
// ids in the directory (log.Dir.AlterClientQuotas), enforced from the next
// request on.
func (s *Server) handleAlterClientQuotas(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterClientQuotasRequest)
	resp := kmsg.NewPtrAlterClientQuotasResponse()
	add := func(components []kmsg.AlterClientQuotasResponseEntryEntity, err error) {
		e := kmsg.NewAlterClientQuotasResponseEntry()
		e.Entity = components
		e.ErrorCode, e.ErrorMessage = quotaCode(err)
		resp.Entries = append(resp.Entries, e)
	}
	var alts []log.QuotaAlteration
	for _, entry := range req.Entries {
		entity, err := quotaEntity(entry.Entity)
		if err != nil {
			comps := make([]kmsg.AlterClientQuotasResponseEntryEntity, len(entry.Entity))
			for i, c := range entry.Entity {
				comps[i] = kmsg.NewAlterClientQuotasResponseEntryEntity()
				comps[i].Type, comps[i].Name = c.Type, c.Name
			}
			add(comps, err)
			continue
		}
		a := log.QuotaAlteration{Entity: entity}
		for _, op := range entry.Ops {
			a.Ops = append(a.Ops, log.QuotaOp{Key: op.Key, Value: op.Value, Remove: op.Remove})
		}
		alts = append(alts, a)
	}
	results, err := s.dir.AlterClientQuotas(ctx, alts, req.ValidateOnly)
	if err != nil {
		results = results[:0]
		for _, a := range alts {
			results = append(results, log.QuotaAlterationResult{Entity: a.Entity, Err: err})
		}
	}
	for _, r := range results {
		add(entityComponents(r.Entity), r.Err)
	}
	return resp, nil
}

// handleDescribeClientQuotas lists the directory's quotas matching the
// request's filter (log.Dir.DescribeClientQuotas).
func (s *Server) handleDescribeClientQuotas(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeClientQuotasRequest)
	resp := kmsg.NewPtrDescribeClientQuotasResponse()
	filter := make([]log.QuotaFilterComponent, len(req.Components))
	for i, c := range req.Components {
		filter[i] = log.QuotaFilterComponent{EntityType: c.EntityType, MatchType: int8(c.MatchType), Match: c.Match}
	}
	entries, err := s.dir.DescribeClientQuotas(filter, req.Strict)
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = quotaCode(err)
		return resp, nil
	}
	// Entries is nullable: null only with an error, as Kafka answers (its
	// admin client fails on a null list otherwise).
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	for _, e := range entries {
		re := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, c := range entityComponents(e.Entity) {
			x := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			x.Type, x.Name = c.Type, c.Name
			re.Entity = append(re.Entity, x)
		}
		for _, k := range []string{log.QuotaConsumerByteRate, log.QuotaControllerMutationRate, log.QuotaProducerByteRate, log.QuotaRequestPercentage} {
			if v, ok := e.Quotas[k]; ok {
				x := kmsg.NewDescribeClientQuotasResponseEntryValue()
				x.Key, x.Value = k, v
				re.Values = append(re.Values, x)
			}
		}
		resp.Entries = append(resp.Entries, re)
	}
	return resp, nil
}

// fetchWithQuota answers a Fetch within the client's consumer_byte_rate:
// its MaxBytes capped at what the quota allows in its window (quota ×
// (quota.window.num − 1) × quota.window.size.seconds, as Kafka caps it),
// the response's size recorded, and a response over the quota answered
// empty, with the throttle time, as Kafka answers it (its bytes taken
// back).
func (s *Server) fetchWithQuota(ctx context.Context, h header, fr *kmsg.FetchRequest, fix func(kmsg.Response)) ([]chunk, error) {
	st := stateOf(ctx)
	var user, clientID string
	if st != nil {
		user, clientID = principal(st), st.clientID
		if q := s.dir.ClientQuota(log.QuotaConsumerByteRate, user, clientID); !math.IsInf(q.Limit, 1) {
			window := q.Limit * (quotaSamples - 1) * quotaWindow.Seconds()
			if fr.MaxBytes <= 0 || float64(fr.MaxBytes) > window {
				fr.MaxBytes = int32(max(1, min(window, math.MaxInt32)))
			}
		}
	}
	resp, slices, err := s.fetch(ctx, fr)
	if err != nil {
		return nil, err
	}
	if fix != nil {
		fix(resp) // authorization's refusals, after the partitions with record slices
	}
	out := encodeFetch(h.version, h.correlation, resp, slices)
	if st == nil {
		return out, nil
	}
	var size int64
	for _, c := range out {
		if c.sl != nil {
			size += c.sl.Size
		} else {
			size += int64(len(c.b))
		}
	}
	ms := s.throttle(ctx, log.QuotaConsumerByteRate, float64(size))
	if ms == 0 {
		return out, nil
	}
	releaseChunks(out)
	s.quotas.unrecord(s.dir, log.QuotaConsumerByteRate, user, clientID, float64(size), time.Now())
	empty := kmsg.NewPtrFetchResponse()
	empty.ThrottleMillis, empty.SessionID = ms, resp.SessionID
	return encodeFetch(h.version, h.correlation, empty, nil), nil
}
