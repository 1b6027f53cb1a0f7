package server

import (
	"context"
	"crypto/tls"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestListenersChecked: New refuses listeners Kafka refuses (a name
// twice, an unknown protocol, TLS or SASL settings the protocol does not
// have or lacks) and a SASL listener without mechanisms; a SASL
// listener without its own takes Config.SASLMechanisms; without
// Listeners the single-listener fields make one named as its protocol;
// ServeListener refuses a name it does not have with ErrUnknownListener.
func TestListenersChecked(t *testing.T) {
	tc := &tls.Config{}
	for name, ls := range map[string][]Listener{
		"twice":         {{Name: "A", SecurityProtocol: Plaintext}, {Name: "A", SecurityProtocol: Plaintext}},
		"no name":       {{SecurityProtocol: Plaintext}},
		"protocol":      {{Name: "A", SecurityProtocol: "GSSAPI"}},
		"SSL no TLS":    {{Name: "A", SecurityProtocol: SSL}},
		"TLS plaintext": {{Name: "A", SecurityProtocol: Plaintext, TLS: tc}},
		"SASL on PLAIN": {{Name: "A", SecurityProtocol: Plaintext, SASLMechanisms: []string{MechanismScramSHA256}}},
		"no mechanisms": {{Name: "A", SecurityProtocol: SASLPlaintext}},
		"GSSAPI":        {{Name: "A", SecurityProtocol: SASLSSL, TLS: tc, SASLMechanisms: []string{"GSSAPI"}}},
		"PLAIN no user": {{Name: "A", SecurityProtocol: SASLPlaintext, SASLMechanisms: []string{MechanismPlain}}},
	} {
		cfg := DefaultConfig()
		cfg.Listeners = ls
		_, err := New(quotaDir(t), cfg)
		require.Error(t, err, name)
	}

	cfg := DefaultConfig()
	cfg.SASLMechanisms = []string{MechanismScramSHA512}
	cfg.Listeners = []Listener{{Name: "EXTERNAL", SecurityProtocol: SASLSSL, TLS: tc}, {Name: "INTERNAL", SecurityProtocol: Plaintext}}
	s, err := New(quotaDir(t), cfg)
	require.NoError(t, err)
	require.Equal(t, []string{MechanismScramSHA512}, s.listeners[0].SASLMechanisms)
	require.Empty(t, s.listeners[1].SASLMechanisms)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.ErrorIs(t, s.ServeListener(context.Background(), ln, "OTHER"), ErrUnknownListener)

	cfg = DefaultConfig()
	cfg.TLS, cfg.SASLMechanisms = tc, []string{MechanismScramSHA256}
	s, err = New(quotaDir(t), cfg)
	require.NoError(t, err)
	require.Equal(t, []Listener{{Name: "SASL_SSL", SecurityProtocol: SASLSSL, TLS: tc, SASLMechanisms: []string{MechanismScramSHA256}}}, s.listeners)
}
