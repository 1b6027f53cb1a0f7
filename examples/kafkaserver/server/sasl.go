package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
)

// The SASL mechanisms served (sasl.enabled.mechanisms).
const (
	MechanismPlain       = "PLAIN"
	MechanismScramSHA256 = "SCRAM-SHA-256"
	MechanismScramSHA512 = "SCRAM-SHA-512"
)

// scramIterations is the iteration count of the SCRAM credentials the
// server derives from Config.Users (Kafka's kafka-configs default, 4096).
const scramIterations = 4096

const errSASLAuthenticationFailed int16 = 58

// errUnsupportedSASLMechanism is UNSUPPORTED_SASL_MECHANISM.
const errUnsupportedSASLMechanism int16 = 33

// errIllegalSASLState is ILLEGAL_SASL_STATE.
const errIllegalSASLState int16 = 34

// saslState is a connection's authentication: nil when SASL is off.
type saslState struct {
	mechanism     string // chosen by the handshake
	authenticated bool
	// raw: the handshake was v0, so the tokens come as bare
	// size-prefixed frames, not in SaslAuthenticate requests.
	raw   bool
	user  string
	scram *scramExchange
	// oauthErr is the error JSON an OAUTHBEARER exchange sent as its
	// challenge, until the client acknowledges it with a lone 0x01.
	oauthErr string

	// expires is when the session ends (KIP-368): zero for never. A
	// request other than a re-authentication's SaslHandshake after it
	// closes the connection.
	expires time.Time
	// reauthStart is when the last re-authentication began: another
	// may begin a second later at the earliest, as Kafka allows.
	reauthStart time.Time
	// prevMechanism and prevUser are the session's while it
	// re-authenticates (prevMechanism empty otherwise); badMechanism is
	// Kafka's refusal of a handshake that changed the mechanism, for
	// the SaslAuthenticate that follows.
	prevMechanism, prevUser, badMechanism string
}

// minReauthInterval is the least time between two re-authentications of
// a connection (Kafka's KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS):
// a SaslHandshake sooner is answered as one after authentication,
// ILLEGAL_SASL_STATE.
const minReauthInterval = time.Second

// expired reports whether the session has ended at now.
func (st *saslState) expired(now time.Time) bool {
	return st.authenticated && !st.expires.IsZero() && now.After(st.expires)
}

// mayReauth reports whether a SaslHandshake at now begins a
// re-authentication, as Kafka's KafkaChannel.maybeBeginServerReauthentication
// decides: the session has an expiry and the last re-authentication
// began a second ago or more.
func (st *saslState) mayReauth(now time.Time) bool {
	return st.authenticated && !st.expires.IsZero() && (st.reauthStart.IsZero() || now.Sub(st.reauthStart) >= minReauthInterval)
}

// ErrSessionExpired is why a connection whose SASL session ended
// (Config.ConnectionsMaxReauth, an OAUTHBEARER token's expiry) without a
// re-authentication is closed, at its next request, as Kafka closes it.
var ErrSessionExpired = errors.New("server: SASL session expired without re-authentication")

// scramExchange is a SCRAM exchange between its two messages.
type scramExchange struct {
	hash                     func() hash.Hash
	user, clientFirstBare    string
	serverFirst, nonce       string
	salt                     []byte
	storedKey, serverKey     []byte
	clientFinalWithoutProofs string
}

// credential is a user's SCRAM credential for one hash, as Kafka stores
// them: salt, iterations, stored key and server key (RFC 5802).
type credential struct {
	salt                 []byte
	storedKey, serverKey []byte
	iterations           int
}

// credential returns user's credential for a SCRAM mechanism: the one the
// directory keeps (log.Dir.UserScramCredential, altered with
// AlterUserScramCredentials), else one derived from Config.Users.
func (s *Server) credential(mechanism, user string) (credential, bool) {
	m, ok := log.ParseScramMechanism(mechanism)
	if !ok {
		return credential{}, false
	}
	if c, ok := s.dir.UserScramCredential(user, m); ok {
		return credential{salt: c.Salt, storedKey: c.StoredKey, serverKey: c.ServerKey, iterations: int(c.Iterations)}, true
	}
	s.credMu.Lock()
	defer s.credMu.Unlock()
	key := mechanism + "\x00" + user
	if c, ok := s.creds[key]; ok {
		return c, true
	}
	pass, ok := s.cfg.Users[user]
	if !ok {
		return credential{}, false
	}
	u, err := log.NewScramUpsertion(user, m, pass, scramIterations)
	if err != nil {
		return credential{}, false
	}
	lc := log.NewScramCredential(m, u.Salt, u.SaltedPassword, u.Iterations)
	c := credential{salt: lc.Salt, storedKey: lc.StoredKey, serverKey: lc.ServerKey, iterations: scramIterations}
	s.creds[key] = c
	return c, true
}

func scramHash(mechanism string) func() hash.Hash {
	if mechanism == MechanismScramSHA512 {
		return sha512.New
	}
	return sha256.New
}

func hmacOf(h func() hash.Hash, key []byte, msg string) []byte {
	m := hmac.New(h, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// allowedBeforeAuth are the requests an unauthenticated connection may
// send when SASL is on, as Kafka allows them.
func allowedBeforeAuth(key int16) bool {
	return key == kmsg.ApiVersions.Int16() || key == kmsg.SASLHandshake.Int16() || key == kmsg.SASLAuthenticate.Int16()
}

// errAuthzid is Kafka's refusal of an authorization id other than the
// user's, word for word.
var errAuthzid = errors.New("Authentication failed: Client requested an authorization id that is different from username")

// errAuthFailed closes a connection after its failed authentication was
// answered.
var errAuthFailed = errors.New("server: SASL authentication failed")

func (s *Server) handleSASLHandshake(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SASLHandshakeRequest)
	resp := kmsg.NewPtrSASLHandshakeResponse()
	mechanisms := connMechanisms(ctx)
	resp.SupportedMechanisms = mechanisms
	st := connSASL(ctx)
	if st != nil && st.mayReauth(s.now()) {
		// KIP-368: the session starts again, with the same mechanism
		// and principal; until it completes, the connection may send
		// only SaslAuthenticate.
		st.reauthStart, st.prevMechanism, st.prevUser = s.now(), st.mechanism, st.user
		st.authenticated, st.expires, st.mechanism, st.scram, st.oauthErr, st.badMechanism = false, time.Time{}, "", nil, "", ""
		if !slices.Contains(mechanisms, req.Mechanism) {
			resp.ErrorCode = errUnsupportedSASLMechanism
			setCloseAfter(ctx)
			return resp, nil
		}
		if req.Mechanism != st.prevMechanism {
			// Answered, but the SaslAuthenticate that follows closes the
			// connection unanswered, as Kafka's REAUTH_BAD_MECHANISM.
			st.badMechanism = fmt.Sprintf("SASL mechanism '%s' requested by client is not supported for re-authentication of mechanism '%s'",
				req.Mechanism, st.prevMechanism)
		}
		st.mechanism, st.raw = req.Mechanism, req.Version == 0
		return resp, nil
	}
	switch {
	case st == nil:
		resp.ErrorCode = errIllegalSASLState // SASL is off on this listener
	case st.authenticated || st.mechanism != "":
		resp.ErrorCode = errIllegalSASLState
	case !slices.Contains(mechanisms, req.Mechanism):
		resp.ErrorCode = errUnsupportedSASLMechanism
	default:
		st.mechanism, st.raw = req.Mechanism, req.Version == 0
	}
	return resp, nil
}

// rawToken answers a bare SASL token (after a v0 handshake): the reply
// token to frame, or an error to close the connection for (a failed
// authentication gets no answer on this path, as in Kafka).
func (s *Server) rawToken(ctx context.Context, token []byte) ([]byte, error) {
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SASLAuthBytes = token
	resp, err := s.handleSASLAuthenticate(ctx, req)
	if err != nil {
		return nil, err
	}
	ar := resp.(*kmsg.SASLAuthenticateResponse)
	if ar.ErrorCode != errNone {
		return nil, fmt.Errorf("%w: %s", errAuthFailed, *ar.ErrorMessage)
	}
	return ar.SASLAuthBytes, nil
}

func (s *Server) handleSASLAuthenticate(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SASLAuthenticateRequest)
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	st := connSASL(ctx)
	if st == nil || st.mechanism == "" || st.authenticated {
		resp.ErrorCode = errIllegalSASLState
		resp.ErrorMessage = messageOf(errors.New("SaslAuthenticate without a SaslHandshake choosing a mechanism"))
		return resp, nil
	}
	if st.badMechanism != "" {
		return nil, fmt.Errorf("%w: %s", errAuthFailed, st.badMechanism)
	}
	var credentialExpiry *int64 // ms since the epoch
	fail := func(err error) (kmsg.Response, error) {
		resp.ErrorCode, resp.ErrorMessage = errSASLAuthenticationFailed, messageOf(err)
		s.lg.Warn("kafkaserver: SASL authentication failed", "mechanism", st.mechanism, "reauthentication", st.prevMechanism != "", "err", err)
		setCloseAfter(ctx)
		if cs := stateOf(ctx); cs != nil {
			cs.authFailed = true
		}
		return resp, nil
	}
	switch st.mechanism {
	case MechanismPlain:
		// [authzid] NUL authcid NUL passwd (RFC 4616).
		parts := bytes.Split(req.SASLAuthBytes, []byte{0})
		if len(parts) != 3 {
			return fail(errors.New("PLAIN: malformed message"))
		}
		authzid, user, pass := string(parts[0]), string(parts[1]), string(parts[2])
		want, ok := s.cfg.Users[user]
		if !ok {
			want, ok = s.cfg.PlainUsers[user]
		}
		if !ok || !hmac.Equal([]byte(want), []byte(pass)) {
			return fail(fmt.Errorf("invalid credentials for user %q", user))
		}
		if authzid != "" && authzid != user {
			// As Kafka's PlainSaslServer refuses it.
			return fail(errAuthzid)
		}
		st.user = user
	case MechanismScramSHA256, MechanismScramSHA512:
		if st.scram == nil {
			out, err := s.scramFirst(st, req.SASLAuthBytes)
			if err != nil {
				return fail(err)
			}
			resp.SASLAuthBytes = out
			return resp, nil
		}
		out, err := s.scramFinal(st, req.SASLAuthBytes)
		if err != nil {
			return fail(err)
		}
		resp.SASLAuthBytes = out
		st.user, st.scram = st.scram.user, nil
	case MechanismOAuthBearer:
		tok, challenge, err := s.oauthBearer(st, req.SASLAuthBytes)
		switch {
		case errors.Is(err, errOAuthBearerClose):
			return nil, fmt.Errorf("%w: %v", errAuthFailed, err)
		case err != nil:
			return fail(err)
		case challenge != nil:
			resp.SASLAuthBytes = challenge
			return resp, nil
		}
		st.user, credentialExpiry = tok.principal, &tok.lifetimeMs
	}
	if st.prevMechanism != "" && st.user != st.prevUser {
		return fail(fmt.Errorf("Cannot change principals during re-authentication from User.%s: User.%s", st.prevUser, st.user))
	}
	if st.prevMechanism != "" {
		s.lg.Info("kafkaserver: re-authenticated", "mechanism", st.mechanism, "principal", "User:"+st.user)
	}
	st.authenticated, st.prevMechanism, st.prevUser = true, "", ""
	resp.SessionLifetimeMillis = s.startSession(st, credentialExpiry)
	if cs := stateOf(ctx); cs != nil {
		cs.principal = "User:" + st.user // the SASL principal wins over a client certificate's
	}
	return resp, nil
}

// startSession sets a session's expiry as Kafka's SaslServerAuthenticator
// does and returns its lifetime for SaslAuthenticate v1+: the least of
// Config.ConnectionsMaxReauth (when positive) and the time to the
// credential's expiry (an OAUTHBEARER token's exp, in ms since the
// epoch; nil for none), never negative; 0 and no expiry when neither
// applies.
func (s *Server) startSession(st *saslState, credentialExpiry *int64) int64 {
	now := s.now()
	maxReauth := s.cfg.ConnectionsMaxReauth.Milliseconds()
	var lifetime int64
	switch {
	case credentialExpiry == nil && maxReauth <= 0:
		st.expires = time.Time{}
		return 0
	case credentialExpiry == nil:
		lifetime = maxReauth
	case maxReauth <= 0:
		lifetime = *credentialExpiry - now.UnixMilli()
	default:
		lifetime = min(*credentialExpiry-now.UnixMilli(), maxReauth)
	}
	lifetime = max(0, lifetime)
	st.expires = now.Add(time.Duration(lifetime) * time.Millisecond)
	return lifetime
}

// oauthBearer answers an OAUTHBEARER message as Kafka's
// OAuthBearerSaslServer: the validated token; or a challenge, the error
// JSON, for a token the validator refused (the client acknowledges it
// with 0x01 and gets SASL_AUTHENTICATION_FAILED with the JSON as its
// message); or an error.
func (s *Server) oauthBearer(st *saslState, msg []byte) (oauthToken, []byte, error) {
	if len(msg) == 1 && msg[0] == 1 && st.oauthErr != "" {
		return oauthToken{}, nil, errors.New(st.oauthErr)
	}
	st.oauthErr = ""
	text := "authentication"
	if st.prevMechanism != "" {
		text = "re-authentication"
	}
	in, err := parseOAuthInitial(msg)
	if errors.Is(err, errOAuthBearerClose) {
		return oauthToken{}, nil, err
	}
	if err != nil {
		s.lg.Debug("kafkaserver: OAUTHBEARER", "err", err)
		// As Kafka answers a SaslException: a message that says nothing
		// of the credentials.
		return oauthToken{}, nil, fmt.Errorf("Authentication failed during %s due to invalid credentials with SASL mechanism %s", text, MechanismOAuthBearer)
	}
	tok, err := s.oauth.validate(in.token, s.now())
	if r, ok := errors.AsType[*oauthRefusal](err); ok {
		s.lg.Debug("kafkaserver: OAUTHBEARER token refused", "err", r.reason)
		st.oauthErr = r.json()
		return oauthToken{}, []byte(st.oauthErr), nil
	}
	if err != nil {
		return oauthToken{}, nil, err
	}
	if in.authzid != "" && in.authzid != tok.principal {
		return oauthToken{}, nil, fmt.Errorf("Authentication failed: Client requested an authorization id (%s) that is different from the token's principal name (%s)",
			in.authzid, tok.principal)
	}
	// The unsecured validator accepts every extension, as Kafka's.
	return tok, nil, nil
}

// scramFirst answers the client-first message with the server-first one.
func (s *Server) scramFirst(st *saslState, msg []byte) ([]byte, error) {
	m := string(msg)
	// gs2-header: "n,," (no channel binding, no authzid) or "y,,".
	if !strings.HasPrefix(m, "n,") && !strings.HasPrefix(m, "y,") {
		return nil, errors.New("SCRAM: channel binding is not supported")
	}
	rest := m[2:]
	i := strings.IndexByte(rest, ',')
	if i < 0 {
		return nil, errors.New("SCRAM: malformed client-first message")
	}
	authzid, bare := rest[:i], rest[i+1:]
	if authzid != "" && !strings.HasPrefix(authzid, "a=") {
		return nil, errors.New("SCRAM: malformed authorization id in the client-first message")
	}
	authzid = strings.TrimPrefix(authzid, "a=")
	attrs := scramAttrs(bare)
	user, nonce := attrs["n"], attrs["r"]
	if user == "" || nonce == "" {
		return nil, errors.New("SCRAM: client-first message without user or nonce")
	}
	user = strings.NewReplacer("=2C", ",", "=3D", "=").Replace(user)
	cred, ok := s.credential(st.mechanism, user)
	if !ok {
		return nil, fmt.Errorf("invalid credentials for user %q", user)
	}
	if authzid != "" && authzid != user {
		// As Kafka's ScramSaslServer refuses it (comparing the
		// authorization id as sent with the decoded user name).
		return nil, errAuthzid
	}
	snonce := make([]byte, 18)
	_, _ = rand.Read(snonce)
	full := nonce + base64.RawStdEncoding.EncodeToString(snonce)
	first := fmt.Sprintf("r=%s,s=%s,i=%d", full, base64.StdEncoding.EncodeToString(cred.salt), cred.iterations)
	st.scram = &scramExchange{hash: scramHash(st.mechanism), user: user, clientFirstBare: bare, serverFirst: first, nonce: full,
		salt: cred.salt, storedKey: cred.storedKey, serverKey: cred.serverKey}
	return []byte(first), nil
}

// scramFinal checks the client-final message's proof and answers with the
// server's signature.
func (s *Server) scramFinal(st *saslState, msg []byte) ([]byte, error) {
	x := st.scram
	m := string(msg)
	i := strings.LastIndex(m, ",p=")
	if i < 0 {
		return nil, errors.New("SCRAM: client-final message without a proof")
	}
	withoutProof := m[:i]
	attrs := scramAttrs(withoutProof)
	// Kafka's ScramSaslServer checks that the final nonce ends with the
	// server's (not that it equals it): librdkafka sends its own nonce
	// again in front of the server's, and Kafka accepts it.
	if !strings.HasSuffix(attrs["r"], x.nonce) {
		return nil, errors.New("SCRAM: the final message's nonce is not the server's")
	}
	proof, err := base64.StdEncoding.DecodeString(m[i+3:])
	if err != nil || len(proof) != len(x.storedKey) {
		return nil, errors.New("SCRAM: malformed proof")
	}
	authMessage := x.clientFirstBare + "," + x.serverFirst + "," + withoutProof
	sig := hmacOf(x.hash, x.storedKey, authMessage)
	clientKey := make([]byte, len(proof))
	for j := range proof {
		clientKey[j] = proof[j] ^ sig[j]
	}
	sum := x.hash()
	sum.Write(clientKey)
	if !hmac.Equal(sum.Sum(nil), x.storedKey) {
		return nil, fmt.Errorf("invalid credentials for user %q", x.user)
	}
	return []byte("v=" + base64.StdEncoding.EncodeToString(hmacOf(x.hash, x.serverKey, authMessage))), nil
}

// scramAttrs splits "a=1,b=2" into its attributes.
func scramAttrs(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if len(kv) >= 2 && kv[1] == '=' {
			out[kv[:1]] = kv[2:]
		}
	}
	return out
}

// delayFailedAuth waits Config.FailedAuthenticationDelay before a failed
// authentication is answered and its connection closed, as Kafka delays
// both (connection.failed.authentication.delay.ms), unless the
// connection or the server ends first.
func (s *Server) delayFailedAuth(ctx context.Context) {
	if s.cfg.FailedAuthenticationDelay <= 0 {
		return
	}
	t := time.NewTimer(s.cfg.FailedAuthenticationDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
