package server_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// unsecuredJWT makes an unsecured JWS (alg none, no signature) for sub,
// expiring in life.
func unsecuredJWT(sub string, life time.Duration) string {
	enc := base64.RawURLEncoding
	now := time.Now().Unix()
	claims := fmt.Sprintf(`{"sub":%q,"iat":%d,"exp":%d}`, sub, now, now+int64(life/time.Second))
	return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString([]byte(claims)) + "."
}

// TestOAuthBearer: franz-go's OAUTHBEARER with an unsecured JWT
// authenticates its sub, the principal the authorizer sees (alice, a
// super user, may; bob may not); an expired token is refused with
// Kafka's error JSON.
func TestOAuthBearer(t *testing.T) {
	srv := servertest.StartInMemory(t, func(c *server.Config) {
		c.SASLMechanisms = []string{server.MechanismOAuthBearer}
		c.AuthorizerClassName, c.SuperUsers = server.StandardAuthorizer, []string{"User:alice"}
		c.Logger = slog.New(slog.DiscardHandler)
	})
	require.NoError(t, roundTrip(t, srv.Addr, "oauth", kgo.SASL(oauth.Auth{Token: unsecuredJWT("alice", time.Hour)}.AsMechanism())))
	err := roundTrip(t, srv.Addr, "oauth", kgo.SASL(oauth.Auth{Token: unsecuredJWT("bob", time.Hour)}.AsMechanism()))
	require.ErrorIs(t, err, kerr.TopicAuthorizationFailed, "bob is not alice")
	err = roundTrip(t, srv.Addr, "oauth", kgo.SASL(oauth.Auth{Token: unsecuredJWT("alice", -time.Minute)}.AsMechanism()))
	require.ErrorContains(t, err, `{"status":"invalid_token"}`)
	err = roundTrip(t, srv.Addr, "oauth", kgo.SASL(oauth.Auth{Token: "not-a-jws"}.AsMechanism()))
	require.ErrorContains(t, err, `{"status":"invalid_token"}`)
}

// TestReauthenticationKgo: with connections.max.reauth.ms at 2.5 s,
// franz-go's producer and consumer re-authenticate on their connections
// several times over an 8 s run and lose nothing. (franz-go
// re-authenticates a second before its session ends: with a session
// under 2 s it would do so sooner than a second after the last, which
// Kafka refuses, and so does the server.)
func TestReauthenticationKgo(t *testing.T) {
	srv := servertest.StartInMemory(t, func(c *server.Config) {
		c.SASLMechanisms = []string{server.MechanismOAuthBearer}
		c.ConnectionsMaxReauth = 2500 * time.Millisecond
		c.Logger = slog.New(slog.DiscardHandler)
	})
	var auths atomic.Int64
	mech := oauth.Oauth(func(context.Context) (oauth.Auth, error) {
		auths.Add(1)
		return oauth.Auth{Token: unsecuredJWT("alice", time.Hour)}, nil
	})
	const topic, n = "reauth", 200
	prod, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.SASL(mech), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation(),
		kgo.ProducerLinger(0))
	require.NoError(t, err)
	defer prod.Close()
	cons, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.SASL(mech), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	require.NoError(t, err)
	defer cons.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		for i := range n {
			if err := prod.ProduceSync(ctx, kgo.StringRecord(strconv.Itoa(i))).FirstErr(); err != nil {
				done <- err
				return
			}
			time.Sleep(40 * time.Millisecond) // spread the run over several sessions
		}
		done <- nil
	}()
	var got []string
	for len(got) < n && ctx.Err() == nil {
		fs := cons.PollFetches(ctx)
		require.NoError(t, fs.Err())
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	require.NoError(t, <-done)
	require.Len(t, got, n)
	for i, v := range got {
		require.Equal(t, strconv.Itoa(i), v, "in order, none lost or doubled")
	}
	t.Logf("%d authentications over %d records", auths.Load(), n)
	require.Greater(t, auths.Load(), int64(8), "the clients re-authenticated several times")
}

// TestReauthenticationMisbehaving: a raw client that never
// re-authenticates has its connection closed at its first request after
// its session ends; one that re-authenticates in a loop gets one a
// second, the others answered ILLEGAL_SASL_STATE.
func TestReauthenticationMisbehaving(t *testing.T) {
	const life = 200 * time.Millisecond
	srv := servertest.StartInMemory(t, func(c *server.Config) {
		withSASL(c)
		c.ConnectionsMaxReauth = life
		c.Logger = slog.New(slog.DiscardHandler)
	})
	handshake := func(t *testing.T, c net.Conn) int16 {
		t.Helper()
		req := kmsg.NewPtrSASLHandshakeRequest()
		req.SetVersion(1)
		req.Mechanism = server.MechanismPlain
		body, err := rawRequest(t, c, requestFrame(kmsg.SASLHandshake.Int16(), 1, req.AppendTo(nil)))
		require.NoError(t, err)
		resp := kmsg.NewPtrSASLHandshakeResponse()
		resp.SetVersion(1)
		require.NoError(t, resp.ReadFrom(body))
		return resp.ErrorCode
	}
	authenticate := func(t *testing.T, c net.Conn) *kmsg.SASLAuthenticateResponse {
		t.Helper()
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.SetVersion(1)
		req.SASLAuthBytes = []byte("\x00alice\x00alice-secret")
		body, err := rawRequest(t, c, requestFrame(kmsg.SASLAuthenticate.Int16(), 1, req.AppendTo(nil)))
		require.NoError(t, err)
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		resp.SetVersion(1)
		require.NoError(t, resp.ReadFrom(body))
		require.Zero(t, resp.ErrorCode)
		return resp
	}
	metadata := func(t *testing.T, c net.Conn) error {
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(1)
		_, err := rawRequest(t, c, requestFrame(kmsg.Metadata.Int16(), 1, req.AppendTo(nil)))
		return err
	}

	t.Run("never", func(t *testing.T) {
		c := memDial(t, srv.Addr)
		require.Zero(t, handshake(t, c))
		require.Equal(t, life.Milliseconds(), authenticate(t, c).SessionLifetimeMillis)
		time.Sleep(2 * life) // past the session's end
		require.ErrorIs(t, metadata(t, c), io.EOF, "closed at its next request")
	})
	long := servertest.StartInMemory(t, func(c *server.Config) {
		withSASL(c)
		c.ConnectionsMaxReauth = time.Minute // the session outlasts the loop
		c.Logger = slog.New(slog.DiscardHandler)
	})
	t.Run("loop", func(t *testing.T) {
		c := memDial(t, long.Addr)
		require.Zero(t, handshake(t, c))
		authenticate(t, c)
		start := time.Now()
		began := 0
		for range 50 {
			if handshake(t, c) == 0 {
				began++
				authenticate(t, c)
				continue
			}
			require.NoError(t, metadata(t, c), "refused, the connection stays")
		}
		elapsed := time.Since(start)
		require.LessOrEqual(t, began, 1+int(elapsed/time.Second), "one re-authentication a second at most")
		require.GreaterOrEqual(t, began, 1)
	})
	// A well-behaved client is still served after the loop. Not on srv:
	// its 200 ms sessions are shorter than the second that Kafka, and the
	// server, require between re-authentications, so a client that
	// re-authenticates on time would be refused as the loop was.
	require.NoError(t, roundTrip(t, long.Addr, "reauth", kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())))
}

// reauthCounter counts the server's re-authentication logs.
type reauthCounter struct{ n atomic.Int64 }

func (h *reauthCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *reauthCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "kafkaserver: re-authenticated" {
		h.n.Add(1)
	}
	return nil
}
func (h *reauthCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *reauthCounter) WithGroup(string) slog.Handler      { return h }

// TestOAuthBearerConfluentKafka: confluent-kafka (librdkafka) with its
// unsecured JWT produces 40 records over 8 s to a server whose sessions
// last 2.5 s, re-authenticating, and reads them all back.
func TestOAuthBearerConfluentKafka(t *testing.T) {
	python := pythonWith(t, "confluent_kafka")
	h := &reauthCounter{}
	srv := servertest.StartInMemory(t, func(c *server.Config) {
		c.SASLMechanisms = []string{server.MechanismOAuthBearer}
		c.OAuthBearerRequiredScope = []string{"kafka"}
		c.ConnectionsMaxReauth = 2500 * time.Millisecond
		c.Logger = slog.New(h)
	})
	const n = 40
	out := run(t, "", python, "testdata/oauth_confluent.py", srv.Addr, "oauth-ck", strconv.Itoa(n), "oauth-ck-group", "0.2")
	var want []string
	for i := range n {
		want = append(want, strconv.Itoa(i))
	}
	require.Equal(t, strings.Join(want, "\n")+"\n", out)
	t.Logf("%d re-authentications", h.n.Load())
	require.GreaterOrEqual(t, h.n.Load(), int64(2), "librdkafka re-authenticated")
}
