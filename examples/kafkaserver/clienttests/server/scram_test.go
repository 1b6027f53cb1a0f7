package server_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// TestUserSCRAMCredentials: a SCRAM credential set with franz-go's kadm
// (AlterUserScramCredentials) logs in at once, with its own iteration
// count, and again after a restart; the password set replaces the server
// map's for SCRAM; a deleted one no longer logs in; Kafka's errors for
// iteration counts out of bounds, unknown mechanisms, duplicates and
// deletions of what does not exist.
func TestUserSCRAMCredentials(t *testing.T) {
	srv := servertest.Start(t, withSASL)
	ctx := context.Background()
	var raw *kgo.Client
	admin := func() *kadm.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()))
		require.NoError(t, err)
		t.Cleanup(cl.Close)
		raw = cl
		return kadm.NewClient(cl)
	}
	adm := admin()
	carol256 := kgo.SASL(scram.Auth{User: "carol", Pass: "carol-secret"}.AsSha256Mechanism())
	require.Error(t, roundTrip(t, srv.Addr, "scram", carol256), "no carol yet")

	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "carol", Mechanism: kadm.ScramSha256, Iterations: 8192, Password: "carol-secret"},
		{User: "bob", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "bob-new"},
	})
	require.NoError(t, err)
	require.NoError(t, res.Error())
	require.NoError(t, roundTrip(t, srv.Addr, "scram", carol256))
	require.Error(t, roundTrip(t, srv.Addr, "scram", kgo.SASL(scram.Auth{User: "carol", Pass: "nope"}.AsSha256Mechanism())))
	require.Error(t, roundTrip(t, srv.Addr, "scram", kgo.SASL(scram.Auth{User: "carol", Pass: "carol-secret"}.AsSha512Mechanism())),
		"only SCRAM-SHA-256 was set")
	require.NoError(t, roundTrip(t, srv.Addr, "scram", kgo.SASL(scram.Auth{User: "bob", Pass: "bob-new"}.AsSha512Mechanism())))
	require.Error(t, roundTrip(t, srv.Addr, "scram", kgo.SASL(scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha512Mechanism())),
		"the directory's credential replaces the map's")
	require.NoError(t, roundTrip(t, srv.Addr, "scram", kgo.SASL(scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha256Mechanism())),
		"the map's still serves the other mechanism")

	described, err := adm.DescribeUserSCRAMs(ctx)
	require.NoError(t, err)
	require.NoError(t, described.Error())
	require.Equal(t, []kadm.CredInfo{{Mechanism: kadm.ScramSha256, Iterations: 8192}}, described["carol"].CredInfos)
	require.Equal(t, []kadm.CredInfo{{Mechanism: kadm.ScramSha512, Iterations: 4096}}, described["bob"].CredInfos)
	require.Len(t, described, 2, "the server map's users are not the directory's")
	described, err = adm.DescribeUserSCRAMs(ctx, "nobody")
	require.NoError(t, err)
	require.ErrorIs(t, described["nobody"].Err, kerr.ResourceNotFound)

	// Kafka's errors, on the wire.
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	up := func(user string, mech int8, its int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = user, mech, its, []byte("salt"), make([]byte, 32)
		return u
	}
	del := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	del.Name, del.Mechanism = "nobody", 1
	req.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{del}
	req.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{
		up("few", 1, 4095), up("many", 2, 16385), up("mech", 3, 4096), up("twice", 1, 4096), up("twice", 2, 4096),
	}
	resp, err := req.RequestWith(ctx, raw)
	require.NoError(t, err)
	codes := map[string]int16{}
	for _, r := range resp.Results {
		codes[r.User] = r.ErrorCode
	}
	require.Equal(t, map[string]int16{
		"nobody": kerr.ResourceNotFound.Code, "few": kerr.UnacceptableCredential.Code, "many": kerr.UnacceptableCredential.Code,
		"mech": kerr.UnsupportedSaslMechanism.Code, "twice": kerr.DuplicateResource.Code,
	}, codes)

	// Kept across a restart; deleted, it no longer logs in.
	srv.Restart(t)
	require.NoError(t, roundTrip(t, srv.Addr, "scram", carol256))
	adm = admin()
	res, err = adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "carol", Mechanism: kadm.ScramSha256}}, nil)
	require.NoError(t, err)
	require.NoError(t, res.Error())
	require.Error(t, roundTrip(t, srv.Addr, "scram", carol256))
}
