package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/log"
)

// The login modules of Kafka's SASL mechanisms.
const (
	plainLoginModule       = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramLoginModule       = "org.apache.kafka.common.security.scram.ScramLoginModule"
	oauthBearerLoginModule = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
)

// configureJAAS reads the JAAS settings of a SASL listener's mechanisms
// as Kafka's broker reads them (JaasContext.loadServerContext):
// listener.name.<name>.<mechanism>.sasl.jaas.config, else
// <mechanism>.sasl.jaas.config (an unprefixed sasl.jaas.config is
// ignored, as Kafka ignores it). PLAIN's users are PlainLoginModule's
// user_<name>="password" options, and PLAIN needs them; OAUTHBEARER's
// unsecuredValidator* options configure its validator; SCRAM's options
// (the broker's own username and password) are not used: SCRAM's users
// are the directory's credentials. name "" is the one listener of -listen.
func configureJAAS(p *brokerProps, o *options, name string, mechanisms []string) error {
	where := "the listener"
	if name != "" {
		where = "listener " + name
	}
	for _, m := range mechanisms {
		prop := strings.ToLower(m) + ".sasl.jaas.config"
		var v string
		var ok bool
		if name == "" {
			v, ok = p.get(prop)
		} else {
			v, ok = p.listener(name, prop)
		}
		want := map[string]string{server.MechanismPlain: plainLoginModule, server.MechanismScramSHA256: scramLoginModule,
			server.MechanismScramSHA512: scramLoginModule, server.MechanismOAuthBearer: oauthBearerLoginModule}[m]
		if !ok {
			if m == server.MechanismPlain {
				return fmt.Errorf("%s: PLAIN needs its users: listener.name.%s.plain.sasl.jaas.config=%s required user_alice=\"alice-secret\";",
					where, strings.ToLower(name), plainLoginModule)
			}
			continue
		}
		module, opts, err := parseJAAS(v)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", where, prop, err)
		}
		if module != want {
			return fmt.Errorf("%s: %s: login module %s, not %s's %s", where, prop, module, m, want)
		}
		switch m {
		case server.MechanismPlain:
			for k, pw := range opts {
				user, ok := strings.CutPrefix(k, "user_")
				if !ok {
					continue // username and password: the broker's own
				}
				if prev, ok := o.cfg.PlainUsers[user]; ok && prev != pw {
					return fmt.Errorf("%s: %s: user %s has another password on another listener; kafkalite's PLAIN users are one set", where, prop, user)
				}
				if o.cfg.PlainUsers == nil {
					o.cfg.PlainUsers = map[string]string{}
				}
				o.cfg.PlainUsers[user] = pw
			}
			if len(o.cfg.PlainUsers) == 0 {
				return fmt.Errorf("%s: %s: no user_<name>=\"password\" option", where, prop)
			}
		case server.MechanismOAuthBearer:
			if err := oauthOptions(&o.cfg, opts); err != nil {
				return fmt.Errorf("%s: %s: %w", where, prop, err)
			}
		}
	}
	return nil
}

// oauthOptions applies OAuthBearerLoginModule's unsecured validator
// options.
func oauthOptions(c *server.Config, opts map[string]string) error {
	if v, ok := opts["unsecuredValidatorPrincipalClaimName"]; ok {
		c.OAuthBearerPrincipalClaimName = v
	}
	if v, ok := opts["unsecuredValidatorScopeClaimName"]; ok {
		c.OAuthBearerScopeClaimName = v
	}
	if v, ok := opts["unsecuredValidatorRequiredScope"]; ok {
		c.OAuthBearerRequiredScope = strings.Fields(v)
	}
	if v, ok := opts["unsecuredValidatorAllowableClockSkewMs"]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return fmt.Errorf("unsecuredValidatorAllowableClockSkewMs=%s: not a number of milliseconds", v)
		}
		c.OAuthBearerAllowableClockSkew = time.Duration(n) * time.Millisecond
	}
	return nil
}

// errJAAS is a JAAS setting that is not one login module entry:
// "<class> required|requisite|sufficient|optional key=value ... ;".
var errJAAS = errors.New(`not a JAAS entry: <LoginModule> required key="value" ...;`)

// parseJAAS reads a sasl.jaas.config value: one login module, its
// control flag and its options, values quoted ("...", with \" and \\
// escapes) or bare words, ended by ';', as Kafka's JaasConfig reads it.
func parseJAAS(v string) (module string, opts map[string]string, err error) {
	toks, err := jaasTokens(v)
	if err != nil {
		return "", nil, err
	}
	if len(toks) < 3 || toks[len(toks)-1] != ";" {
		return "", nil, errJAAS
	}
	module, flag := toks[0], toks[1]
	switch flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return "", nil, fmt.Errorf("%w: control flag %q", errJAAS, flag)
	}
	opts = map[string]string{}
	rest := toks[2 : len(toks)-1]
	for len(rest) > 0 {
		if len(rest) < 3 || rest[1] != "=" || rest[0] == ";" {
			if rest[0] == ";" {
				// Kafka's dynamic JAAS setting holds one login module.
				return "", nil, fmt.Errorf("%w: more than one login module", errJAAS)
			}
			return "", nil, fmt.Errorf("%w: option %q", errJAAS, rest[0])
		}
		opts[rest[0]], rest = rest[2], rest[3:]
	}
	return module, opts, nil
}

// jaasTokens splits a JAAS value into words, quoted strings (unquoted),
// "=" and ";".
func jaasTokens(v string) ([]string, error) {
	var toks []string
	for i := 0; i < len(v); {
		switch c := v[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '=' || c == ';':
			toks = append(toks, string(c))
			i++
		case c == '"':
			var sb strings.Builder
			i++
			for ; i < len(v) && v[i] != '"'; i++ {
				if v[i] == '\\' && i+1 < len(v) {
					i++
				}
				sb.WriteByte(v[i])
			}
			if i == len(v) {
				return nil, fmt.Errorf("%w: unterminated quote", errJAAS)
			}
			i++
			toks = append(toks, sb.String())
		default:
			j := i
			for j < len(v) && !strings.ContainsRune(" \t\n\r\f=;\"", rune(v[j])) {
				j++
			}
			toks = append(toks, v[i:j])
			i = j
		}
	}
	return toks, nil
}

// parseAddScram reads kafka-storage format's --add-scram value:
// MECHANISM=[name=alice,password=alice-secret] (values may be quoted,
// iterations=N optional, 4096 by default), as credentials to store.
func parseAddScram(v string) ([]log.ScramUpsertion, error) {
	mech, rest, ok := strings.Cut(v, "=")
	m, known := log.ParseScramMechanism(strings.TrimSpace(mech))
	rest = strings.TrimSpace(rest)
	if !ok || !strings.HasPrefix(rest, "[") || !strings.HasSuffix(rest, "]") {
		return nil, fmt.Errorf("--add-scram %q: not SCRAM-SHA-256=[name=alice,password=alice-secret]", v)
	}
	if !known {
		return nil, fmt.Errorf("--add-scram %q: the mechanism is SCRAM-SHA-256 or SCRAM-SHA-512", v)
	}
	var name, password string
	iterations := int64(log.ScramMinIterations)
	for _, kv := range strings.Split(rest[1:len(rest)-1], ",") {
		k, val, ok := strings.Cut(kv, "=")
		val = strings.Trim(strings.TrimSpace(val), `"`)
		switch k = strings.TrimSpace(k); {
		case !ok:
			return nil, fmt.Errorf("--add-scram %q: %q is not key=value", v, kv)
		case k == "name":
			name = val
		case k == "password":
			password = val
		case k == "iterations":
			n, err := strconv.ParseInt(val, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("--add-scram %q: iterations %q", v, val)
			}
			iterations = n
		default:
			return nil, fmt.Errorf("--add-scram %q: %s is not read (name, password, iterations)", v, k)
		}
	}
	if name == "" || password == "" {
		return nil, fmt.Errorf("--add-scram %q: needs name and password", v)
	}
	u, err := log.NewScramUpsertion(name, m, password, int32(iterations))
	if err != nil {
		return nil, fmt.Errorf("--add-scram %q: %w", v, err)
	}
	return []log.ScramUpsertion{u}, nil
}
