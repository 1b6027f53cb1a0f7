package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MechanismOAuthBearer is SASL/OAUTHBEARER (RFC 7628) with unsecured
// JWS tokens, validated as Kafka's OAuthBearerUnsecuredValidatorCallbackHandler
// validates them: for tests and development, as in Kafka, since anyone
// can make such a token.
const MechanismOAuthBearer = "OAUTHBEARER"

// The defaults of the unsecured validator's JAAS options, as Kafka's.
const (
	defaultPrincipalClaimName = "sub"
	defaultScopeClaimName     = "scope"
)

// ErrOAuthBearerMalformed is why an OAUTHBEARER client's initial
// response was refused: it is not RFC 7628's n,[a=authzid],^Aauth=Bearer
// <token>^A[key=value^A]...^A as Kafka's OAuthBearerClientInitialResponse
// reads it. The client gets SASL_AUTHENTICATION_FAILED.
var ErrOAuthBearerMalformed = errors.New("server: invalid OAUTHBEARER client first message")

// errOAuthBearerClose is an initial response or a token Kafka's broker
// drops the connection for without an answer (a scheme other than
// Bearer, a JWS header without an algorithm: Kafka fails on them with an
// unchecked exception).
var errOAuthBearerClose = errors.New("server: OAUTHBEARER exchange Kafka's broker closes unanswered")

// oauthInitial is an OAUTHBEARER client's initial response.
type oauthInitial struct {
	authzid    string // as sent (=2C and =3D not decoded, as Kafka keeps it)
	token      string
	extensions map[string]string
}

// parseOAuthInitial reads an OAUTHBEARER initial response as Kafka's
// OAuthBearerClientInitialResponse does: errors wrap
// ErrOAuthBearerMalformed, or errOAuthBearerClose for a scheme other
// than Bearer.
func parseOAuthInitial(b []byte) (oauthInitial, error) {
	var out oauthInitial
	bad := func(why string) (oauthInitial, error) {
		return oauthInitial{}, fmt.Errorf("%w%s", ErrOAuthBearerMalformed, why)
	}
	rest, ok := bytes.CutPrefix(b, []byte("n,"))
	if !ok {
		return bad("")
	}
	if a, ok := bytes.CutPrefix(rest, []byte("a=")); ok {
		i := bytes.IndexByte(a, ',')
		if i <= 0 || !saslName(a[:i]) {
			return bad("")
		}
		out.authzid, rest = string(a[:i]), a[i+1:]
	} else if rest, ok = bytes.CutPrefix(rest, []byte(",")); !ok {
		return bad("")
	}
	if rest, ok = bytes.CutPrefix(rest, []byte{1}); !ok {
		return bad("")
	}
	if rest, ok = bytes.CutSuffix(rest, []byte{1}); !ok {
		return bad("")
	}
	// rest: (key=value^A)*, key [A-Za-z]+, value [\x21-\x7E \t\r\n]+;
	// a key given twice keeps its last value.
	kv := map[string]string{}
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, 1)
		if i < 0 {
			return bad("")
		}
		k, v, ok := bytes.Cut(rest[:i], []byte("="))
		if !ok || len(k) == 0 || len(v) == 0 || !bytesAll(k, isAlpha) || !bytesAll(v, isExtensionValue) {
			return bad("")
		}
		kv[string(k)] = string(v)
		rest = rest[i+1:]
	}
	auth, ok := kv["auth"]
	if !ok {
		return bad(": 'auth' not specified")
	}
	delete(kv, "auth")
	out.extensions = kv
	// auth: scheme (\w+), spaces, token ([-_~+/.a-zA-Z0-9]+ then =*).
	i := strings.IndexByte(auth, ' ')
	if i <= 0 || !bytesAll([]byte(auth[:i]), isWord) {
		return bad(": invalid 'auth' format")
	}
	scheme, tok := auth[:i], strings.TrimLeft(auth[i:], " ")
	body := strings.TrimRight(tok, "=")
	if body == "" || !bytesAll([]byte(body), isTokenByte) {
		return bad(": invalid 'auth' format")
	}
	if !strings.EqualFold(scheme, "bearer") {
		return oauthInitial{}, fmt.Errorf("%w: scheme %q", errOAuthBearerClose, scheme)
	}
	out.token = tok
	return out, nil
}

// saslName reports whether b is RFC 7628's saslname as Kafka matches it:
// ASCII other than NUL, '=' and ',', or the escapes =2C and =3D.
func saslName(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '=':
			if i+2 >= len(b) || (string(b[i+1:i+3]) != "2C" && string(b[i+1:i+3]) != "3D") {
				return false
			}
			i += 2
		case c == 0 || c == ',' || c > 0x7f:
			return false
		}
	}
	return true
}

func bytesAll(b []byte, f func(byte) bool) bool {
	for _, c := range b {
		if !f(c) {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isWord(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '_' }

func isTokenByte(c byte) bool { return isWord(c) || strings.IndexByte("-~+/.", c) >= 0 }

func isExtensionValue(c byte) bool {
	return c >= 0x21 && c <= 0x7e || c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

// isScopeByte reports whether c may be in a scope item (RFC 6749's
// scope-token: %x21 / %x23-5B / %x5D-7E).
func isScopeByte(c byte) bool { return c == 0x21 || c >= 0x23 && c <= 0x5b || c >= 0x5d && c <= 0x7e }

// unsecuredValidator is Kafka's OAuthBearerUnsecuredValidatorCallbackHandler
// with its JAAS options.
type unsecuredValidator struct {
	principalClaim, scopeClaim string
	requiredScope              []string
	clockSkew                  time.Duration
}

// newUnsecuredValidator checks the options as Kafka does (blank claim
// names mean the defaults, scope items RFC 6749's, the skew not negative
// and an int of milliseconds).
func newUnsecuredValidator(cfg Config) (unsecuredValidator, error) {
	v := unsecuredValidator{principalClaim: strings.TrimSpace(cfg.OAuthBearerPrincipalClaimName),
		scopeClaim: strings.TrimSpace(cfg.OAuthBearerScopeClaimName), clockSkew: cfg.OAuthBearerAllowableClockSkew}
	if v.principalClaim == "" {
		v.principalClaim = defaultPrincipalClaimName
	}
	if v.scopeClaim == "" {
		v.scopeClaim = defaultScopeClaimName
	}
	for _, s := range cfg.OAuthBearerRequiredScope {
		for item := range strings.SplitSeq(s, " ") {
			if item == "" {
				continue
			}
			if !bytesAll([]byte(item), isScopeByte) {
				return v, fmt.Errorf("server: OAuthBearerRequiredScope: invalid scope value: %s", item)
			}
			v.requiredScope = append(v.requiredScope, item)
		}
	}
	if v.clockSkew < 0 || v.clockSkew.Milliseconds() > math.MaxInt32 {
		return v, fmt.Errorf("server: OAuthBearerAllowableClockSkew %v must be between 0 and %d ms", v.clockSkew, math.MaxInt32)
	}
	return v, nil
}

// oauthToken is a validated unsecured JWS.
type oauthToken struct {
	principal  string
	lifetimeMs int64 // exp, in ms since the epoch
}

// oauthRefusal is a token the validator refused: the client gets the
// error JSON as a challenge (Kafka's OAuthBearerSaslServer), and
// SASL_AUTHENTICATION_FAILED with the same text once it acknowledges it.
type oauthRefusal struct {
	status string // invalid_token or insufficient_scope
	scope  string // the required scope, as Java prints a list, when insufficient
	reason string // for the log only, as Kafka keeps it from the client
}

func (r *oauthRefusal) Error() string { return r.reason }

// json is the challenge Kafka sends for the refusal.
func (r *oauthRefusal) json() string {
	out := fmt.Sprintf(`{"status":"%s"`, r.status)
	if r.scope != "" {
		out += fmt.Sprintf(`, "scope":"%s"`, r.scope)
	}
	return out + "}"
}

func invalidToken(format string, args ...any) *oauthRefusal {
	return &oauthRefusal{status: "invalid_token", reason: fmt.Sprintf(format, args...)}
}

// claim is a JWS header or claims value as Kafka's OAuthBearerUnsecuredJws
// converts it from JSON: a number (json.Number), a list of strings (an
// array, each element as text), or else a string (a JSON object's text
// is empty, true's "true", null's "null").
type claim any

// validate checks token as Kafka's unsecured validator does, at now: a
// refusal (*oauthRefusal) for an invalid token, errOAuthBearerClose for
// one Kafka's broker drops the connection for.
func (v unsecuredValidator) validate(token string, now time.Time) (oauthToken, error) {
	if strings.Contains(token, "..") {
		return oauthToken{}, invalidToken("Malformed compact serialization contains '..'")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return oauthToken{}, invalidToken("Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values")
	}
	header, err := jwsMap(parts[0])
	if err != nil {
		return oauthToken{}, err
	}
	claims, err := jwsMap(parts[1])
	if err != nil {
		return oauthToken{}, err
	}
	alg, ok := header["alg"]
	if !ok {
		return oauthToken{}, fmt.Errorf("%w: JWS header must have an Algorithm value", errOAuthBearerClose)
	}
	if s, ok := alg.(string); !ok || s != "none" {
		return oauthToken{}, invalidToken("Unsecured JWS must have 'none' for an algorithm")
	}
	if parts[2] != "" {
		return oauthToken{}, invalidToken("Unsecured JWS must not contain a digital signature")
	}
	scope, err := tokenScope(claims, v.scopeClaim)
	if err != nil {
		return oauthToken{}, err
	}
	exp, err := numberClaim(claims, "exp")
	if err != nil {
		return oauthToken{}, err
	}
	if exp == nil {
		return oauthToken{}, invalidToken("No expiration time in JWT")
	}
	var principal string
	switch c := claims[v.principalClaim].(type) {
	case string:
		principal = c
	case nil:
	default:
		return oauthToken{}, invalidToken("The '%s' claim was not of type String", v.principalClaim)
	}
	if strings.TrimSpace(principal) == "" {
		return oauthToken{}, invalidToken("No principal name in JWT claim: %s", v.principalClaim)
	}
	iat, err := numberClaim(claims, "iat")
	if err != nil {
		return oauthToken{}, err
	}
	nowMs, skewMs := float64(now.UnixMilli()), float64(v.clockSkew.Milliseconds())
	if iat != nil && 1000**iat > nowMs+skewMs {
		return oauthToken{}, invalidToken("The Issued At value (%f seconds) was after the indicated time (%d ms) plus allowable clock skew (%d ms)",
			*iat, now.UnixMilli(), v.clockSkew.Milliseconds())
	}
	if nowMs-skewMs >= 1000**exp {
		return oauthToken{}, invalidToken("The indicated time (%d ms) minus allowable clock skew (%d ms) was on or after the Expiration Time value (%f seconds)",
			now.UnixMilli(), v.clockSkew.Milliseconds(), *exp)
	}
	if iat != nil && *exp <= *iat {
		return oauthToken{}, invalidToken("The Expiration Time time (%f seconds) was not after the Issued At time (%f seconds)", *exp, *iat)
	}
	for _, want := range v.requiredScope {
		if !slices.Contains(scope, want) {
			return oauthToken{}, &oauthRefusal{status: "insufficient_scope", scope: "[" + strings.Join(v.requiredScope, ", ") + "]",
				reason: fmt.Sprintf("The provided scope (%v) was missing a required scope (%s)", scope, want)}
		}
	}
	return oauthToken{principal: principal, lifetimeMs: int64(math.Round(*exp * 1000))}, nil
}

// jwsMap decodes a JWS part: base64url (padded or not), then the first
// JSON value in it; anything but an object is an empty map, as Jackson's
// tree gives no fields for it.
func jwsMap(part string) (map[string]claim, error) {
	enc := base64.RawURLEncoding
	if strings.HasSuffix(part, "=") {
		enc = base64.URLEncoding
	}
	b, err := enc.DecodeString(part)
	if err != nil {
		return nil, invalidToken("malformed Base64 URL encoded value")
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]claim{}, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, invalidToken("malformed JSON")
	}
	obj, _ := v.(map[string]any)
	out := make(map[string]claim, len(obj))
	for k, x := range obj {
		out[k] = convertClaim(x)
	}
	return out, nil
}

func convertClaim(x any) claim {
	switch x := x.(type) {
	case json.Number:
		return x
	case []any:
		list := make([]string, 0, len(x))
		for _, e := range x {
			list = append(list, claimText(e))
		}
		return list
	default:
		return claimText(x)
	}
}

// claimText is a JSON value's text as Jackson's asText gives it.
func claimText(x any) string {
	switch x := x.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "null"
	default: // objects and arrays
		return ""
	}
}

// numberClaim is a numeric claim, nil when absent.
func numberClaim(claims map[string]claim, name string) (*float64, error) {
	c, ok := claims[name]
	if !ok {
		return nil, nil
	}
	n, ok := c.(json.Number)
	if !ok {
		return nil, invalidToken("The '%s' claim was not of type Number", name)
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, invalidToken("The '%s' claim was not of type Number", name)
	}
	return &f, nil
}

// tokenScope is the token's scope: a string claim is one item (trimmed),
// a list its non-blank items.
func tokenScope(claims map[string]claim, name string) ([]string, error) {
	switch c := claims[name].(type) {
	case nil:
		return nil, nil
	case string:
		if s := strings.TrimSpace(c); s != "" {
			return []string{s}, nil
		}
		return nil, nil
	case []string:
		var out []string
		for _, s := range c {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	default:
		return nil, invalidToken("The '%s' claim was not of type List", name)
	}
}
