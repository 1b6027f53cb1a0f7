// Command kafkaserver serves a kafkalite directory over Kafka's wire
// protocol (package server), so that Kafka's own clients and tools produce
// to it and fetch from it:
//
//	cd examples/kafkaserver && go run . -dir /tmp/kl -listen 127.0.0.1:9092
//	kcat -b 127.0.0.1:9092 -t orders -P <<<'hello'
//
// The server's limits are flags named as Kafka's broker properties
// (-socket.request.max.bytes, -max.connections, -max.connections.per.ip,
// -max.connections.per.ip.overrides, -connections.max.idle.ms,
// -connection.failed.authentication.delay.ms, -fetch.max.bytes,
// -group.share.max.share.sessions, -max.request.partition.size.limit) and
// kafkalite's -max.partitions; each defaults to server.DefaultConfig's.
// -authorizer.class.name org.apache.kafka.metadata.authorizer.StandardAuthorizer
// turns authorization on against the directory's ACLs, with
// -super.users (";"-separated principals) and
// -allow.everyone.if.no.acl.found.
// -adopt-broker-dir serves a Kafka broker's log directory (with -node.id
// its meta.properties names), which log.Open refuses otherwise.
// -override key=value, repeated, sets a broker property of the directory
// (log.ParseConfig's: group.share.record.lock.duration.ms,
// log.segment.bytes, ...); an unknown or invalid one stops the command.
//
// It runs until SIGINT or SIGTERM, then closes the connections and the
// directory cleanly.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/log"
)

func main() {
	opts, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafkaserver:", err)
		os.Exit(2)
	}
	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "kafkaserver:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	dir, listen string
	cfg         server.Config
	dirCfg      log.Config
}

// parseFlags reads the command line into options, the server's
// configuration starting from server.DefaultConfig.
func parseFlags(args []string, out io.Writer) (options, error) {
	o := options{cfg: server.DefaultConfig(), dirCfg: log.DefaultConfig()}
	fs := flag.NewFlagSet("kafkaserver", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.dir, "dir", "", "the kafkalite directory to serve (created if missing)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:9092", "host:port to listen on")
	fs.StringVar(&o.cfg.AdvertisedAddr, "advertised", "", "host:port to give clients (advertised.listeners); default -listen's")
	c := &o.cfg
	requestBytes := int(c.MaxRequestBytes)
	fs.IntVar(&requestBytes, "socket.request.max.bytes", requestBytes, "the largest request a connection may send, in bytes (a larger one closes it)")
	fetchBytes := int(c.FetchMaxBytes)
	fs.IntVar(&fetchBytes, "fetch.max.bytes", fetchBytes, "the most record bytes one Fetch response carries")
	fs.IntVar(&c.MaxConnections, "max.connections", c.MaxConnections, "connections open at once; more wait until one closes (default: 1024, at most a quarter of RLIMIT_NOFILE)")
	fs.IntVar(&c.MaxConnectionsPerIP, "max.connections.per.ip", c.MaxConnectionsPerIP, "connections open at once from one address; more are closed")
	fs.Func("max.connections.per.ip.overrides", "per-address limits replacing -max.connections.per.ip: host:count,host:count", func(v string) error {
		m, err := parseOverrides(v)
		c.MaxConnectionsPerIPOverrides = m
		return err
	})
	idleMS := c.IdleTimeout.Milliseconds()
	fs.Int64Var(&idleMS, "connections.max.idle.ms", idleMS, "close a connection with no request, or whose response makes no progress, for this long; 0 never")
	delayMS := c.FailedAuthenticationDelay.Milliseconds()
	fs.Int64Var(&delayMS, "connection.failed.authentication.delay.ms", delayMS, "delay the answer to a failed SASL authentication and its close by this long")
	fs.IntVar(&c.MaxPartitions, "max.partitions", c.MaxPartitions, "the most partitions clients may make the directory hold (kafkalite's; default: a sixth of RLIMIT_NOFILE)")
	fs.IntVar(&c.MaxShareSessions, "group.share.max.share.sessions", c.MaxShareSessions, "share sessions (KIP-932's ShareFetch sessions, one per share group member) open at once; more are refused")
	fs.StringVar(&c.AuthorizerClassName, "authorizer.class.name", "", "authorization: "+server.StandardAuthorizer+" checks every request against the directory's ACLs; empty, none")
	fs.Func("super.users", "principals allowed everything, separated by ';': User:admin;User:ops", func(v string) error {
		c.SuperUsers = nil
		for _, u := range strings.Split(v, ";") {
			if u = strings.TrimSpace(u); u != "" {
				c.SuperUsers = append(c.SuperUsers, u)
			}
		}
		return nil
	})
	fs.BoolVar(&c.AllowEveryoneIfNoACLFound, "allow.everyone.if.no.acl.found", false, "with an authorizer, a resource no ACL names is open to every principal")
	fs.IntVar(&c.MaxRequestPartitionSizeLimit, "max.request.partition.size.limit", c.MaxRequestPartitionSizeLimit, "the most partitions one DescribeTopicPartitions response lists")
	fs.Func("sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER: require SASL/SCRAM, with the directory's credentials (kafka-configs --entity-type users --add-config 'SCRAM-SHA-256=[password=…]'), or OAUTHBEARER with unsecured JWS tokens (for tests: anyone can make one); default none", func(v string) error {
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); m != server.MechanismScramSHA256 && m != server.MechanismScramSHA512 && m != server.MechanismOAuthBearer {
				return fmt.Errorf("%q: the command serves SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (PLAIN's users are server.Config.Users, from Go)", m)
			}
			c.SASLMechanisms = append(c.SASLMechanisms, strings.TrimSpace(m))
		}
		return nil
	})
	reauthMS := c.ConnectionsMaxReauth.Milliseconds()
	fs.Int64Var(&reauthMS, "connections.max.reauth.ms", reauthMS, "SASL sessions last this long, then the client re-authenticates or its connection is closed at its next request; 0 for ever")
	fs.StringVar(&c.OAuthBearerPrincipalClaimName, "unsecuredValidatorPrincipalClaimName", c.OAuthBearerPrincipalClaimName, "OAUTHBEARER: the token's claim naming the principal")
	fs.StringVar(&c.OAuthBearerScopeClaimName, "unsecuredValidatorScopeClaimName", c.OAuthBearerScopeClaimName, "OAUTHBEARER: the token's claim holding its scope")
	fs.Func("unsecuredValidatorRequiredScope", "OAUTHBEARER: the scope items, separated by spaces, a token must have", func(v string) error {
		c.OAuthBearerRequiredScope = strings.Fields(v)
		return nil
	})
	skewMS := c.OAuthBearerAllowableClockSkew.Milliseconds()
	fs.Int64Var(&skewMS, "unsecuredValidatorAllowableClockSkewMs", skewMS, "OAUTHBEARER: how far a token's exp may lie in the past and its iat in the future")
	fs.BoolVar(&o.dirCfg.AdoptBrokerDirectory, "adopt-broker-dir", false, "serve a Kafka broker's log directory (its meta.properties and whole topics), which is refused otherwise")
	overrides := map[string]string{}
	fs.Func("override", "key=value: a broker property of the directory (log.ParseConfig's names, Kafka's); repeatable", func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("%q is not key=value", v)
		}
		overrides[strings.TrimSpace(k)] = val
		return nil
	})
	fs.IntVar(&c.Brokers, "brokers", c.Brokers, "virtual brokers serving the directory, on -listen's port and the ones after it (ids from -node.id on); each partition led by one of its replicas among them")
	replication := int(c.DefaultReplicationFactor)
	fs.IntVar(&replication, "default.replication.factor", replication, "the replicas of an auto-created topic, and of one created with replication factor -1; at most -brokers")
	nodeID := int(o.dirCfg.NodeID)
	fs.IntVar(&nodeID, "node.id", nodeID, "the node id the directory's meta.properties names (a broker's: its node.id)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if len(overrides) > 0 {
		dirCfg, unused, err := log.ParseConfig(overrides)
		if err != nil {
			return o, fmt.Errorf("-override: %w", err)
		}
		if len(unused) > 0 {
			fmt.Fprintf(out, "kafkaserver: -override: kafkalite does not use %s\n", strings.Join(unused, ", "))
		}
		dirCfg.AdoptBrokerDirectory = o.dirCfg.AdoptBrokerDirectory
		o.dirCfg = dirCfg
	}
	if o.dir == "" {
		return o, errors.New("-dir is required")
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for name, v := range map[string]int{"socket.request.max.bytes": requestBytes, "fetch.max.bytes": fetchBytes} {
		if v <= 0 || v > 1<<31-1 {
			return o, fmt.Errorf("-%s %d: must be between 1 and %d", name, v, 1<<31-1)
		}
	}
	if nodeID < 0 || nodeID > 1<<31-1 {
		return o, fmt.Errorf("-node.id %d: must be between 0 and %d", nodeID, 1<<31-1)
	}
	if _, set := overrides["node.id"]; !set || flagSet(fs, "node.id") {
		o.dirCfg.NodeID = int32(nodeID)
	}
	if replication < 1 || replication > c.Brokers {
		return o, fmt.Errorf("-default.replication.factor %d: must be between 1 and -brokers (%d)", replication, c.Brokers)
	}
	c.DefaultReplicationFactor = int16(replication)
	c.MaxRequestBytes, c.FetchMaxBytes = int32(requestBytes), int32(fetchBytes)
	c.IdleTimeout = time.Duration(idleMS) * time.Millisecond
	c.FailedAuthenticationDelay = time.Duration(delayMS) * time.Millisecond
	c.ConnectionsMaxReauth = time.Duration(reauthMS) * time.Millisecond
	c.OAuthBearerAllowableClockSkew = time.Duration(skewMS) * time.Millisecond
	return o, nil
}

// flagSet reports whether the command line set the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parseOverrides reads max.connections.per.ip.overrides: host:count pairs
// separated by commas (a host may be an IPv6 address in brackets).
func parseOverrides(v string) (map[string]int, error) {
	out := map[string]int{}
	for _, pair := range strings.Split(v, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		i := strings.LastIndexByte(pair, ':')
		if i <= 0 {
			return nil, fmt.Errorf("%q is not host:count", pair)
		}
		n, err := strconv.Atoi(pair[i+1:])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: the count must be a number 0 or above", pair)
		}
		out[strings.Trim(pair[:i], "[]")] = n
	}
	return out, nil
}

func run(o options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d, err := log.Open(ctx, o.dir, o.dirCfg)
	if err != nil {
		return err
	}
	s, err := server.New(d, o.cfg)
	if err != nil {
		return errors.Join(err, d.Close())
	}
	lns, err := listenBrokers(o.listen, len(s.Brokers()))
	if err != nil {
		return errors.Join(err, s.Close(), d.Close())
	}
	served := make(chan error, len(lns))
	for i, id := range s.Brokers() {
		fmt.Printf("kafkaserver: serving %s as broker %d on %s\n", o.dir, id, lns[i].Addr())
		go func() { served <- s.ServeBroker(ctx, id, lns[i]) }()
	}
	err = <-served // the first broker to end ends the server
	var errs []error
	if !errors.Is(err, context.Canceled) {
		errs = append(errs, err)
	}
	errs = append(errs, s.Close())
	for range len(lns) - 1 {
		if err := <-served; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, server.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(append(errs, d.Close())...)
}

// listenBrokers listens for n brokers: on addr, and on the n-1 ports
// after its port (each a port of its own when it is 0).
func listenBrokers(addr string, n int) ([]net.Listener, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return nil, fmt.Errorf("-listen %q: %w", addr, err)
	}
	var lns []net.Listener
	for i := range n {
		a := net.JoinHostPort(host, "0")
		if port != 0 {
			a = net.JoinHostPort(host, strconv.Itoa(port+i))
		}
		ln, err := net.Listen("tcp", a)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, err
		}
		lns = append(lns, ln)
	}
	return lns, nil
}
