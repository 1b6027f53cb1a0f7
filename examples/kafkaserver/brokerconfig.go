package main

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/log"
)

// options are what the command serves, from its properties and flags.
type options struct {
	dir string
	// listen is the address of the one listener the single-listener
	// fields of cfg describe; empty when cfg.Listeners are served.
	listen string
	cfg    server.Config
	dirCfg log.Config
	// scram are the --add-scram credentials, stored before serving.
	scram []log.ScramUpsertion
	// unused are the properties given that nothing reads, sorted.
	unused []string
	// control is -control's address: the HTTP API stopping and starting
	// virtual brokers; empty for none.
	control string
}

// sources are the command line's arguments that are not properties.
type sources struct {
	file               string // the properties file, if any
	listen, advertised string // -listen, -advertised
	adopt              bool   // -adopt-broker-dir
	control            string // -control
	scram              []log.ScramUpsertion
}

// listenAddr is a listener's name and the address it binds.
type listenAddr struct{ name, addr string }

// listenAddrs are the addresses to bind, one a listener, in the order
// of the server's listeners.
func (o options) listenAddrs() []listenAddr {
	if len(o.cfg.Listeners) == 0 {
		p := server.Plaintext
		switch {
		case o.cfg.TLS != nil && len(o.cfg.SASLMechanisms) > 0:
			p = server.SASLSSL
		case o.cfg.TLS != nil:
			p = server.SSL
		case len(o.cfg.SASLMechanisms) > 0:
			p = server.SASLPlaintext
		}
		return []listenAddr{{string(p), o.listen}}
	}
	out := make([]listenAddr, len(o.cfg.Listeners))
	for i, l := range o.cfg.Listeners {
		out[i] = listenAddr{l.Name, l.Addr}
	}
	return out
}

// Kafka's defaults the command applies where kafkalite's library
// defaults differ.
const (
	// kafkaGroupInitialRebalanceDelay is group.initial.rebalance.delay.ms.
	kafkaGroupInitialRebalanceDelay = "3000"
	// kafkaListeners is Kafka's listeners.
	kafkaListeners = "PLAINTEXT://:9092"
	// kafkaSASLMechanisms is Kafka's sasl.enabled.mechanisms, refused.
	kafkaSASLMechanisms = "GSSAPI"
)

// brokerProps reads properties, marking each one it reads.
type brokerProps struct {
	m    map[string]string
	read map[string]bool
}

// get is a property's value, trimmed as Kafka trims it, and whether it
// is set.
func (p *brokerProps) get(name string) (string, bool) {
	p.read[name] = true
	v, ok := p.m[name]
	return strings.TrimSpace(v), ok
}

// listener is get of the listener's own property
// (listener.name.<name>.<property>, the name in lower case, as Kafka's
// ListenerName.configPrefix), else of the property.
func (p *brokerProps) listener(name, prop string) (string, bool) {
	if v, ok := p.get("listener.name." + strings.ToLower(name) + "." + prop); ok {
		return v, true
	}
	return p.get(prop)
}

// integer sets *dst to the property's value when it is set, refusing a
// value outside [lo, hi].
func (p *brokerProps) integer(name string, lo, hi int64, set func(int64)) error {
	v, ok := p.get(name)
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return fmt.Errorf("%s=%s: must be an integer between %d and %d", name, v, lo, hi)
	}
	set(n)
	return nil
}

// configure builds the options from the broker properties and the
// command line's other arguments.
func configure(m map[string]string, src sources) (options, error) {
	p := &brokerProps{m: m, read: map[string]bool{}}
	o := options{cfg: server.DefaultConfig(), scram: src.scram}
	c := &o.cfg
	var errs []error
	ms := func(d *time.Duration) func(int64) { return func(n int64) { *d = time.Duration(n) * time.Millisecond } }
	for _, f := range []struct {
		name   string
		lo, hi int64
		set    func(int64)
	}{
		{"socket.request.max.bytes", 1, 1<<31 - 1, func(n int64) { c.MaxRequestBytes = int32(n) }},
		{"fetch.max.bytes", 1, 1<<31 - 1, func(n int64) { c.FetchMaxBytes = int32(n) }},
		{"max.connections", 1, 1<<31 - 1, func(n int64) { c.MaxConnections = int(n) }},
		{"max.connections.per.ip", 0, 1<<31 - 1, func(n int64) { c.MaxConnectionsPerIP = int(n) }},
		{"connections.max.idle.ms", -1, 1 << 62 / int64(time.Millisecond), ms(&c.IdleTimeout)},
		{"connection.failed.authentication.delay.ms", 0, 1<<31 - 1, ms(&c.FailedAuthenticationDelay)},
		{"connections.max.reauth.ms", 0, 1 << 62 / int64(time.Millisecond), ms(&c.ConnectionsMaxReauth)},
		{"max.partitions", 1, 1<<31 - 1, func(n int64) { c.MaxPartitions = int(n) }},
		{"group.share.max.share.sessions", 1, 1<<31 - 1, func(n int64) { c.MaxShareSessions = int(n) }},
		{"max.request.partition.size.limit", 1, 1<<31 - 1, func(n int64) { c.MaxRequestPartitionSizeLimit = int(n) }},
		{"unsecuredValidatorAllowableClockSkewMs", 0, 1 << 62 / int64(time.Millisecond), ms(&c.OAuthBearerAllowableClockSkew)},
	} {
		errs = append(errs, p.integer(f.name, f.lo, f.hi, f.set))
	}
	if v, ok := p.get("max.connections.per.ip.overrides"); ok && v != "" {
		var err error
		c.MaxConnectionsPerIPOverrides, err = parseOverrides(v)
		errs = append(errs, err)
	}
	if v, ok := p.get("authorizer.class.name"); ok {
		c.AuthorizerClassName = v
	}
	if v, ok := p.get("super.users"); ok {
		for _, u := range strings.Split(v, ";") {
			if u = strings.TrimSpace(u); u != "" {
				c.SuperUsers = append(c.SuperUsers, u)
			}
		}
	}
	if v, ok := p.get("allow.everyone.if.no.acl.found"); ok {
		b, err := strconv.ParseBool(v)
		c.AllowEveryoneIfNoACLFound = b
		errs = append(errs, err)
	}
	if v, ok := p.get("ssl.principal.mapping.rules"); ok {
		c.SSLPrincipalMappingRules = v
	}
	for name, dst := range map[string]*string{"unsecuredValidatorPrincipalClaimName": &c.OAuthBearerPrincipalClaimName,
		"unsecuredValidatorScopeClaimName": &c.OAuthBearerScopeClaimName} {
		if v, ok := p.get(name); ok {
			*dst = v
		}
	}
	if v, ok := p.get("unsecuredValidatorRequiredScope"); ok {
		c.OAuthBearerRequiredScope = strings.Fields(v)
	}
	errs = append(errs, p.integer("brokers", 1, 1024, func(n int64) { c.Brokers = int(n) }))
	errs = append(errs, p.integer("default.replication.factor", 1, int64(max(c.Brokers, 1)), func(n int64) { c.DefaultReplicationFactor = int16(n) }))
	if src.control != "" && c.Brokers < 2 {
		errs = append(errs, fmt.Errorf("-control %s: the control API stops and starts virtual brokers; it needs brokers above 1", src.control))
	}
	o.control = src.control
	if err := errors.Join(errs...); err != nil {
		return o, err
	}
	if err := configureDir(p, &o, src); err != nil {
		return o, err
	}
	c.NumPartitions, c.AutoCreateTopics = int32(o.dirCfg.NumPartitions), true
	if v, ok := p.get("auto.create.topics.enable"); ok {
		c.AutoCreateTopics, _ = strconv.ParseBool(v) // checked by log.ParseConfig
	}
	if err := configureListeners(p, &o, src); err != nil {
		return o, err
	}
	for k := range m {
		if !p.read[k] && !slices.Contains(o.unused, k) {
			o.unused = append(o.unused, k)
		}
	}
	slices.Sort(o.unused)
	return o, nil
}

// configureDir sets the directory and its configuration: log.dirs (or
// log.dir), node.id and every property log.ParseConfig reads; the
// properties it ignores, or does not know, become o.unused.
func configureDir(p *brokerProps, o *options, src sources) error {
	dirs, ok := p.get("log.dirs")
	if !ok {
		dirs, _ = p.get("log.dir")
	}
	p.get("log.dir")
	var names []string
	for _, d := range strings.Split(dirs, ",") {
		if d = strings.TrimSpace(d); d != "" {
			names = append(names, d)
		}
	}
	switch len(names) {
	case 0:
		return errNoDir
	case 1:
		o.dir = names[0]
	default:
		return fmt.Errorf("log.dirs names %d directories (%s): kafkalite serves one", len(names), strings.Join(names, ", "))
	}
	// The rest is the directory's, as log.ParseConfig reads it; a name it
	// does not know is listed, not refused.
	rest := map[string]string{}
	for k, v := range p.m {
		if p.read[k] || strings.HasPrefix(k, "listener.name.") || strings.HasSuffix(k, "sasl.jaas.config") {
			continue
		}
		if _, _, err := log.ParseConfig(map[string]string{k: v}); errors.Is(err, log.ErrUnknownProperty) {
			continue
		}
		rest[k] = v
	}
	if _, ok := rest["group.initial.rebalance.delay.ms"]; !ok {
		rest["group.initial.rebalance.delay.ms"] = kafkaGroupInitialRebalanceDelay
	}
	cfg, unused, err := log.ParseConfig(rest)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(rest)) {
		if _, given := p.m[k]; given && !slices.Contains(unused, k) {
			p.read[k] = true
		}
	}
	// The properties the server reads that the directory ignores.
	for _, k := range []string{"default.replication.factor", "auto.create.topics.enable", "brokers"} {
		p.get(k)
	}
	cfg.AdoptBrokerDirectory = src.adopt
	o.dirCfg = cfg
	return nil
}

// configureListeners sets the listeners: from listeners,
// advertised.listeners and listener.security.protocol.map, or, with
// -listen (or no properties file and no listeners), the one listener of
// -listen, SSL with a keystore and SASL with mechanisms.
func configureListeners(p *brokerProps, o *options, src sources) error {
	c := &o.cfg
	lv, ok := p.get("listeners")
	p.get("advertised.listeners")
	p.get("listener.security.protocol.map")
	p.get("controller.listener.names")
	if src.listen != "" || (!ok && src.file == "") {
		// One listener, its protocol from the settings given.
		o.listen = src.listen
		if o.listen == "" {
			o.listen = "127.0.0.1:9092"
		}
		c.AdvertisedAddr = src.advertised
		if _, ok := p.get("ssl.keystore.location"); ok {
			tc, err := listenerTLS(p, "")
			if err != nil {
				return err
			}
			c.TLS = tc
		} else if _, ok := p.get("ssl.truststore.location"); ok || hasValue(p, "ssl.client.auth") {
			return errors.New("ssl.truststore.location and ssl.client.auth need an SSL listener: ssl.keystore.location")
		}
		if v, ok := p.get("sasl.enabled.mechanisms"); ok && v != "" {
			mechs, err := saslMechanisms(v)
			if err != nil {
				return err
			}
			c.SASLMechanisms = mechs
			return configureJAAS(p, o, "", mechs)
		}
		return nil
	}
	if !ok {
		lv = kafkaListeners
	}
	eps, err := parseEndpoints("listeners", lv)
	if err != nil {
		return err
	}
	adv := map[string]string{}
	if v, ok := p.get("advertised.listeners"); ok && v != "" {
		aeps, err := parseEndpoints("advertised.listeners", v)
		if err != nil {
			return err
		}
		for _, e := range aeps {
			if !slices.ContainsFunc(eps, func(l endpoint) bool { return l.name == e.name }) {
				return fmt.Errorf("advertised.listeners names %s, which listeners does not", e.name)
			}
			adv[e.name] = e.addr
		}
	}
	protos := map[string]server.SecurityProtocol{}
	for _, sp := range []server.SecurityProtocol{server.Plaintext, server.SSL, server.SASLPlaintext, server.SASLSSL} {
		protos[string(sp)] = sp
	}
	if v, ok := p.get("listener.security.protocol.map"); ok && v != "" {
		protos = map[string]server.SecurityProtocol{}
		for _, pair := range strings.Split(v, ",") {
			name, proto, ok := strings.Cut(strings.TrimSpace(pair), ":")
			sp := server.SecurityProtocol(strings.ToUpper(strings.TrimSpace(proto)))
			if !ok || (sp != server.Plaintext && sp != server.SSL && sp != server.SASLPlaintext && sp != server.SASLSSL) {
				return fmt.Errorf("listener.security.protocol.map: %q is not listener:PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", pair)
			}
			protos[strings.ToUpper(strings.TrimSpace(name))] = sp
		}
	}
	controllers := map[string]bool{}
	if v, ok := p.get("controller.listener.names"); ok {
		for _, n := range strings.Split(v, ",") {
			controllers[strings.ToUpper(strings.TrimSpace(n))] = true
		}
	}
	if src.advertised != "" && len(eps) != 1 {
		return fmt.Errorf("-advertised %s: %d listeners; advertised.listeners names each one's", src.advertised, len(eps))
	}
	for _, e := range eps {
		if controllers[e.name] {
			// A controller's listener: there is no quorum to serve.
			o.unused = append(o.unused, "listeners: "+e.name+" (controller.listener.names)")
			continue
		}
		sp, ok := protos[e.name]
		if !ok {
			return fmt.Errorf("listeners: no security protocol defined for listener %s (listener.security.protocol.map)", e.name)
		}
		// Without an advertised address, the listener's own, as Kafka
		// advertises it (port 0: the bound port; no host: the host name).
		l := server.Listener{Name: e.name, SecurityProtocol: sp, Addr: e.addr, AdvertisedAddr: e.addr}
		if a, ok := adv[e.name]; ok {
			l.AdvertisedAddr = a
		}
		if src.advertised != "" {
			l.AdvertisedAddr = src.advertised
		}
		if sp == server.SSL || sp == server.SASLSSL {
			if l.TLS, err = listenerTLS(p, e.name); err != nil {
				return err
			}
		}
		if sp == server.SASLPlaintext || sp == server.SASLSSL {
			v, ok := p.listener(e.name, "sasl.enabled.mechanisms")
			if !ok {
				v = kafkaSASLMechanisms
			}
			if l.SASLMechanisms, err = saslMechanisms(v); err != nil {
				return fmt.Errorf("listener %s: %w", e.name, err)
			}
			if err := configureJAAS(p, o, e.name, l.SASLMechanisms); err != nil {
				return err
			}
		}
		c.Listeners = append(c.Listeners, l)
	}
	if len(c.Listeners) == 0 {
		return errors.New("listeners: no listener to serve (the controller's are not served)")
	}
	return nil
}

// hasValue reports whether the property is set to something.
func hasValue(p *brokerProps, name string) bool {
	v, ok := p.get(name)
	return ok && v != ""
}

// saslMechanisms reads a sasl.enabled.mechanisms list.
func saslMechanisms(v string) ([]string, error) {
	var out []string
	for _, m := range strings.Split(v, ",") {
		switch m = strings.TrimSpace(m); m {
		case server.MechanismPlain, server.MechanismScramSHA256, server.MechanismScramSHA512, server.MechanismOAuthBearer:
			out = append(out, m)
		case "":
		default:
			return nil, fmt.Errorf("sasl.enabled.mechanisms: %q is not served (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)", m)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("sasl.enabled.mechanisms: none")
	}
	return out, nil
}

// endpoint is one of listeners' name://host:port.
type endpoint struct{ name, addr string }

// parseEndpoints reads a listeners (or advertised.listeners) value:
// NAME://host:port, comma-separated, the name upper-cased as Kafka
// normalises it, an IPv6 host in brackets, an empty host every
// interface.
func parseEndpoints(prop, v string) ([]endpoint, error) {
	var out []endpoint
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		name, hostport, ok := strings.Cut(item, "://")
		if !ok || name == "" {
			return nil, fmt.Errorf("%s: %q is not NAME://host:port", prop, item)
		}
		host, port, err := net.SplitHostPort(hostport)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", prop, item, err)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return nil, fmt.Errorf("%s: %q: port %q", prop, item, port)
		}
		name = strings.ToUpper(name)
		if slices.ContainsFunc(out, func(e endpoint) bool { return e.name == name }) {
			return nil, fmt.Errorf("%s: listener %s named twice", prop, name)
		}
		out = append(out, endpoint{name, net.JoinHostPort(host, port)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no listener", prop)
	}
	return out, nil
}
