package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
)

// propertyFlags are the flags named as the broker property they set,
// with their usage.
var propertyFlags = []struct{ name, usage string }{
	{"socket.request.max.bytes", "the largest request a connection may send, in bytes (a larger one closes it); default 104857600"},
	{"fetch.max.bytes", "the most record bytes one Fetch response carries; default 57671680"},
	{"max.connections", "connections open at once; more wait until one closes (default: 1024, at most a quarter of RLIMIT_NOFILE)"},
	{"max.connections.per.ip", "connections open at once from one address; more are closed; default 2147483647"},
	{"max.connections.per.ip.overrides", "per-address limits replacing -max.connections.per.ip: host:count,host:count"},
	{"connections.max.idle.ms", "close a connection with no request, or whose response makes no progress, for this long; 0 never; default 600000"},
	{"connection.failed.authentication.delay.ms", "delay the answer to a failed SASL authentication and its close by this long; default 100"},
	{"max.partitions", "the most partitions clients may make the directory hold (kafkalite's; default: a sixth of RLIMIT_NOFILE)"},
	{"group.share.max.share.sessions", "share sessions (KIP-932's ShareFetch sessions) open at once; more are refused; default 2000"},
	{"authorizer.class.name", "authorization: " + server.StandardAuthorizer + " checks every request against the directory's ACLs; empty, none"},
	{"super.users", "principals allowed everything, separated by ';': User:admin;User:ops"},
	{"max.request.partition.size.limit", "the most partitions one DescribeTopicPartitions response lists; default 2000"},
	{"sasl.enabled.mechanisms", "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER: the SASL listeners' mechanisms (with -listen alone: SASL on it)"},
	{"connections.max.reauth.ms", "SASL sessions last this long, then the client re-authenticates or its connection is closed at its next request; 0 for ever"},
	{"unsecuredValidatorPrincipalClaimName", "OAUTHBEARER: the token's claim naming the principal; default sub"},
	{"unsecuredValidatorScopeClaimName", "OAUTHBEARER: the token's claim holding its scope; default scope"},
	{"unsecuredValidatorRequiredScope", "OAUTHBEARER: the scope items, separated by spaces, a token must have"},
	{"unsecuredValidatorAllowableClockSkewMs", "OAUTHBEARER: how far a token's exp may lie in the past and its iat in the future; default 0"},
	{"ssl.keystore.location", "the SSL listeners' keystore: PEM (a PKCS#8 key and its chain) or PKCS#12 (with -ssl.keystore.password); with -listen alone it makes that listener SSL"},
	{"ssl.keystore.type", "PEM or PKCS12; default: read from the file (JKS is refused)"},
	{"ssl.keystore.password", "the PKCS#12 keystore's password"},
	{"ssl.key.password", "the key's password within a PKCS#12 keystore, when not the keystore's"},
	{"ssl.truststore.location", "the CA certificates client certificates are verified against, PEM or PKCS#12; default the system's"},
	{"ssl.truststore.type", "PEM or PKCS12; default: read from the file"},
	{"ssl.truststore.password", "the PKCS#12 truststore's password"},
	{"ssl.client.auth", "client certificates on the SSL listeners: none (default), requested (verified when sent), required"},
	{"ssl.principal.mapping.rules", "rules mapping a client certificate's distinguished name to its principal: DEFAULT, RULE:pattern/replacement/[LU], comma-separated"},
	{"node.id", "the node id the directory's meta.properties names (a broker's: its node.id)"},
	{"num.partitions", "the partitions of an auto-created topic; default 1"},
	{"brokers", "kafkalite's: virtual brokers serving the directory, on the listener's port and the ones after it (ids from node.id on), each partition led by one of its replicas among them; default 1"},
	{"default.replication.factor", "the replicas of an auto-created topic, and of one created with replication factor -1; at most -brokers; default 1"},
}

// parseFlags reads the command line, [server.properties] then flags,
// into options: the file's properties, overridden by -override
// key=value (--override, as Kafka's), in turn overridden by the flags
// named as a property.
func parseFlags(args []string, out io.Writer) (options, error) {
	var src sources
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		src.file, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("kafkaserver", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintln(out, "usage: kafkaserver [server.properties] [flags] [--override key=value ...]")
		fmt.Fprintln(out, "       kafkaserver control host:port brokers|stop BROKER|start BROKER|leader TOPIC PARTITION BROKER")
		fs.PrintDefaults()
	}
	flags := map[string]string{}
	fs.Func("dir", "the kafkalite directory to serve (created if missing); log.dirs", func(v string) error {
		flags["log.dirs"] = v
		return nil
	})
	fs.StringVar(&src.listen, "listen", "", "host:port of the one listener to serve in place of the properties' listeners; default 127.0.0.1:9092 without a properties file")
	fs.StringVar(&src.advertised, "advertised", "", "host:port to give clients (advertised.listeners) when there is one listener; default its address")
	for _, f := range propertyFlags {
		fs.Func(f.name, f.usage, func(v string) error {
			flags[f.name] = v
			return nil
		})
	}
	fs.BoolFunc("allow.everyone.if.no.acl.found", "with an authorizer, a resource no ACL names is open to every principal", func(v string) error {
		flags["allow.everyone.if.no.acl.found"] = v
		return nil
	})
	fs.StringVar(&src.control, "control", "", "kafkalite's: host:port of an HTTP API (no authentication: bind it to loopback) that stops and starts virtual brokers (-brokers) and moves partition leaders; \"kafkaserver control host:port\" is its client")
	fs.BoolVar(&src.adopt, "adopt-broker-dir", false, "serve a Kafka broker's log directory (its meta.properties and whole topics), which is refused otherwise")
	overrides := map[string]string{}
	fs.Func("override", "key=value: a broker property, winning over the file (a flag of the same name wins over it); repeatable", func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("%q is not key=value", v)
		}
		overrides[strings.TrimSpace(k)] = val
		return nil
	})
	addScram := func(v string) error {
		u, err := parseAddScram(v)
		src.scram = append(src.scram, u...)
		return err
	}
	fs.Func("add-scram", "a SCRAM credential to store in the directory, as kafka-storage format's: 'SCRAM-SHA-256=[name=alice,password=alice-secret]'; repeatable", addScram)
	fs.Func("S", "short for -add-scram", addScram)
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	props := map[string]string{}
	if src.file != "" {
		b, err := os.ReadFile(src.file)
		if err != nil {
			return options{}, err
		}
		if props, _, err = parseProperties(b); err != nil {
			return options{}, fmt.Errorf("%s: %w", src.file, err)
		}
	}
	for k, v := range overrides {
		props[k] = v
	}
	for k, v := range flags {
		props[k] = v
	}
	o, err := configure(props, src)
	if err != nil {
		return o, err
	}
	if len(o.unused) > 0 {
		fmt.Fprintf(out, "kafkaserver: not used: %s\n", strings.Join(o.unused, ", "))
	}
	return o, nil
}

// errNoDir is a command line and properties naming no directory.
var errNoDir = errors.New("no directory to serve: log.dirs (or -dir)")
