// Package server serves a kafkalite directory over Kafka's wire protocol,
// so that unmodified Kafka clients (franz-go, librdkafka, the Java client,
// sarama, kafka-python, kafkajs) produce to it, fetch from it, join
// consumer groups and share groups (KIP-932) and run transactions. It is
// built on kafkalite's public raw API: log.Log.Append and Sync for
// Produce, log.Log.Fetch file slices (with the aborted transactions of
// read_committed) for Fetch, OffsetForTimestamp for ListOffsets,
// EndOffsetForEpoch for OffsetForLeaderEpoch, the log.Dir's topic
// administration for the admin APIs, log/share's share-partition manager
// for ShareFetch and ShareAcknowledge; and on the directory's group and
// transaction coordinators (kafkalite's log/coordinator, which only
// packages of this repository can import). Requests and responses are
// encoded with franz-go's kmsg, the generated message package of Kafka's
// protocol.
//
// The APIs served, and the versions advertised, are listed by
// [SupportedAPIs] and in the module's README (examples/kafkaserver/README.md).
//
// A connection's requests are handled one at a time and answered in
// order, as Kafka's broker does (it mutes a connection while one of its
// requests is in flight); a Produce with acks=0 gets no answer. Every
// request's size is checked against Config.MaxRequestBytes before it is
// read, its API key and version before it is decoded; a frame that is
// malformed, names an unknown API or a version outside the advertised
// range closes its connection (ApiVersions alone is answered at any
// version, with UNSUPPORTED_VERSION and the ranges, as Kafka answers it).
//
// What a client can make the server spend is bounded by Config: the
// connections open (MaxConnections, MaxConnectionsPerIP), their idleness
// and responses they do not read (IdleTimeout: a write that makes no
// progress for that long closes its connection), the partitions they may
// create (MaxPartitions), failed authentications (one a
// FailedAuthenticationDelay per connection), re-authentications (one a
// second per connection; a session ended by ConnectionsMaxReauth or its
// OAUTHBEARER token's expiry closes its connection at the next request),
// the share sessions open
// (MaxShareSessions, each holding only partitions the directory has). A
// Fetch or a ShareFetch holds no records in memory: they go out as file
// slices, read_committed's cut at the last stable offset too. A failed
// accept (no file descriptor left) is retried after a pause, and the
// connections open are served meanwhile.
package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	stdlog "log/slog"
	"math"
	"math/bits"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/acl"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/segment"
)

// Config configures a Server. The zero value is not usable: start from
// [DefaultConfig].
type Config struct {
	// Listeners are the server's listeners (Kafka's listeners,
	// advertised.listeners, listener.security.protocol.map), each with
	// its own TLS and SASL mechanisms; see [Listener]. Empty means one
	// listener, named as its protocol, that AdvertisedAddr, TLS and
	// SASLMechanisms describe.
	Listeners []Listener
	// AdvertisedAddr is the host:port that Metadata and FindCoordinator
	// give clients (Kafka's advertised.listeners) when Listeners is
	// empty; empty means the listener's address.
	AdvertisedAddr string
	// MaxRequestBytes mirrors socket.request.max.bytes (Kafka's default,
	// 104857600): a larger request closes its connection unread. A
	// connection holds at most one request: the server's live heap stays
	// under MaxConnections × (MaxRequestBytes + 256 KiB) + 16 MiB.
	MaxRequestBytes int32
	// FetchMaxBytes mirrors fetch.max.bytes (Kafka's default, 57671680):
	// the most record bytes one Fetch response carries, whatever the
	// request asks.
	FetchMaxBytes int32
	// MaxConnections mirrors max.connections: while that many
	// connections are open the server accepts no other (new ones wait in
	// the listen backlog), as Kafka's acceptor waits for a free slot.
	// Kafka's default is unlimited; here 1024, or a quarter of the
	// process's file descriptor limit (RLIMIT_NOFILE) when that is less.
	MaxConnections int
	// MaxConnectionsPerIP mirrors max.connections.per.ip (Kafka's
	// default, 2147483647): a connection from an address that already
	// has that many is closed at once, as Kafka closes it. 0 refuses
	// every address without an override.
	MaxConnectionsPerIP int
	// MaxConnectionsPerIPOverrides mirrors
	// max.connections.per.ip.overrides (Kafka's default, none): a limit
	// per IP address or host name (New resolves a name once) in place of
	// MaxConnectionsPerIP.
	MaxConnectionsPerIPOverrides map[string]int
	// IdleTimeout mirrors connections.max.idle.ms (Kafka's default, 10
	// minutes): a connection is closed once it has sent no request for
	// that long, and once a write of its response makes no progress for
	// that long (a client that does not read what it asked for), as
	// Kafka's selector closes a connection with no read or write for
	// that long. A write is at most 64 KiB of a response's bytes or one
	// partition's records. 0 or less never closes a connection for
	// idleness.
	IdleTimeout time.Duration
	// MaxPartitions is kafkalite's own bound (Kafka has none; KIP-578
	// proposed one, max.broker.partitions): the most partitions the
	// directory may hold through this server's clients. CreateTopics,
	// CreatePartitions and Metadata's auto-creation that would pass it
	// are refused, CreateTopics and CreatePartitions with
	// POLICY_VIOLATION (the code Kafka's controller gives an operation
	// it refuses to grow that large, and a CreateTopicPolicy's refusal),
	// Metadata with UNKNOWN_TOPIC_OR_PARTITION (Kafka 4's answer when the
	// controller refuses an auto-creation). Internal topics and topics
	// created in process count but are not refused. Each partition holds
	// three file descriptors (its active segment's .log, .index and
	// .timeindex; a sealed segment one to three more): the default is a
	// sixth of the process's descriptor limit (RLIMIT_NOFILE; 174762
	// where the system has none), so that partitions take at most half.
	MaxPartitions int
	// FailedAuthenticationDelay mirrors
	// connection.failed.authentication.delay.ms (Kafka's default, 100
	// ms): the answer to a failed SASL authentication, and the close that
	// follows it, wait that long, so that a client guessing passwords
	// gets one guess per connection per delay. It must be below
	// IdleTimeout; 0 answers at once.
	FailedAuthenticationDelay time.Duration
	// AutoCreateTopics mirrors auto.create.topics.enable (Kafka's
	// default, true): a Metadata request that allows it creates the
	// topics it names, with NumPartitions partitions.
	AutoCreateTopics bool
	// NumPartitions mirrors num.partitions (Kafka's default, 1): the
	// partitions of an auto-created topic and of a CreateTopics request
	// that asks for -1.
	NumPartitions int32
	// TLS, when not nil, makes the listener TLS (Kafka's SSL listener)
	// when Listeners is empty (each Listener has its own otherwise):
	// every connection is a tls.Server with this configuration, its
	// handshake done before the first request, within IdleTimeout. Its
	// ClientAuth mirrors ssl.client.auth: none is tls.NoClientCert,
	// requested tls.VerifyClientCertIfGiven, required
	// tls.RequireAndVerifyClientCert (with ClientCAs the truststore).
	// Without SASL a connection's principal is "User:" and its verified
	// client certificate's subject as Java's X500Principal.getName()
	// prints it (RFC 2253: "CN=alice,OU=eng,O=example"), mapped by
	// SSLPrincipalMappingRules; "User:ANONYMOUS" without a certificate.
	// With SASL the SASL user is the principal, as in Kafka.
	TLS *tls.Config
	// SSLPrincipalMappingRules mirrors ssl.principal.mapping.rules
	// (Kafka's default, DEFAULT; empty means DEFAULT): rules tried in
	// order on a client certificate's distinguished name, the first that
	// applies naming the principal. DEFAULT takes the name as it is;
	// RULE:pattern/replacement/, with L or U after it for lower or upper
	// case, applies when the pattern matches the whole name and replaces
	// each match by the replacement ($1 a group, as Java's replaceAll),
	// e.g. RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L. Patterns are Go's
	// regexp syntax (RE2), which is Java's for such rules; a pattern Go
	// cannot compile, or a rule Kafka refuses, makes New fail with
	// ErrInvalidSSLPrincipalMappingRules. A name no rule applies to
	// closes its connection, as Kafka fails it.
	SSLPrincipalMappingRules string
	// SASLMechanisms mirrors sasl.enabled.mechanisms, the mechanisms of
	// the listener when Listeners is empty, and of each SASL listener
	// without its own: PLAIN,
	// SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER (unsecured JWS tokens,
	// validated as Kafka's OAuthBearerUnsecuredValidatorCallbackHandler
	// does with the OAuthBearer options below; the principal is
	// "User:" and the token's principal claim). Empty (the default) means no SASL:
	// every connection may send every request. With mechanisms, a
	// connection may send only ApiVersions, SaslHandshake and
	// SaslAuthenticate until it authenticates; anything else closes it.
	SASLMechanisms []string
	// Users are the SASL users and their passwords; the SCRAM credentials
	// are derived from them (a random salt per user and mechanism, 4096
	// iterations, as kafka-configs makes them). SCRAM also accepts the
	// directory's credentials (log.Dir.AlterUserScramCredentials, the
	// AlterUserScramCredentials request), which win over these for the
	// same user and mechanism; with a SCRAM mechanism Users may be empty.
	Users map[string]string
	// PlainUsers are users and passwords for PLAIN only, as Kafka's
	// PlainLoginModule user_<name>="password" options give them: unlike
	// Users, SCRAM does not accept them (a Kafka broker's SCRAM users are
	// its SCRAM credentials). A user in both is checked against Users.
	PlainUsers map[string]string
	// OAuthBearerPrincipalClaimName mirrors the unsecured validator's
	// JAAS option unsecuredValidatorPrincipalClaimName (Kafka's default,
	// "sub"; blank means the default): the claim naming the principal.
	OAuthBearerPrincipalClaimName string
	// OAuthBearerScopeClaimName mirrors unsecuredValidatorScopeClaimName
	// (Kafka's default, "scope"; blank means the default): the claim
	// holding the token's scope, a string or a list of strings.
	OAuthBearerScopeClaimName string
	// OAuthBearerRequiredScope mirrors unsecuredValidatorRequiredScope
	// (Kafka's default, none; Kafka separates the items with spaces):
	// the scope items a token must have, else it is refused with
	// "insufficient_scope".
	OAuthBearerRequiredScope []string
	// OAuthBearerAllowableClockSkew mirrors
	// unsecuredValidatorAllowableClockSkewMs (Kafka's default, 0): how
	// far a token's exp may lie in the past and its iat in the future.
	OAuthBearerAllowableClockSkew time.Duration
	// ConnectionsMaxReauth mirrors connections.max.reauth.ms (Kafka's
	// default, 0: sessions do not expire), KIP-368: a SASL session ends
	// that long after it authenticated, or when its OAUTHBEARER token
	// expires if sooner; SaslAuthenticate v1+ tells the client
	// (SessionLifetimeMs), which re-authenticates on the connection with
	// a SaslHandshake and SaslAuthenticate of the same mechanism and
	// principal (a changed principal is refused with
	// SASL_AUTHENTICATION_FAILED, a changed mechanism closes the
	// connection), at most once a second. A connection whose session
	// ended is closed at its next request (ErrSessionExpired), as Kafka
	// closes it, whatever its SaslAuthenticate version.
	ConnectionsMaxReauth time.Duration
	// AuthorizerClassName mirrors authorizer.class.name (Kafka's
	// default, empty: no authorization; every request is served and
	// CreateAcls, DescribeAcls and DeleteAcls answer SECURITY_DISABLED).
	// [StandardAuthorizer] turns authorization on: every request is
	// checked as Kafka's KafkaApis checks it, against the directory's
	// ACLs (package log/acl), for the connection's principal
	// ("User:<SASL user>", on TLS without SASL "User:<certificate
	// subject>" (see TLS), else "User:ANONYMOUS") and address.
	// Other values are refused.
	AuthorizerClassName string
	// SuperUsers mirrors super.users (Kafka's default, none; Kafka
	// separates them with ";"): principals allowed everything.
	SuperUsers []string
	// AllowEveryoneIfNoACLFound mirrors allow.everyone.if.no.acl.found
	// (Kafka's default, false): a resource no ACL names is open to all.
	AllowEveryoneIfNoACLFound bool
	// MaxShareSessions mirrors group.share.max.share.sessions (Kafka's
	// default, 2000): the most share sessions (KIP-932's ShareFetch
	// sessions, one per share group member) open at once; a ShareFetch
	// that would open another is answered SHARE_SESSION_LIMIT_REACHED.
	MaxShareSessions int
	// MaxRequestPartitionSizeLimit mirrors
	// max.request.partition.size.limit (Kafka's default, 2000): the most
	// partitions one DescribeTopicPartitions response lists, whatever the
	// request's ResponsePartitionLimit; the rest come with a cursor. At
	// least 1.
	MaxRequestPartitionSizeLimit int
	// Brokers is kafkalite's own setting (Kafka has none): how many
	// virtual brokers serve the directory (default 1), with ids from the
	// directory's node id on, each on its own listener
	// ([Server.ServeBroker]), each partition led by one of its replicas
	// among them (see cluster.go). The data is in the one directory.
	Brokers int
	// DefaultReplicationFactor mirrors default.replication.factor
	// (Kafka's default, 1): the replicas of an auto-created topic and of
	// a CreateTopics topic that asks for -1. At most Brokers.
	DefaultReplicationFactor int16
	// Logger receives the server's logs; nil means slog.Default().
	Logger *stdlog.Logger
}

// DefaultConfig returns Kafka's defaults, with MaxConnections and
// MaxPartitions derived from the process's file descriptor limit.
func DefaultConfig() Config {
	conns, parts := descriptorDefaults(descriptorLimit())
	return Config{
		MaxRequestBytes:               104857600,
		FetchMaxBytes:                 57671680,
		MaxConnections:                conns,
		MaxConnectionsPerIP:           math.MaxInt32,
		IdleTimeout:                   10 * time.Minute,
		AutoCreateTopics:              true,
		NumPartitions:                 1,
		MaxPartitions:                 parts,
		FailedAuthenticationDelay:     100 * time.Millisecond,
		OAuthBearerPrincipalClaimName: defaultPrincipalClaimName,
		OAuthBearerScopeClaimName:     defaultScopeClaimName,
		MaxShareSessions:              defaultMaxShareSessions,
		MaxRequestPartitionSizeLimit:  2000,
		SSLPrincipalMappingRules:      "DEFAULT",
		Brokers:                       1,
		DefaultReplicationFactor:      1,
	}
}

// descriptorDefaults are MaxConnections and MaxPartitions for a process
// that may open n file descriptors: connections take one each, at most a
// quarter of them and at most 1024; partitions three each, at most half.
func descriptorDefaults(n uint64) (conns, partitions int) {
	n = min(n, 1<<30)
	return int(max(1, min(1024, n/4))), int(max(1, n/2/3))
}

// Server serves one log.Dir. Its Serve runs until its context ends or
// Close is called; Close also closes every connection and waits for
// their goroutines. The Dir stays open: its owner closes it after the
// server.
type Server struct {
	dir *log.Dir
	cfg Config
	lg  *stdlog.Logger

	mu     sync.Mutex // protects the following
	lns    map[net.Listener]struct{}
	conns  map[net.Conn]netip.Addr // the open connections and their clients' addresses
	perIP  map[netip.Addr]int      // open connections by client address
	closed bool
	wg     sync.WaitGroup
	bound  map[string]*boundListener // the listeners being served, by name
	first  *boundListener            // the first listener served: Addr's
	done   chan struct{}

	listeners []Listener // Config.Listeners, or the one the single-listener fields describe

	// slots holds a token per open connection (max.connections): Serve
	// takes one before it accepts, a connection's end gives it back.
	slots chan struct{}
	// perIPOverrides are the resolved max.connections.per.ip.overrides.
	perIPOverrides map[netip.Addr]int

	// createMu serialises the creations of topics and partitions that
	// clients ask for, so that MaxPartitions holds between its check
	// and the creation.
	createMu sync.Mutex

	credMu sync.Mutex
	creds  map[string]credential // SCRAM credentials by mechanism and user

	quotas *quotaManager // the byte rates and request times of the quota entities in use

	ids topicIDs

	shareSessions shareSessions // KIP-932's share sessions

	authz *acl.Authorizer // nil: no authorization (Config.AuthorizerClassName)

	cluster *cluster // the virtual brokers (Config.Brokers); nil for one

	oauth unsecuredValidator // OAUTHBEARER's
	now   func() time.Time   // the clock of SASL sessions and OAUTHBEARER tokens

	sslMapper *sslPrincipalMapper // ssl.principal.mapping.rules
}

// New returns a server for d.
func New(d *log.Dir, cfg Config) (*Server, error) {
	switch {
	case cfg.MaxRequestBytes <= 0:
		return nil, fmt.Errorf("server: MaxRequestBytes %d must be positive", cfg.MaxRequestBytes)
	case cfg.FetchMaxBytes <= 0:
		return nil, fmt.Errorf("server: FetchMaxBytes %d must be positive", cfg.FetchMaxBytes)
	case cfg.MaxConnections <= 0:
		return nil, fmt.Errorf("server: MaxConnections %d must be positive", cfg.MaxConnections)
	case cfg.MaxConnectionsPerIP < 0:
		return nil, fmt.Errorf("server: MaxConnectionsPerIP %d must not be negative", cfg.MaxConnectionsPerIP)
	case cfg.MaxConnectionsPerIP == 0 && len(cfg.MaxConnectionsPerIPOverrides) == 0:
		// As Kafka refuses max.connections.per.ip=0 without overrides.
		return nil, errors.New("server: MaxConnectionsPerIP 0 is allowed only with MaxConnectionsPerIPOverrides")
	case cfg.NumPartitions <= 0:
		return nil, fmt.Errorf("server: NumPartitions %d must be positive", cfg.NumPartitions)
	case cfg.MaxPartitions <= 0:
		return nil, fmt.Errorf("server: MaxPartitions %d must be positive", cfg.MaxPartitions)
	case cfg.MaxRequestPartitionSizeLimit <= 0:
		return nil, fmt.Errorf("server: MaxRequestPartitionSizeLimit %d must be positive", cfg.MaxRequestPartitionSizeLimit)
	case cfg.Brokers <= 0:
		return nil, fmt.Errorf("server: Brokers %d must be positive", cfg.Brokers)
	case cfg.DefaultReplicationFactor <= 0 || int(cfg.DefaultReplicationFactor) > cfg.Brokers:
		return nil, fmt.Errorf("server: DefaultReplicationFactor %d must be between 1 and Brokers (%d)", cfg.DefaultReplicationFactor, cfg.Brokers)
	case cfg.MaxShareSessions <= 0:
		return nil, fmt.Errorf("server: MaxShareSessions %d must be positive", cfg.MaxShareSessions)
	case cfg.FailedAuthenticationDelay < 0:
		return nil, fmt.Errorf("server: FailedAuthenticationDelay %v must not be negative", cfg.FailedAuthenticationDelay)
	case cfg.IdleTimeout > 0 && cfg.FailedAuthenticationDelay >= cfg.IdleTimeout:
		// As Kafka requires connection.failed.authentication.delay.ms
		// below connections.max.idle.ms.
		return nil, fmt.Errorf("server: FailedAuthenticationDelay %v must be below IdleTimeout %v", cfg.FailedAuthenticationDelay, cfg.IdleTimeout)
	case cfg.AuthorizerClassName != "" && cfg.AuthorizerClassName != StandardAuthorizer:
		return nil, fmt.Errorf("server: authorizer %q is not served (%s)", cfg.AuthorizerClassName, StandardAuthorizer)
	}
	listeners, err := listenersOf(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.ConnectionsMaxReauth < 0 {
		return nil, fmt.Errorf("server: ConnectionsMaxReauth %v must not be negative", cfg.ConnectionsMaxReauth)
	}
	oauth, err := newUnsecuredValidator(cfg)
	if err != nil {
		return nil, err
	}
	overrides, err := resolveOverrides(cfg.MaxConnectionsPerIPOverrides)
	if err != nil {
		return nil, err
	}
	mapper, err := parseSSLPrincipalMappingRules(cfg.SSLPrincipalMappingRules)
	if err != nil {
		return nil, err
	}
	lg := cfg.Logger
	if lg == nil {
		lg = stdlog.Default()
	}
	var authz *acl.Authorizer
	if cfg.AuthorizerClassName != "" {
		if authz, err = acl.Open(d, acl.Config{SuperUsers: cfg.SuperUsers, AllowEveryoneIfNoACLFound: cfg.AllowEveryoneIfNoACLFound}); err != nil {
			return nil, err
		}
	}
	var cl *cluster
	if cfg.Brokers > 1 {
		if cl, err = openCluster(d, cfg, lg); err != nil {
			return nil, err
		}
	}
	return &Server{dir: d, cfg: cfg, listeners: listeners, bound: map[string]*boundListener{}, lg: lg, authz: authz, cluster: cl, oauth: oauth, now: time.Now,
		lns: map[net.Listener]struct{}{}, conns: map[net.Conn]netip.Addr{},
		perIP: map[netip.Addr]int{}, done: make(chan struct{}), slots: make(chan struct{}, cfg.MaxConnections),
		perIPOverrides: overrides, creds: map[string]credential{}, quotas: newQuotaManager(), shareSessions: shareSessions{max: cfg.MaxShareSessions},
		sslMapper: mapper}, nil
}

// resolveOverrides resolves max.connections.per.ip.overrides' hosts to
// addresses, as Kafka resolves them once (InetAddress.getByName).
func resolveOverrides(in map[string]int) (map[netip.Addr]int, error) {
	out := map[netip.Addr]int{}
	for host, n := range in {
		if n < 0 {
			return nil, fmt.Errorf("server: MaxConnectionsPerIPOverrides: %d connections for %s", n, host)
		}
		if a, err := netip.ParseAddr(host); err == nil {
			out[a.Unmap()] = n
			continue
		}
		ips, err := net.LookupIP(host)
		if err != nil {
			return nil, fmt.Errorf("server: MaxConnectionsPerIPOverrides: %w", err)
		}
		for _, ip := range ips {
			if a, ok := netip.AddrFromSlice(ip); ok {
				out[a.Unmap()] = n
			}
		}
	}
	return out, nil
}

// Serve is New and Server.Serve: it serves d on ln, as the first
// listener, until ctx ends.
func Serve(ctx context.Context, ln net.Listener, d *log.Dir, cfg Config) error {
	s, err := New(d, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Serve(ctx, ln)
}

// ErrServerClosed is what Serve returns after Close.
var ErrServerClosed = errors.New("server: closed")

// Serve accepts connections on ln until ctx ends (it returns ctx's error),
// Close is called (ErrServerClosed) or ln is closed (net.ErrClosed). It
// closes ln when it returns. A failed accept (no file descriptor left,
// EMFILE) is logged and retried after a pause that doubles from 5 ms to
// a second, as Kafka's acceptor logs and goes on: the connections open
// are served meanwhile, and accepting resumes once descriptors come back.
// While Config.MaxConnections are open it accepts nothing. ln is served
// as the first of Config.Listeners (see ServeListener for the others).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return s.ServeListener(ctx, ln, s.listeners[0].Name)
}

// serve is Serve for the listener bl.
func (s *Server) serve(ctx context.Context, ln net.Listener, bl *boundListener) error {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	case s.bound[s.boundKey(ctx, bl.Name)] != nil:
		s.mu.Unlock()
		ln.Close()
		return fmt.Errorf("server: listener %s is served already", s.boundKey(ctx, bl.Name))
	}
	s.lns[ln] = struct{}{}
	s.bound[s.boundKey(ctx, bl.Name)] = bl
	if s.first == nil {
		s.first = bl
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	s.loadCoordinators(ctx)
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer func() {
		s.mu.Lock()
		delete(s.lns, ln)
		delete(s.bound, s.boundKey(ctx, bl.Name))
		s.mu.Unlock()
		ln.Close()
	}()
	var pause time.Duration
	for {
		if err := s.takeSlot(ctx); err != nil {
			return err
		}
		c, err := ln.Accept()
		if err != nil {
			s.giveSlot()
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case s.isClosed():
				return ErrServerClosed
			case errors.Is(err, net.ErrClosed):
				return err
			}
			pause = min(max(2*pause, minAcceptPause), maxAcceptPause)
			s.lg.Error("kafkaserver: accepting a connection failed; retrying", "err", err, "in", pause)
			if err := s.sleep(ctx, pause); err != nil {
				return err
			}
			continue
		}
		pause = 0
		if !s.track(c) {
			c.Close()
			s.giveSlot()
			continue
		}
		if bl.TLS != nil {
			tc := tls.Server(c, bl.TLS)
			s.mu.Lock()
			s.conns[tc] = s.conns[c]
			delete(s.conns, c)
			s.mu.Unlock()
			c = tc
		}
		go func() {
			defer s.untrack(c)
			s.serveConn(ctx, c, bl)
		}()
	}
}

// The pauses after a failed accept.
const (
	minAcceptPause = 5 * time.Millisecond
	maxAcceptPause = time.Second
)

// takeSlot waits until fewer than MaxConnections connections are open
// and takes a slot; an error when ctx ends or the server closes.
func (s *Server) takeSlot(ctx context.Context) error {
	select {
	case s.slots <- struct{}{}:
		return nil
	default:
	}
	s.lg.Warn("kafkaserver: max.connections reached; accepting again once a connection closes", "max", s.cfg.MaxConnections)
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return ErrServerClosed
	}
}

func (s *Server) giveSlot() { <-s.slots }

// sleep waits for d; an error when ctx ends or the server closes first.
func (s *Server) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return ErrServerClosed
	}
}

// loadCoordinators loads the coordinators whose topics the directory
// holds before the first request is read, as a Kafka broker loads its
// coordinator partitions when it starts: a transaction open across a
// restart has its partitions cleared again for its producer's batches
// (which come with no request to the coordinator first), its timeout
// runs again, and restored group members' sessions start. A coordinator
// that fails to load is logged; the requests that need it try again.
func (s *Server) loadCoordinators(ctx context.Context) {
	topics := s.dir.Topics()
	var err error
	switch {
	case slices.Contains(topics, coordinator.TransactionStateTopic):
		_, err = s.txns(ctx) // and the group coordinator
	case slices.Contains(topics, coordinator.OffsetsTopic):
		_, err = s.coordinator(ctx)
	}
	if err != nil {
		s.lg.Error("kafkaserver: loading the coordinators failed; the requests that need them try again", "err", err)
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// track registers a connection, unless the server is closed or its
// client's address has max.connections.per.ip connections already.
func (s *Server) track(c net.Conn) bool {
	var ip netip.Addr
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		ip = ap.Addr().Unmap()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	limit, ok := s.perIPOverrides[ip]
	if !ok {
		limit = s.cfg.MaxConnectionsPerIP
	}
	if n := s.perIP[ip]; n >= limit {
		s.lg.Info("kafkaserver: rejected a connection: its address has max.connections.per.ip connections", "remote", c.RemoteAddr().String(), "max", limit)
		return false
	}
	s.perIP[ip]++
	s.conns[c] = ip
	s.wg.Add(1)
	return true
}

func (s *Server) untrack(c net.Conn) {
	c.Close()
	s.mu.Lock()
	ip := s.conns[c]
	delete(s.conns, c)
	if s.perIP[ip]--; s.perIP[ip] <= 0 {
		delete(s.perIP, ip)
	}
	s.mu.Unlock()
	s.giveSlot()
	s.wg.Done()
}

// Close stops the server: its listeners and connections are closed, and
// Close returns once every goroutine of the server has ended.
func (s *Server) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
		for ln := range s.lns {
			ln.Close()
		}
		for c := range s.conns {
			c.Close()
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// Addr is the host:port the server tells clients to connect to, once
// Serve has started; empty before.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		return ""
	}
	return net.JoinHostPort(s.first.host, strconv.Itoa(int(s.first.port)))
}

// errCloseConn is returned by a handler to close the connection without
// an answer (a request Kafka's broker would drop the connection for).
var errCloseConn = errors.New("server: closing the connection")

// serveConn reads requests from c and answers them in order until c
// fails, a request is refused, or the server closes.
func (s *Server) serveConn(ctx context.Context, c net.Conn, bl *boundListener) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := &connState{clientHost: "/" + c.RemoteAddr().String(), principal: anonymous, listener: bl}
	if host, _, err := net.SplitHostPort(c.RemoteAddr().String()); err == nil {
		st.clientHost = "/" + host
	}
	if len(bl.SASLMechanisms) > 0 {
		st.sasl = &saslState{}
	}
	ctx = context.WithValue(ctx, connKey{}, st)
	defer s.dropShareSessions(ctx, st)
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	if tc, ok := c.(*tls.Conn); ok {
		if err := s.handshake(ctx, tc, st); err != nil {
			if ctx.Err() == nil {
				s.lg.Info("kafkaserver: closing a connection", "remote", c.RemoteAddr().String(), "err", err)
			}
			return
		}
	}
	r := bufio.NewReaderSize(c, 64<<10)
	cw := &connWriter{c: c, idle: s.cfg.IdleTimeout}
	w := bufio.NewWriterSize(cw, 64<<10)
	// closeWrite ends the connection after a failed write, saying so
	// when the client stopped reading.
	closeWrite := func(err error) {
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			s.lg.Info("kafkaserver: closing a connection that does not read its responses", "remote", c.RemoteAddr().String(),
				"idle", s.cfg.IdleTimeout, "err", err)
		}
	}
	var frame []byte
	for {
		if s.cfg.IdleTimeout > 0 {
			_ = c.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
		}
		var err error
		frame, err = readFrame(r, frame, s.cfg.MaxRequestBytes)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && ctx.Err() == nil {
				s.lg.Info("kafkaserver: closing a connection", "remote", c.RemoteAddr().String(), "err", err)
			}
			return
		}
		_ = c.SetReadDeadline(time.Time{})
		if st.sasl != nil && st.sasl.raw && !st.sasl.authenticated {
			reply, err := s.rawToken(ctx, frame)
			if err != nil {
				s.lg.Info("kafkaserver: closing a connection", "remote", c.RemoteAddr().String(), "err", err)
				s.delayFailedAuth(ctx) // a failed v0 exchange gets no answer, its close waits
				return
			}
			out := binary.BigEndian.AppendUint32(nil, uint32(len(reply)))
			if _, err := w.Write(append(out, reply...)); err != nil {
				closeWrite(err)
				return
			}
			if err := w.Flush(); err != nil {
				closeWrite(err)
				return
			}
			continue
		}
		out, err := s.handle(ctx, frame)
		if err != nil {
			s.lg.Info("kafkaserver: closing a connection", "remote", c.RemoteAddr().String(), "err", err)
			return
		}
		if out == nil {
			frame = keepFrame(frame)
			if !s.muteQuota(ctx, st) {
				return
			}
			continue // acks=0
		}
		if st.authFailed {
			s.delayFailedAuth(ctx)
		}
		if err := writeChunks(w, cw, out); err != nil {
			closeWrite(err)
			return
		}
		// The response may hold bytes of the request: its buffer is
		// given up once the response is written.
		frame = keepFrame(frame)
		if st.closeAfter {
			_ = w.Flush()
			return
		}
		if r.Buffered() == 0 || !st.muteUntil.IsZero() {
			if err := w.Flush(); err != nil {
				closeWrite(err)
				return
			}
		}
		if !s.muteQuota(ctx, st) {
			return
		}
	}
}

// handshake does a TLS connection's handshake, within IdleTimeout, and
// sets the connection's principal from its client certificate.
func (s *Server) handshake(ctx context.Context, tc *tls.Conn, st *connState) error {
	if s.cfg.IdleTimeout > 0 {
		_ = tc.SetDeadline(time.Now().Add(s.cfg.IdleTimeout))
	}
	if err := tc.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("TLS handshake: %w", err)
	}
	_ = tc.SetDeadline(time.Time{})
	p, err := s.tlsPrincipal(tc.ConnectionState(), st.listener.TLS)
	if err != nil {
		return fmt.Errorf("the client certificate's principal: %w", err)
	}
	st.principal = p
	return nil
}

// muteQuota waits out the connection's quota throttle (reading no
// request meanwhile, as Kafka mutes a throttled channel); false if the
// connection or the server ended meanwhile.
func (s *Server) muteQuota(ctx context.Context, st *connState) bool {
	if st.muteUntil.IsZero() {
		return true
	}
	d := time.Until(st.muteUntil)
	st.muteUntil = time.Time{}
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// ErrFrameTooLarge is why a connection whose request is larger than
// Config.MaxRequestBytes is closed.
var ErrFrameTooLarge = errors.New("server: request larger than socket.request.max.bytes")

// ErrBadFrame is why a connection whose request cannot be parsed is
// closed.
var ErrBadFrame = errors.New("server: malformed request")

// readFrame reads one size-prefixed request into buf (grown as needed,
// never past limit).
func readFrame(r *bufio.Reader, buf []byte, limit int32) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return buf, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	switch {
	case n < 0:
		return buf, fmt.Errorf("%w: negative size %d", ErrBadFrame, n)
	case n > limit:
		return buf, fmt.Errorf("%w: %d bytes, the limit is %d", ErrFrameTooLarge, n, limit)
	case n < 8:
		return buf, fmt.Errorf("%w: %d bytes cannot hold a request header", ErrBadFrame, n)
	}
	if cap(buf) < int(n) && n > keptFrameBytes {
		// A large request takes a buffer a request of its size left
		// behind, if one is there: it holds no memory that was not held.
		if b := largeFrames.get(int(n)); b != nil {
			buf = b
		}
	}
	if cap(buf) >= int(n) {
		buf = buf[:n]
		_, err := io.ReadFull(r, buf)
		return buf, err
	}
	// A large request's buffer grows as its bytes arrive, a step at a
	// time, so that a size alone (a client that announces 100 MiB and
	// sends nothing) holds no memory.
	// Its last step takes it to a power of two (never past the limit),
	// so that it serves a later request of its size from largeFrames.
	buf, want := buf[:0], int(n)
	if n > keptFrameBytes {
		want = min(1<<bits.Len(uint(n-1)), int(limit))
	}
	for len(buf) < int(n) {
		step := min(int(n)-len(buf), frameStep)
		if cap(buf)-len(buf) < step {
			buf = slices.Grow(buf, min(want, max(2*cap(buf), len(buf)+step))-len(buf))
		}
		m, err := io.ReadFull(r, buf[len(buf):len(buf)+step])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// frameStep is how far a request's buffer grows ahead of the bytes read;
// keptFrameBytes is the largest buffer a connection keeps between
// requests (a larger one, for a large produce, goes to largeFrames once
// its response is written instead of staying with the connection).
const (
	frameStep      = 1 << 20
	keptFrameBytes = 1 << 20
)

// largeFrames keeps the buffers of requests larger than keptFrameBytes
// between requests, for any connection, by the power of two at or below
// their capacity: a producer sending megabyte requests would otherwise
// have each one's buffer allocated, faulted in and copied as it grows,
// and collected. A sync.Pool gives its buffers up to the collector, so
// idle connections hold none of them.
var largeFrames framePool

// keepFrame returns the buffer a connection keeps for its next request:
// frame itself up to keptFrameBytes; a larger one goes to largeFrames.
func keepFrame(frame []byte) []byte {
	if cap(frame) <= keptFrameBytes {
		return frame
	}
	largeFrames.put(frame)
	return nil
}

// framePool is a pool of frame buffers by the power of two of their
// capacity.
type framePool struct {
	classes [32]sync.Pool // of *[]byte
}

// get returns a buffer of capacity at least n, or nil if none is kept.
func (p *framePool) get(n int) []byte {
	k := bits.Len(uint(n - 1)) // 1<<k >= n
	if k >= len(p.classes) {
		return nil
	}
	if b, ok := p.classes[k].Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return nil
}

// put keeps buf for a later request of at most its capacity.
func (p *framePool) put(buf []byte) {
	k := bits.Len(uint(cap(buf))) - 1 // 1<<k <= cap(buf)
	if k < 0 || k >= len(p.classes) {
		return
	}
	buf = buf[:0]
	p.classes[k].Put(&buf)
}

// header is a request header (v1, or v2 with tagged fields).
type header struct {
	key, version int16
	correlation  int32
	clientID     string
	body         []byte
}

// parseHeader splits a request frame into its header and body. The body
// starts after the client id, and after the header's tagged fields when
// flexible is true.
func parseHeader(frame []byte) (header, error) {
	var h header
	if len(frame) < 10 {
		return h, fmt.Errorf("%w: %d bytes cannot hold a request header", ErrBadFrame, len(frame))
	}
	h.key = int16(binary.BigEndian.Uint16(frame))
	h.version = int16(binary.BigEndian.Uint16(frame[2:]))
	h.correlation = int32(binary.BigEndian.Uint32(frame[4:]))
	n := int16(binary.BigEndian.Uint16(frame[8:]))
	rest := frame[10:]
	if n >= 0 {
		if int(n) > len(rest) {
			return h, fmt.Errorf("%w: client id of %d bytes in %d", ErrBadFrame, n, len(rest))
		}
		h.clientID, rest = string(rest[:n]), rest[n:]
	} else if n != -1 {
		return h, fmt.Errorf("%w: client id length %d", ErrBadFrame, n)
	}
	h.body = rest
	return h, nil
}

// skipTags skips a tagged-fields section (KIP-482) at the start of b.
func skipTags(b []byte) ([]byte, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, fmt.Errorf("%w: tagged fields count", ErrBadFrame)
	}
	b = b[n:]
	for range count {
		if _, n = binary.Uvarint(b); n <= 0 {
			return nil, fmt.Errorf("%w: tag", ErrBadFrame)
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || size > uint64(len(b)-n) {
			return nil, fmt.Errorf("%w: tagged field size", ErrBadFrame)
		}
		b = b[n+int(size):]
	}
	return b, nil
}

// handle answers one request frame: the response frame to write, in
// chunks (a Fetch's records are file slices, which the writer releases),
// nil for none (acks=0), or an error to close the connection for.
func (s *Server) handle(ctx context.Context, frame []byte) ([]chunk, error) {
	h, err := parseHeader(frame)
	if err != nil {
		return nil, err
	}
	api, ok := apis[h.key]
	if !ok || !s.served(h.key) {
		return nil, fmt.Errorf("%w: API key %d is not served", ErrBadFrame, h.key)
	}
	if h.key == kmsg.ApiVersions.Int16() && (h.version < api.min || h.version > api.max) {
		// Kafka answers an ApiVersions it does not know the version of at
		// version 0, with the ranges, so that the client can pick.
		resp := s.apiVersions(errUnsupportedVersion, 0)
		resp.SetVersion(0)
		return []chunk{{b: s.frame(h, resp)}}, nil
	}
	if h.version < api.min || h.version > api.max {
		return nil, fmt.Errorf("%w: %s version %d, served %d to %d", ErrBadFrame, kmsg.NameForKey(h.key), h.version, api.min, api.max)
	}
	if st := stateOf(ctx); st != nil {
		st.clientID = h.clientID
		st.clock = requestClock{start: time.Now()}
	}
	if st := connSASL(ctx); st != nil && st.expired(s.now()) && (h.key != kmsg.SASLHandshake.Int16() || !st.mayReauth(s.now())) {
		// Kafka's Processor checks a request for re-authentication
		// first, then for the session's end.
		return nil, fmt.Errorf("%w: %s", ErrSessionExpired, kmsg.NameForKey(h.key))
	}
	if st := connSASL(ctx); st != nil && !st.authenticated && !allowedBeforeAuth(h.key) {
		return nil, fmt.Errorf("%w: %s before SASL authentication", errAuthFailed, kmsg.NameForKey(h.key))
	}
	req := kmsg.RequestForKey(h.key)
	req.SetVersion(h.version)
	body := h.body
	if req.IsFlexible() {
		if body, err = skipTags(body); err != nil {
			return nil, err
		}
	}
	if err := req.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("%w: %s v%d: %v", ErrBadFrame, kmsg.NameForKey(h.key), h.version, err)
	}
	var fix func(kmsg.Response)
	if s.authz != nil {
		var refuse kmsg.Response
		if refuse, fix = s.authorize(ctx, req); refuse != nil {
			if _, none := refuse.(noResponse); none {
				return nil, nil
			}
			if ms := s.throttleRequest(ctx, h.key, req); ms > 0 {
				if tr, ok := refuse.(kmsg.SetThrottleResponse); ok {
					tr.SetThrottle(ms)
				}
			}
			refuse.SetVersion(h.version)
			return []chunk{{b: s.frame(h, refuse)}}, nil
		}
	}
	if refuse, rfix, err := s.route(ctx, req); err != nil {
		return nil, err
	} else if refuse != nil {
		refuse.SetVersion(h.version)
		return []chunk{{b: s.frame(h, refuse)}}, nil
	} else if rfix != nil {
		fix = chainFixes(fix, rfix)
	}
	if fr, ok := req.(*kmsg.FetchRequest); ok {
		return s.fetchWithQuota(ctx, h, fr, fix)
	}
	if sf, ok := req.(*kmsg.ShareFetchRequest); ok {
		resp, slices, err := s.shareFetch(ctx, sf)
		if err != nil {
			return nil, err
		}
		if fix != nil {
			fix(resp) // appends the refused topics, after those with record slices
		}
		resp.ThrottleMillis = max(resp.ThrottleMillis, s.throttleRequest(ctx, h.key, req))
		return encodeShareFetch(h.correlation, resp, slices), nil
	}
	resp, err := api.fn(s, ctx, req)
	if err != nil {
		return nil, err
	}
	var ms int32
	if h.key == kmsg.Produce.Int16() {
		// Kafka records a Produce's request size (its body after the
		// header), acks=0 too.
		ms = s.throttle(ctx, log.QuotaProducerByteRate, float64(len(body)))
	}
	ms = max(ms, s.throttleRequest(ctx, h.key, req))
	if tr, ok := resp.(kmsg.SetThrottleResponse); ok && resp != nil && ms > 0 {
		tr.SetThrottle(ms)
	}
	if resp == nil {
		return nil, nil
	}
	if fix != nil {
		fix(resp)
	}
	resp.SetVersion(h.version)
	return []chunk{{b: s.frame(h, resp)}}, nil
}

// frame encodes a response with its header (v0 for ApiVersions and
// non-flexible responses, v1 with an empty tagged-fields section
// otherwise) and size.
func (s *Server) frame(h header, resp kmsg.Response) []byte {
	out := make([]byte, 8, 256)
	binary.BigEndian.PutUint32(out[4:], uint32(h.correlation))
	if resp.IsFlexible() && h.key != kmsg.ApiVersions.Int16() {
		out = append(out, 0)
	}
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out
}

// connState is what a connection's requests share.
type connState struct {
	clientID   string         // of the request being handled
	clientHost string         // "/" and the client's IP address, as Kafka writes it
	sasl       *saslState     // nil when SASL is off
	principal  string         // "User:…" as the authorizer and quotas see it: set by the TLS handshake and SASL
	closeAfter bool           // close the connection once the response is written
	muteUntil  time.Time      // the end of the quota throttle, waited out once the response is written
	clock      requestClock   // the request_percentage time of the request being handled
	authFailed bool           // the response answers a failed authentication: delay it
	listener   *boundListener // the listener the connection came in on
}

type connKey struct{}

func stateOf(ctx context.Context) *connState {
	st, _ := ctx.Value(connKey{}).(*connState)
	return st
}

// connSASL is the connection's SASL state, nil when SASL is off.
func connSASL(ctx context.Context) *saslState {
	if st := stateOf(ctx); st != nil {
		return st.sasl
	}
	return nil
}

// setCloseAfter closes the connection after the response being made.
func setCloseAfter(ctx context.Context) {
	if st := stateOf(ctx); st != nil {
		st.closeAfter = true
	}
}

// writeChunks writes a response's chunks: bytes through the buffer, a
// file slice straight to the connection once the buffer is flushed
// (sendfile(2) on a TCP socket). Every slice is released, written or not.
func writeChunks(w *bufio.Writer, cw *connWriter, out []chunk) error {
	for i, ch := range out {
		if ch.sl == nil {
			if _, err := w.Write(ch.b); err != nil {
				releaseChunks(out[i:])
				return err
			}
			continue
		}
		err := w.Flush()
		if err == nil {
			err = cw.writeSlice(ch.sl)
		}
		ch.sl.Release()
		if err != nil {
			releaseChunks(out[i+1:])
			return err
		}
	}
	return nil
}

// connWriter writes a connection's responses, each write with a deadline
// of the idle timeout from its start: bytes 64 KiB at a time, a file
// slice at once (Config.IdleTimeout).
type connWriter struct {
	c    net.Conn
	idle time.Duration
}

// writeStep is the most a write of bytes sends under one deadline.
const writeStep = 64 << 10

func (cw *connWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		cw.arm()
		m, err := cw.c.Write(p[n:min(len(p), n+writeStep)])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// writeSlice sends a file slice's records to the connection itself, so
// that a TCP connection gets them with sendfile(2).
func (cw *connWriter) writeSlice(sl *segment.Slice) error {
	cw.arm()
	_, err := sl.WriteTo(cw.c)
	return err
}

func (cw *connWriter) arm() {
	if cw.idle > 0 {
		_ = cw.c.SetWriteDeadline(time.Now().Add(cw.idle))
	}
}

// noDescriptorLimit is the descriptor limit assumed where the system
// reports none.
const noDescriptorLimit = 1 << 20
