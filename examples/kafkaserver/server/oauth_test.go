package server

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// unsecuredJWS makes an unsecured JWS (alg none, empty signature) with
// the claims, as JSON text.
func unsecuredJWS(claims string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString([]byte(claims)) + "."
}

func oauthInitialOf(token string) []byte {
	return []byte("n,,\x01auth=Bearer " + token + "\x01\x01")
}

// TestParseOAuthInitial: RFC 7628's initial response as Kafka's
// OAuthBearerClientInitialResponse reads it.
func TestParseOAuthInitial(t *testing.T) {
	in, err := parseOAuthInitial([]byte("n,a=alice,\x01auth=Bearer abc.def.\x01traceId=x y=z\x01auth=Bearer t0k==\x01\x01"))
	require.NoError(t, err)
	require.Equal(t, oauthInitial{authzid: "alice", token: "t0k==", extensions: map[string]string{"traceId": "x y=z"}}, in,
		"the last auth wins, extensions kept")
	in, err = parseOAuthInitial([]byte("n,,\x01auth=bEaReR   a.b.c\x01\x01"))
	require.NoError(t, err)
	require.Equal(t, "a.b.c", in.token, "the scheme's case is free, spaces before the token are")

	for name, msg := range map[string]string{
		"empty":                 "",
		"channel binding":       "y,,\x01auth=Bearer a\x01\x01",
		"no separator":          "n,,auth=Bearer a\x01\x01",
		"no final separator":    "n,,\x01auth=Bearer a\x01",
		"no auth":               "n,,\x01\x01",
		"only an extension":     "n,,\x01k=v\x01\x01",
		"bad authzid":           "n,a=al=ice,\x01auth=Bearer a\x01\x01",
		"non-ASCII authzid":     "n,a=\xc3\xa9,\x01auth=Bearer a\x01\x01",
		"extension key digit":   "n,,\x01auth=Bearer a\x01k1=v\x01\x01",
		"empty extension value": "n,,\x01auth=Bearer a\x01k=\x01\x01",
		"control in value":      "n,,\x01auth=Bearer a\x01k=\x02\x01\x01",
		"no token":              "n,,\x01auth=Bearer \x01\x01",
		"no scheme":             "n,,\x01auth= a\x01\x01",
		"bad token byte":        "n,,\x01auth=Bearer a*b\x01\x01",
		"= inside token":        "n,,\x01auth=Bearer a=b\x01\x01",
		"trailing bytes":        "n,,\x01auth=Bearer a\x01\x01x",
	} {
		_, err := parseOAuthInitial([]byte(msg))
		require.ErrorIs(t, err, ErrOAuthBearerMalformed, name)
	}
	_, err = parseOAuthInitial([]byte("n,,\x01auth=Basic a\x01\x01"))
	require.ErrorIs(t, err, errOAuthBearerClose, "Kafka fails a scheme other than Bearer unanswered")
}

// TestUnsecuredValidator: Kafka's OAuthBearerUnsecuredJws and
// OAuthBearerValidationUtils, check by check.
func TestUnsecuredValidator(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	v, err := newUnsecuredValidator(DefaultConfig())
	require.NoError(t, err)
	tok, err := v.validate(unsecuredJWS(`{"sub":"alice","exp":1700000060.5,"iat":1700000000}`), now)
	require.NoError(t, err)
	require.Equal(t, oauthToken{principal: "alice", lifetimeMs: 1700000060500}, tok)

	enc := base64.RawURLEncoding.EncodeToString
	for name, token := range map[string]string{
		"two dots":         "a..b",
		"two parts":        enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(`{}`)),
		"four parts":       unsecuredJWS(`{"sub":"a","exp":1800000000}`) + "x.",
		"bad base64":       "!!!." + enc([]byte(`{}`)) + ".",
		"bad JSON":         enc([]byte(`{"alg":`)) + "." + enc([]byte(`{}`)) + ".",
		"alg HS256":        enc([]byte(`{"alg":"HS256"}`)) + "." + enc([]byte(`{"sub":"a","exp":1800000000}`)) + ".",
		"a signature":      unsecuredJWS(`{"sub":"a","exp":1800000000}`) + "c2ln",
		"no exp":           unsecuredJWS(`{"sub":"a"}`),
		"exp a string":     unsecuredJWS(`{"sub":"a","exp":"1800000000"}`),
		"expired":          unsecuredJWS(`{"sub":"a","exp":1700000000}`),
		"no sub":           unsecuredJWS(`{"exp":1800000000}`),
		"blank sub":        unsecuredJWS(`{"sub":"  ","exp":1800000000}`),
		"sub a number":     unsecuredJWS(`{"sub":7,"exp":1800000000}`),
		"sub a list":       unsecuredJWS(`{"sub":["a"],"exp":1800000000}`),
		"iat in future":    unsecuredJWS(`{"sub":"a","exp":1800000000,"iat":1700000001}`),
		"iat a string":     unsecuredJWS(`{"sub":"a","exp":1800000000,"iat":"x"}`),
		"exp before iat":   unsecuredJWS(`{"sub":"a","exp":1699999990,"iat":1699999999}`),
		"scope a number":   unsecuredJWS(`{"sub":"a","exp":1800000000,"scope":3}`),
		"claims not JSON":  enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(`nope`)) + ".",
		"claims an array":  enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(`[1]`)) + ".",
		"header not an ob": enc([]byte(`"none"`)) + "." + enc([]byte(`{}`)) + ".",
	} {
		_, err := v.validate(token, now)
		if name == "header not an ob" {
			require.ErrorIs(t, err, errOAuthBearerClose, "no alg: Kafka fails it unanswered")
			continue
		}
		r, ok := errors.AsType[*oauthRefusal](err)
		require.True(t, ok, "%s: %v", name, err)
		require.Equal(t, `{"status":"invalid_token"}`, r.json(), name)
	}

	// The clock skew admits a token 2 s expired and one issued 2 s ahead.
	cfg := DefaultConfig()
	cfg.OAuthBearerAllowableClockSkew = 2 * time.Second
	cfg.OAuthBearerPrincipalClaimName = " client_id "
	cfg.OAuthBearerRequiredScope = []string{"kafka  produce"}
	v, err = newUnsecuredValidator(cfg)
	require.NoError(t, err)
	tok, err = v.validate(unsecuredJWS(`{"client_id":"svc","sub":"x","exp":1699999999,"scope":["kafka"," produce ","x"]}`), now)
	require.NoError(t, err)
	require.Equal(t, "svc", tok.principal)
	_, err = v.validate(unsecuredJWS(`{"client_id":"svc","exp":1800000000,"iat":1700000001,"scope":["kafka","produce"]}`), now)
	require.NoError(t, err)
	_, err = v.validate(unsecuredJWS(`{"client_id":"svc","exp":1800000000,"scope":"kafka"}`), now)
	r, ok := errors.AsType[*oauthRefusal](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, `{"status":"insufficient_scope", "scope":"[kafka, produce]"}`, r.json())

	for _, bad := range []func(*Config){
		func(c *Config) { c.OAuthBearerAllowableClockSkew = -time.Millisecond },
		func(c *Config) { c.OAuthBearerRequiredScope = []string{"a\"b"} },
	} {
		c := DefaultConfig()
		bad(&c)
		_, err := newUnsecuredValidator(c)
		require.Error(t, err)
	}
}

// saslConn drives one connection's requests through Server.handle.
type saslConn struct {
	t   *testing.T
	s   *Server
	ctx context.Context
	st  *connState
}

func newSASLConn(t *testing.T, s *Server) *saslConn {
	st := &connState{clientHost: "/127.0.0.1", sasl: &saslState{}, listener: s.first}
	return &saslConn{t: t, s: s, ctx: context.WithValue(context.Background(), connKey{}, st), st: st}
}

// call sends req and decodes its answer; err is the handler's (the
// connection closes).
func (c *saslConn) call(req kmsg.Request) (kmsg.Response, error) {
	c.t.Helper()
	out, err := c.s.handle(c.ctx, frameOf(req.Key(), req.GetVersion(), req))
	if err != nil {
		return nil, err
	}
	b, err := flatten(out)
	require.NoError(c.t, err)
	require.Equal(c.t, int(binary.BigEndian.Uint32(b)), len(b)-4)
	b = b[8:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		b = b[1:]
	}
	require.NoError(c.t, resp.ReadFrom(b))
	return resp, nil
}

func (c *saslConn) handshake(mech string) *kmsg.SASLHandshakeResponse {
	c.t.Helper()
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.SetVersion(1)
	req.Mechanism = mech
	resp, err := c.call(req)
	require.NoError(c.t, err)
	return resp.(*kmsg.SASLHandshakeResponse)
}

func (c *saslConn) authenticate(version int16, b []byte) (*kmsg.SASLAuthenticateResponse, error) {
	c.t.Helper()
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SetVersion(version)
	req.SASLAuthBytes = b
	resp, err := c.call(req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.SASLAuthenticateResponse), nil
}

func (c *saslConn) metadata() error {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	_, err := c.call(req)
	return err
}

// saslServer is a server with PLAIN and OAUTHBEARER whose clock the test
// moves.
func saslServer(t *testing.T, maxReauth time.Duration) (*Server, *time.Time) {
	cfg := DefaultConfig()
	cfg.SASLMechanisms = []string{MechanismPlain, MechanismOAuthBearer}
	cfg.Users = map[string]string{"alice": "a", "bob": "b"}
	cfg.ConnectionsMaxReauth = maxReauth
	cfg.FailedAuthenticationDelay = 0
	s, err := New(quotaDir(t), cfg)
	require.NoError(t, err)
	s.first = &boundListener{Listener: s.listeners[0], host: "127.0.0.1", port: 9092}
	now := time.Unix(1_700_000_000, 0)
	s.now = func() time.Time { return now }
	return s, &now
}

// TestOAuthBearerExchange: a valid token authenticates its sub as the
// principal; a refused one gets Kafka's error JSON as a challenge, then
// SASL_AUTHENTICATION_FAILED with it and the close; a malformed initial
// response SASL_AUTHENTICATION_FAILED at once; an authorization id
// other than the principal is refused.
func TestOAuthBearerExchange(t *testing.T) {
	s, _ := saslServer(t, 0)
	c := newSASLConn(t, s)
	require.Zero(t, c.handshake(MechanismOAuthBearer).ErrorCode)
	resp, err := c.authenticate(2, oauthInitialOf(unsecuredJWS(`{"sub":"alice","exp":1700000090}`)))
	require.NoError(t, err)
	require.Zero(t, resp.ErrorCode)
	require.Empty(t, resp.SASLAuthBytes)
	require.Equal(t, int64(90_000), resp.SessionLifetimeMillis, "the token's remaining lifetime")
	require.True(t, c.st.sasl.authenticated)
	require.Equal(t, "alice", principal(c.st))
	require.NoError(t, c.metadata())

	c = newSASLConn(t, s)
	c.handshake(MechanismOAuthBearer)
	resp, err = c.authenticate(1, oauthInitialOf(unsecuredJWS(`{"sub":"alice","exp":1699999999}`)))
	require.NoError(t, err)
	require.Zero(t, resp.ErrorCode, "the refusal is a challenge first")
	require.Equal(t, `{"status":"invalid_token"}`, string(resp.SASLAuthBytes))
	require.False(t, c.st.closeAfter)
	resp, err = c.authenticate(1, []byte{1})
	require.NoError(t, err)
	require.Equal(t, errSASLAuthenticationFailed, resp.ErrorCode)
	require.Equal(t, `{"status":"invalid_token"}`, *resp.ErrorMessage)
	require.True(t, c.st.closeAfter)
	require.False(t, c.st.sasl.authenticated)

	c = newSASLConn(t, s)
	c.handshake(MechanismOAuthBearer)
	resp, err = c.authenticate(2, []byte("n,,auth=Bearer x"))
	require.NoError(t, err)
	require.Equal(t, errSASLAuthenticationFailed, resp.ErrorCode)
	require.Equal(t, "Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER", *resp.ErrorMessage)
	require.True(t, c.st.closeAfter)

	c = newSASLConn(t, s)
	c.handshake(MechanismOAuthBearer)
	resp, err = c.authenticate(2, []byte("n,a=bob,\x01auth=Bearer "+unsecuredJWS(`{"sub":"alice","exp":1700000090}`)+"\x01\x01"))
	require.NoError(t, err)
	require.Equal(t, errSASLAuthenticationFailed, resp.ErrorCode)
	require.Contains(t, *resp.ErrorMessage, "authorization id (bob) that is different from the token's principal name (alice)")

	c = newSASLConn(t, s)
	c.handshake(MechanismOAuthBearer)
	_, err = c.authenticate(2, []byte("n,,\x01auth=Basic x\x01\x01"))
	require.ErrorIs(t, err, errAuthFailed, "closed unanswered, as Kafka")
}

// TestReauthentication: KIP-368 as Kafka's SaslServerAuthenticator,
// KafkaChannel and Processor run it.
func TestReauthentication(t *testing.T) {
	plain := []byte("\x00alice\x00a")
	t.Run("off", func(t *testing.T) {
		s, now := saslServer(t, 0)
		c := newSASLConn(t, s)
		c.handshake(MechanismPlain)
		resp, err := c.authenticate(2, plain)
		require.NoError(t, err)
		require.Zero(t, resp.SessionLifetimeMillis, "no expiry: 0")
		*now = now.Add(100 * 24 * time.Hour)
		require.NoError(t, c.metadata())
		require.Equal(t, errIllegalSASLState, c.handshake(MechanismPlain).ErrorCode, "no re-authentication without an expiry")
	})
	t.Run("lifetime", func(t *testing.T) {
		s, now := saslServer(t, 10*time.Second)
		c := newSASLConn(t, s)
		c.handshake(MechanismPlain)
		resp, err := c.authenticate(2, plain)
		require.NoError(t, err)
		require.Equal(t, int64(10_000), resp.SessionLifetimeMillis)

		// Re-authentication within the session: the same principal.
		*now = now.Add(9 * time.Second)
		require.Zero(t, c.handshake(MechanismPlain).ErrorCode)
		require.ErrorIs(t, c.metadata(), errAuthFailed, "only SaslAuthenticate while re-authenticating")
		c = newSASLConn(t, s)
		c.handshake(MechanismPlain)
		_, err = c.authenticate(2, plain)
		require.NoError(t, err)
		*now = now.Add(9 * time.Second)
		require.Zero(t, c.handshake(MechanismPlain).ErrorCode)
		resp, err = c.authenticate(2, plain)
		require.NoError(t, err)
		require.Zero(t, resp.ErrorCode)
		require.Equal(t, int64(10_000), resp.SessionLifetimeMillis)
		require.Equal(t, "alice", principal(c.st))
		// Another at once: at most one a second, answered as after
		// authentication; the connection stays.
		*now = now.Add(999 * time.Millisecond)
		require.Equal(t, errIllegalSASLState, c.handshake(MechanismPlain).ErrorCode)
		require.NoError(t, c.metadata())
		*now = now.Add(time.Millisecond)
		require.Zero(t, c.handshake(MechanismPlain).ErrorCode)
		_, err = c.authenticate(2, plain)
		require.NoError(t, err)

		// Past the session's end: the next request closes the
		// connection, a v0 client's too; a re-authentication is still
		// allowed.
		*now = now.Add(10*time.Second + time.Millisecond)
		require.ErrorIs(t, c.metadata(), ErrSessionExpired)
		v0 := newSASLConn(t, s)
		v0.handshake(MechanismPlain)
		resp, err = v0.authenticate(0, plain)
		require.NoError(t, err)
		require.Zero(t, resp.ErrorCode)
		*now = now.Add(10*time.Second + time.Millisecond)
		require.ErrorIs(t, v0.metadata(), ErrSessionExpired, "v0 sessions expire too")
		require.Zero(t, c.handshake(MechanismPlain).ErrorCode, "an expired session may re-authenticate")
		_, err = c.authenticate(2, plain)
		require.NoError(t, err)
		require.NoError(t, c.metadata())
	})
	t.Run("principal change", func(t *testing.T) {
		s, now := saslServer(t, 10*time.Second)
		c := newSASLConn(t, s)
		c.handshake(MechanismPlain)
		_, err := c.authenticate(2, plain)
		require.NoError(t, err)
		*now = now.Add(time.Second)
		c.handshake(MechanismPlain)
		resp, err := c.authenticate(2, []byte("\x00bob\x00b"))
		require.NoError(t, err)
		require.Equal(t, errSASLAuthenticationFailed, resp.ErrorCode)
		require.Equal(t, "Cannot change principals during re-authentication from User.alice: User.bob", *resp.ErrorMessage)
		require.True(t, c.st.closeAfter)
	})
	t.Run("mechanism change", func(t *testing.T) {
		s, now := saslServer(t, 10*time.Second)
		c := newSASLConn(t, s)
		c.handshake(MechanismPlain)
		_, err := c.authenticate(2, plain)
		require.NoError(t, err)
		*now = now.Add(time.Second)
		require.Zero(t, c.handshake(MechanismOAuthBearer).ErrorCode, "answered, as Kafka")
		_, err = c.authenticate(2, oauthInitialOf(unsecuredJWS(`{"sub":"alice","exp":1800000000}`)))
		require.ErrorIs(t, err, errAuthFailed, "closed unanswered")
		c = newSASLConn(t, s)
		c.handshake(MechanismPlain)
		_, err = c.authenticate(2, plain)
		require.NoError(t, err)
		require.Equal(t, errUnsupportedSASLMechanism, c.handshake("GSSAPI").ErrorCode)
		require.True(t, c.st.closeAfter)
	})
	t.Run("OAUTHBEARER", func(t *testing.T) {
		s, now := saslServer(t, 60*time.Second)
		c := newSASLConn(t, s)
		c.handshake(MechanismOAuthBearer)
		resp, err := c.authenticate(2, oauthInitialOf(unsecuredJWS(`{"sub":"alice","exp":1700000030}`)))
		require.NoError(t, err)
		require.Equal(t, int64(30_000), resp.SessionLifetimeMillis, "the token expires before connections.max.reauth.ms")
		*now = now.Add(20 * time.Second)
		c.handshake(MechanismOAuthBearer)
		resp, err = c.authenticate(2, oauthInitialOf(unsecuredJWS(`{"sub":"alice","exp":1700001000}`)))
		require.NoError(t, err)
		require.Equal(t, int64(60_000), resp.SessionLifetimeMillis, "connections.max.reauth.ms before the token's expiry")
		*now = now.Add(time.Second)
		c.handshake(MechanismOAuthBearer)
		resp, err = c.authenticate(2, oauthInitialOf(unsecuredJWS(`{"sub":"bob","exp":1700001000}`)))
		require.NoError(t, err)
		require.Equal(t, errSASLAuthenticationFailed, resp.ErrorCode)
		require.Equal(t, "Cannot change principals during re-authentication from User.alice: User.bob", *resp.ErrorMessage)
	})
}

// TestOAuthBearerRawToken: after a v0 handshake the tokens are bare
// frames; a refused token's challenge is framed, its acknowledgement
// closes the connection unanswered.
func TestOAuthBearerRawToken(t *testing.T) {
	s, _ := saslServer(t, 0)
	c := newSASLConn(t, s)
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Mechanism = MechanismOAuthBearer
	_, err := c.call(req)
	require.NoError(t, err)
	require.True(t, c.st.sasl.raw)
	reply, err := s.rawToken(c.ctx, oauthInitialOf(unsecuredJWS(`{"sub":"alice"}`)))
	require.NoError(t, err)
	require.Equal(t, `{"status":"invalid_token"}`, string(reply))
	_, err = s.rawToken(c.ctx, []byte{1})
	require.ErrorIs(t, err, errAuthFailed)
	require.Contains(t, fmt.Sprint(err), `{"status":"invalid_token"}`)
}
