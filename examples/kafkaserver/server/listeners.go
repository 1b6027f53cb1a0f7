package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kafkalite/kafkalite/log"
)

// SecurityProtocol is a listener's security protocol, named as Kafka's
// SecurityProtocol names it.
type SecurityProtocol string

// The security protocols a listener may have.
const (
	// Plaintext: neither TLS nor SASL.
	Plaintext SecurityProtocol = "PLAINTEXT"
	// SSL: TLS (Listener.TLS), no SASL.
	SSL SecurityProtocol = "SSL"
	// SASLPlaintext: SASL (Listener.SASLMechanisms), no TLS.
	SASLPlaintext SecurityProtocol = "SASL_PLAINTEXT"
	// SASLSSL: SASL over TLS.
	SASLSSL SecurityProtocol = "SASL_SSL"
)

// tls reports whether the protocol's connections are TLS.
func (p SecurityProtocol) tls() bool { return p == SSL || p == SASLSSL }

// sasl reports whether the protocol's connections authenticate with SASL.
func (p SecurityProtocol) sasl() bool { return p == SASLPlaintext || p == SASLSSL }

// ErrUnknownListener is ServeListener's answer for a listener name that
// Config.Listeners does not hold.
var ErrUnknownListener = errors.New("server: no such listener")

// Listener is one of the server's listeners, as Kafka's broker has them
// (its listeners, advertised.listeners and listener.security.protocol.map
// properties, and the listener.name.<name>. prefixed ones): a name, a
// security protocol, the address it binds and the one it gives clients.
// A client is answered, in Metadata, DescribeCluster and
// FindCoordinator, with the advertised address of the listener its
// request came in on, as Kafka answers with the same listener name's.
type Listener struct {
	// Name is the listener name (Kafka's ListenerName: PLAINTEXT,
	// CLIENT, ...); names are unique.
	Name string
	// SecurityProtocol is the listener's protocol.
	SecurityProtocol SecurityProtocol
	// Addr is the host:port to bind (Kafka's listeners): an empty host
	// every interface, port 0 any free port. The server binds nothing
	// itself: its owner binds Addr and hands the net.Listener to
	// ServeListener or ServeListeners, as the kafkaserver command does.
	Addr string
	// AdvertisedAddr is the host:port clients of this listener are told
	// to connect to (advertised.listeners); empty means the bound
	// address; an empty host the machine's host name, as Kafka
	// advertises its canonical host name; port 0 the bound port.
	AdvertisedAddr string
	// TLS is the configuration of an SSL or SASL_SSL listener (see
	// Config.TLS); it must be nil on PLAINTEXT and SASL_PLAINTEXT.
	TLS *tls.Config
	// SASLMechanisms are a SASL listener's mechanisms
	// (listener.name.<name>.sasl.enabled.mechanisms); empty means
	// Config.SASLMechanisms. A PLAINTEXT or SSL listener has none.
	SASLMechanisms []string
}

// boundListener is a listener being served: its configuration and its
// advertised host and port.
type boundListener struct {
	Listener
	host string
	port int32
}

// listenersOf are cfg's listeners, checked: Config.Listeners, or without
// them the one listener Config.AdvertisedAddr, TLS and SASLMechanisms
// describe, named as its protocol.
func listenersOf(cfg Config) ([]Listener, error) {
	lns := cfg.Listeners
	if len(lns) == 0 {
		p := Plaintext
		switch {
		case cfg.TLS != nil && len(cfg.SASLMechanisms) > 0:
			p = SASLSSL
		case cfg.TLS != nil:
			p = SSL
		case len(cfg.SASLMechanisms) > 0:
			p = SASLPlaintext
		}
		lns = []Listener{{Name: string(p), SecurityProtocol: p, AdvertisedAddr: cfg.AdvertisedAddr, TLS: cfg.TLS}}
	}
	out := make([]Listener, 0, len(lns))
	for _, l := range lns {
		switch p := l.SecurityProtocol; {
		case l.Name == "":
			return nil, errors.New("server: a listener without a name")
		case slices.ContainsFunc(out, func(o Listener) bool { return o.Name == l.Name }):
			// As Kafka refuses listeners that repeat a name.
			return nil, fmt.Errorf("server: listener %s is named twice", l.Name)
		case p != Plaintext && p != SSL && p != SASLPlaintext && p != SASLSSL:
			return nil, fmt.Errorf("server: listener %s: security protocol %q (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)", l.Name, p)
		case p.tls() && l.TLS == nil:
			return nil, fmt.Errorf("server: listener %s: %s needs a TLS configuration (a keystore)", l.Name, p)
		case !p.tls() && l.TLS != nil:
			return nil, fmt.Errorf("server: listener %s: %s is not TLS, but has a TLS configuration", l.Name, p)
		case !p.sasl() && len(l.SASLMechanisms) > 0:
			return nil, fmt.Errorf("server: listener %s: %s has no SASL, but has mechanisms %v", l.Name, p, l.SASLMechanisms)
		}
		if l.SecurityProtocol.sasl() && len(l.SASLMechanisms) == 0 {
			l.SASLMechanisms = cfg.SASLMechanisms
			if len(l.SASLMechanisms) == 0 {
				return nil, fmt.Errorf("server: listener %s: %s without SASL mechanisms (sasl.enabled.mechanisms)", l.Name, l.SecurityProtocol)
			}
		}
		for _, m := range l.SASLMechanisms {
			if m != MechanismPlain && m != MechanismScramSHA256 && m != MechanismScramSHA512 && m != MechanismOAuthBearer {
				return nil, fmt.Errorf("server: SASL mechanism %q is not served (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)", m)
			}
		}
		if slices.Equal(l.SASLMechanisms, []string{MechanismPlain}) && len(cfg.Users) == 0 && len(cfg.PlainUsers) == 0 {
			return nil, fmt.Errorf("server: listener %s: SASL PLAIN without users", l.Name)
		}
		out = append(out, l)
	}
	return out, nil
}

// ServeListener serves ln as the listener of Config.Listeners named
// name (ErrUnknownListener for another name), as Serve serves it: with
// that listener's TLS and SASL, and its advertised address given to the
// clients it accepts. A name is served by one net.Listener at a time.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener, name string) error {
	i := slices.IndexFunc(s.listeners, func(l Listener) bool { return l.Name == name })
	if i < 0 {
		ln.Close()
		return fmt.Errorf("%w: %q", ErrUnknownListener, name)
	}
	l := s.listeners[i]
	host, port, err := advertisedOf(l.AdvertisedAddr, ln)
	if err != nil {
		ln.Close()
		return fmt.Errorf("server: listener %s: %w", name, err)
	}
	bl := &boundListener{Listener: l, host: host, port: port}
	bl.Addr = ln.Addr().String()
	return s.serve(ctx, ln, bl)
}

// ServeListeners serves lns[i] as the i-th listener of Config.Listeners
// (with ServeListener), all at once, until ctx ends or Close is called;
// the first to fail stops the others, and its error is returned.
func (s *Server) ServeListeners(ctx context.Context, lns []net.Listener) error {
	if len(lns) != len(s.listeners) {
		for _, ln := range lns {
			ln.Close()
		}
		return fmt.Errorf("server: %d net.Listeners for %d listeners", len(lns), len(s.listeners))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(lns))
	var wg sync.WaitGroup
	for i, ln := range lns {
		wg.Go(func() {
			errs[i] = s.ServeListener(ctx, ln, s.listeners[i].Name)
			cancel()
		})
	}
	wg.Wait()
	for _, err := range errs {
		// The first failure, else ctx's error or ErrServerClosed.
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrServerClosed) {
			return err
		}
	}
	return errors.Join(errs...)
}

// Listeners are the listeners being served: each with Addr the bound
// address and AdvertisedAddr the one its clients are given.
func (s *Server) Listeners() []Listener {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Listener
	for _, l := range s.listeners {
		if bl := s.bound[l.Name]; bl != nil {
			o := bl.Listener
			o.AdvertisedAddr = net.JoinHostPort(bl.host, strconv.Itoa(int(bl.port)))
			out = append(out, o)
		}
	}
	return out
}

// advertisedOf is the host and port a listener bound to ln gives its
// clients, from its advertised address (see Listener.AdvertisedAddr).
func advertisedOf(addr string, ln net.Listener) (string, int32, error) {
	bound := ln.Addr().String()
	if addr == "" {
		addr = bound
	}
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("advertised address %q: %w", addr, err)
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("advertised port %q: %w", p, err)
	}
	if port == 0 {
		if _, bp, err := net.SplitHostPort(bound); err == nil {
			port, _ = strconv.ParseUint(bp, 10, 16)
		}
	}
	if host == "" {
		if host, err = os.Hostname(); err != nil {
			return "", 0, fmt.Errorf("advertised address %q: the host name: %w", addr, err)
		}
	}
	return host, int32(port), nil
}

// broker is this broker's node id and the advertised host and port of
// the listener the request in ctx came in on: the one address lookup of
// Metadata, DescribeCluster and FindCoordinator. A request without a
// connection (in process) gets the first listener served.
func (s *Server) broker(ctx context.Context) (int32, string, int32) {
	if st := stateOf(ctx); st != nil && st.listener != nil {
		return s.brokerOf(ctx), st.listener.host, st.listener.port
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		return s.dir.NodeID(), "", 0
	}
	return s.dir.NodeID(), s.first.host, s.first.port
}

// listenerProperties are the broker properties of the listeners, as
// DescribeConfigs lists them: listeners (the bound addresses),
// advertised.listeners, listener.security.protocol.map and each SASL
// listener's listener.name.<name>.sasl.enabled.mechanisms.
func (s *Server) listenerProperties() []log.ConfigEntry {
	var lns, adv, protos []string
	entry := func(name, typ, v, doc string) log.ConfigEntry {
		return log.ConfigEntry{Name: name, Value: v, Source: log.SourceStaticBroker, Type: typ, ReadOnly: true,
			Synonyms: []log.ConfigSynonym{{Name: name, Value: v, Source: log.SourceStaticBroker}}, Doc: doc}
	}
	var out []log.ConfigEntry
	for _, l := range s.Listeners() {
		lns = append(lns, l.Name+"://"+l.Addr)
		adv = append(adv, l.Name+"://"+l.AdvertisedAddr)
		protos = append(protos, l.Name+":"+string(l.SecurityProtocol))
		if l.SecurityProtocol.sasl() {
			out = append(out, entry("listener.name."+strings.ToLower(l.Name)+".sasl.enabled.mechanisms", "LIST",
				strings.Join(l.SASLMechanisms, ","), "The SASL mechanisms the listener accepts."))
		}
	}
	return append(out,
		entry("listeners", "STRING", strings.Join(lns, ","), "The listeners: name://host:port, as bound."),
		entry("advertised.listeners", "STRING", strings.Join(adv, ","), "The address each listener gives its clients."),
		entry("listener.security.protocol.map", "STRING", strings.Join(protos, ","), "Each listener's security protocol."))
}

// connMechanisms are the SASL mechanisms of the listener the request in
// ctx came in on; none without a connection.
func connMechanisms(ctx context.Context) []string {
	if st := stateOf(ctx); st != nil && st.listener != nil {
		return st.listener.SASLMechanisms
	}
	return nil
}

// boundKey is the key of a listener served under ctx in Server.bound: its
// name, and on a cluster's broker other than the first the broker's id.
func (s *Server) boundKey(ctx context.Context, name string) string {
	if id, ok := ctx.Value(brokerKey{}).(int32); ok && id != s.dir.NodeID() {
		return name + "@" + strconv.Itoa(int(id))
	}
	return name
}
