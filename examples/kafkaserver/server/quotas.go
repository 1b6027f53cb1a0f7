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

// Client quotas are enforced as Kafka's ClientQuotaManager and
// ClientRequestQuotaManager enforce them. Each quota entity that applies
// to a client (log.Dir.ClientQuota, Kafka's precedence) has a rate per
// quota key, Kafka's Rate over a SampledStat: up to quotaSamples+1
// samples of quotaWindow each (quota.window.num 11,
// quota.window.size.seconds 1), a sample dropped once nothing was recorded
// in it for quotaSamples windows, the rate the samples' total over the
// time since the oldest began, counted as at least quotaSamples−1 whole
// windows. A request that takes the rate above the quota is answered with
// Kafka's throttle time, (rate − quota) / quota × that time, in
// milliseconds; a request_percentage throttle is at most one window
// (Kafka's bound), a byte rate's unbounded. The connection is then muted
// (no request read) until the throttle time after the response was made,
// the larger throttle when two quotas are over.
//
// What counts, as in Kafka: a Produce's request size (its body, after the
// header); a Fetch's response size, and a throttled Fetch is answered
// empty (its bytes taken back); for request_percentage, the time the
// request's handler runs, as a percentage of one thread: the wall time
// from the request read to its response made, less the time it waits
// for data or for other members (a Fetch's or ShareFetch's long poll,
// JoinGroup and SyncGroup), the waits Kafka parks in its purgatories
// without holding a request thread. The server has no fixed request
// threads, so this is the time a request holds a goroutine busy; the time
// writing the response (Kafka's network-thread time, which it records
// without throttling) is not counted. Exempt from request_percentage, as
// Kafka: SaslHandshake and SaslAuthenticate, ApiVersions before SASL
// authentication (Kafka's authenticator answers them, not its request
// handlers), and an acks=0 Produce. Super users are not exempt (Kafka
// does not exempt them). controller_mutation_rate is stored and described
// but not enforced.
const (
	quotaSamples = 11
	quotaWindow  = time.Second
	// maxRequestThrottle bounds a request_percentage throttle, as Kafka's
	// ClientRequestQuotaManager bounds it: quota.window.size.seconds.
	maxRequestThrottle = quotaWindow
	// maxQuotaSensors bounds the rates kept: one per quota entity in use
	// (a default client-id quota makes one per client id). Beyond it the
	// rate idle longest is dropped.
	maxQuotaSensors = 1 << 16
)

// quotaSample is one window of a rate, its times in Unix milliseconds as
// Kafka keeps them.
type quotaSample struct {
	start, last int64 // the window's start and the last record in it
	value       float64
}

// quotaRate is Kafka's Rate over a SampledStat.
type quotaRate struct {
	samples []quotaSample
	cur     int
	last    time.Time // of the last record, for eviction
}

func (r *quotaRate) record(v float64, now time.Time) {
	r.last = now
	ms := now.UnixMilli()
	if len(r.samples) == 0 {
		r.samples = append(r.samples, quotaSample{start: ms, last: ms})
	} else if ms-r.samples[r.cur].start >= quotaWindow.Milliseconds() {
		r.cur = (r.cur + 1) % (quotaSamples + 1)
		if r.cur >= len(r.samples) {
			r.samples = append(r.samples, quotaSample{start: ms, last: ms})
		} else {
			r.samples[r.cur] = quotaSample{start: ms, last: ms}
		}
	}
	r.samples[r.cur].value += v
	r.samples[r.cur].last = ms
}

// measure returns the rate per second and the window in milliseconds it
// is measured over.
func (r *quotaRate) measure(now time.Time) (float64, int64) {
	ms := now.UnixMilli()
	window := quotaWindow.Milliseconds()
	var total float64
	oldest := ms
	for i := range r.samples {
		s := &r.samples[i]
		if ms-s.last >= quotaSamples*window {
			*s = quotaSample{start: ms, last: ms} // obsolete, as Kafka purges it
		}
		total += s.value
		oldest = min(oldest, s.start)
	}
	elapsed := ms - oldest
	if full := elapsed / window; full < quotaSamples-1 {
		elapsed += (quotaSamples - 1 - full) * window
	}
	elapsed = max(elapsed, 1)
	return total / (float64(elapsed) / 1000), elapsed
}

type sensorKey struct {
	key            string // the quota key: producer_byte_rate, consumer_byte_rate or request_percentage
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

// record adds v to the rate of the quota of key that applies to user and
// clientID and returns the throttle time (0 within the quota).
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
	ms := math.Round((rate - quota.Limit) / quota.Limit * float64(window))
	if key == log.QuotaRequestPercentage {
		ms = min(ms, float64(maxRequestThrottle.Milliseconds()))
	}
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

// requestClock is the request_percentage time of the request a
// connection is handling: when it was read and how long it was parked.
type requestClock struct {
	start  time.Time
	parked time.Duration
}

// parked marks the start of a wait that is not request-thread time (a
// long poll, a rebalance); calling what it returns ends it.
func parked(ctx context.Context) func() {
	st := stateOf(ctx)
	if st == nil {
		return func() {}
	}
	t := time.Now()
	return func() { st.clock.parked += time.Since(t) }
}

// requestExempt reports whether a request is exempt from
// request_percentage, as Kafka exempts it.
func requestExempt(st *connState, key int16, req kmsg.Request) bool {
	switch key {
	case kmsg.SASLHandshake.Int16(), kmsg.SASLAuthenticate.Int16():
		return true
	case kmsg.ApiVersions.Int16():
		return st.sasl != nil && !st.sasl.authenticated
	case kmsg.Produce.Int16():
		pr, ok := req.(*kmsg.ProduceRequest)
		return ok && pr.Acks == 0
	}
	return false
}

// throttleRequest records the request time of the request being handled
// on the connection (from its clock) under request_percentage unless the
// request is exempt, mutes the connection for the throttle and returns
// it in milliseconds.
func (s *Server) throttleRequest(ctx context.Context, key int16, req kmsg.Request) int32 {
	st := stateOf(ctx)
	if st == nil || st.clock.start.IsZero() || requestExempt(st, key, req) {
		return 0
	}
	now := time.Now()
	busy := max(now.Sub(st.clock.start)-st.clock.parked, 0)
	// Kafka records nanoseconds × 100 / 10⁹: percent-seconds of one
	// thread, whose rate per second is the percentage.
	return s.mute(st, s.quotas.record(s.dir, log.QuotaRequestPercentage, principal(st), st.clientID, busy.Seconds()*100, now), now)
}

// mute mutes the connection until d after now (the later of its mutes)
// and returns d in milliseconds.
func (s *Server) mute(st *connState, d time.Duration, now time.Time) int32 {
	if d <= 0 {
		return 0
	}
	if until := now.Add(d); until.After(st.muteUntil) {
		st.muteUntil = until
	}
	return int32(d.Milliseconds())
}

// principal is the user quotas match: the name of the connection's
// principal (the SASL user, the client certificate's mapped name, or
// Kafka's ANONYMOUS).
func principal(st *connState) string {
	return strings.TrimPrefix(st.principal, "User:")
}

// throttle records a byte rate's bytes for the connection's client and,
// when it is over, mutes the connection for the throttle time, which it
// returns in milliseconds.
func (s *Server) throttle(ctx context.Context, key string, v float64) int32 {
	st := stateOf(ctx)
	if st == nil {
		return 0
	}
	now := time.Now()
	return s.mute(st, s.quotas.record(s.dir, key, principal(st), st.clientID, v, now), now)
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

// fetchWithQuota answers a Fetch within the client's consumer_byte_rate
// and request_percentage:
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
	// Kafka records the request's time and the response's bytes; over
	// either quota, the response is empty and its bytes taken back.
	ms := max(s.throttleRequest(ctx, h.key, fr), s.throttle(ctx, log.QuotaConsumerByteRate, float64(size)))
	if ms == 0 {
		return out, nil
	}
	releaseChunks(out)
	s.quotas.unrecord(s.dir, log.QuotaConsumerByteRate, user, clientID, float64(size), time.Now())
	empty := kmsg.NewPtrFetchResponse()
	empty.ThrottleMillis, empty.SessionID = ms, resp.SessionID
	return encodeFetch(h.version, h.correlation, empty, nil), nil
}
