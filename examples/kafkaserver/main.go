// Command kafkaserver serves a kafkalite directory over Kafka's wire
// protocol (package server), so that Kafka's own clients and tools produce
// to it and fetch from it. It starts as Kafka's broker does, from a broker
// properties file, with --override key=value for any property:
//
//	cd examples/kafkaserver && go run . server.properties --override log.dirs=/tmp/kl
//	kcat -b localhost:9092 -t orders -P <<<'hello'
//
// or from flags alone (-dir and -listen, one listener):
//
//	go run . -dir /tmp/kl -listen 127.0.0.1:9092
//
// The file is read as java.util.Properties reads it. The properties read
// (the rest are listed once at start, and not used):
//
//   - listeners, advertised.listeners, listener.security.protocol.map:
//     PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL listeners at once, each
//     answering clients with its own advertised address (server.Listener);
//     the listeners controller.listener.names names are not served (there
//     is no controller quorum). Without listeners, Kafka's
//     PLAINTEXT://:9092.
//   - sasl.enabled.mechanisms (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512,
//     OAUTHBEARER) and listener.name.<name>.sasl.enabled.mechanisms;
//     PLAIN's users from the JAAS settings
//     (listener.name.<name>.plain.sasl.jaas.config or
//     plain.sasl.jaas.config: PlainLoginModule's user_<name>="password"
//     options), OAUTHBEARER's unsecured validator options from
//     oauthbearer.sasl.jaas.config; SCRAM's users from the directory's
//     credentials, which --add-scram 'SCRAM-SHA-256=[name=alice,password=secret]'
//     (as kafka-storage format's) stores before serving.
//   - ssl.keystore.type (PEM or PKCS12), ssl.keystore.location,
//     ssl.keystore.password, ssl.truststore.type, ssl.truststore.location,
//     ssl.truststore.password, ssl.client.auth, each also under
//     listener.name.<name>.; ssl.principal.mapping.rules.
//   - log.dirs or log.dir (one directory), node.id, num.partitions,
//     default.replication.factor (1), auto.create.topics.enable,
//     offsets.topic.num.partitions, group.initial.rebalance.delay.ms
//     (Kafka's 3000 here), and every property log.ParseConfig reads
//     (log.segment.bytes, log.retention.ms, ...).
//   - authorizer.class.name (org.apache.kafka.metadata.authorizer.StandardAuthorizer),
//     super.users, allow.everyone.if.no.acl.found.
//   - The limits: socket.request.max.bytes, max.connections,
//     max.connections.per.ip, max.connections.per.ip.overrides,
//     connections.max.idle.ms, connections.max.reauth.ms,
//     connection.failed.authentication.delay.ms, fetch.max.bytes,
//     group.share.max.share.sessions, max.request.partition.size.limit,
//     and kafkalite's max.partitions.
//
// Each of those limits and settings is also a flag of the same name
// (-socket.request.max.bytes 1048576). --override wins over the file, as
// Kafka's does, and a flag over both.
// -adopt-broker-dir serves a Kafka broker's log directory (with -node.id
// its meta.properties names), which log.Open refuses otherwise.
//
// -brokers N serves N virtual brokers over the directory; with -control
// host:port it serves an HTTP API (bind it to loopback: it has no
// authentication) that stops and starts them and moves partition
// leaders, and
//
//	kafkaserver control host:port brokers|stop N|start N|leader TOPIC PARTITION N
//
// is its client.
//
// It runs until SIGINT or SIGTERM, then closes the connections and the
// directory cleanly.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/log"
)

func main() {
	if isControl(os.Args[1:]) {
		os.Exit(runControl(os.Args[2:], os.Stdout, os.Stderr))
	}
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

func run(o options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, o, func(line string) { fmt.Println(line) })
}

// serve opens the directory, stores the --add-scram credentials, binds
// the listeners and serves them until ctx ends; ready gets the one line
// saying where, once every listener is bound.
func serve(ctx context.Context, o options, ready func(string)) error {
	d, err := log.Open(ctx, o.dir, o.dirCfg)
	if err != nil {
		return err
	}
	for _, u := range o.scram {
		// One call a credential: a request naming a user twice is refused.
		res, err := d.AlterUserScramCredentials(ctx, nil, []log.ScramUpsertion{u})
		if err == nil && len(res) == 1 {
			err = res[0].Err
		}
		if err != nil {
			return errors.Join(fmt.Errorf("--add-scram %s for %s: %w", u.Mechanism, u.User, err), d.Close())
		}
	}
	s, err := server.New(d, o.cfg)
	if err != nil {
		return errors.Join(err, d.Close())
	}
	defer s.Close()
	addrs := o.listenAddrs()
	if o.cfg.Brokers > 1 {
		return serveBrokers(ctx, o, s, d, addrs, ready)
	}
	lns := make([]net.Listener, 0, len(addrs))
	var where []string
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a.addr)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return errors.Join(fmt.Errorf("listener %s: %w", a.name, err), d.Close())
		}
		lns = append(lns, ln)
		where = append(where, a.name+"://"+ln.Addr().String())
	}
	ready(fmt.Sprintf("kafkaserver: serving %s on %s", o.dir, strings.Join(where, ", ")))
	err = s.ServeListeners(ctx, lns)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, s.Close(), d.Close())
}

// serveBrokers serves a cluster of virtual brokers (-brokers): the one
// listener on its port and the ones after it, a broker on each.
func serveBrokers(ctx context.Context, o options, s *server.Server, d *log.Dir, addrs []listenAddr, ready func(string)) error {
	if len(addrs) != 1 {
		return errors.Join(fmt.Errorf("-brokers %d with %d listeners: a cluster of virtual brokers serves one listener", o.cfg.Brokers, len(addrs)), s.Close(), d.Close())
	}
	ids := s.Brokers()
	lns, err := listenBrokers(addrs[0].addr, len(ids))
	if err != nil {
		return errors.Join(fmt.Errorf("listener %s: %w", addrs[0].name, err), s.Close(), d.Close())
	}
	where := make([]string, len(lns))
	for i, id := range ids {
		where[i] = fmt.Sprintf("broker %d %s://%s", id, addrs[0].name, lns[i].Addr())
	}
	r := newBrokerRunner(ctx, s)
	line := fmt.Sprintf("kafkaserver: serving %s on %s", o.dir, strings.Join(where, ", "))
	stopControl := func() {}
	if o.control != "" {
		cln, err := net.Listen("tcp", o.control)
		if err != nil {
			for _, ln := range lns {
				ln.Close()
			}
			return errors.Join(fmt.Errorf("-control: %w", err), s.Close(), d.Close())
		}
		stopControl = serveControl(ctx, cln, r.controlHandler())
		line += "; control " + cln.Addr().String()
	}
	r.mu.Lock()
	for i, id := range ids {
		r.startLocked(id, lns[i])
	}
	runs := maps.Clone(r.runs)
	r.mu.Unlock()
	for _, id := range ids {
		if err := r.awaitServing(ctx, id, runs[id]); err != nil {
			break // the first broker's end, or ctx's, ends the server below
		}
	}
	ready(line)
	err = r.wait() // a broker ending other than by a stop on command ends the server
	stopControl()
	errs := []error{err, s.Close()}
	errs = append(errs, r.drain()...)
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
		return nil, fmt.Errorf("%q: %w", addr, err)
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
