package log

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

func mustUpsertion(t *testing.T, user string, m ScramMechanism, password string, iterations int32) ScramUpsertion {
	t.Helper()
	u, err := NewScramUpsertion(user, m, password, iterations)
	require.NoError(t, err)
	return u
}

// TestScramCredentialDerivation: the stored key and server key are RFC
// 5802's (RFC 7677's test vector for SCRAM-SHA-256: password "pencil",
// salt W22ZaJ0SNY7soEsUEjb6gQ==, 4096 iterations).
func TestScramCredentialDerivation(t *testing.T) {
	salt, err := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	require.NoError(t, err)
	u, err := NewScramUpsertion("user", ScramSHA256, "pencil", 4096)
	require.NoError(t, err)
	require.Len(t, u.Salt, 32, "salted as Kafka's admin client: 32 random bytes")
	require.Len(t, u.SaltedPassword, sha256.Size)
	// Recompute with the vector's salt.
	c := NewScramCredential(ScramSHA256, salt, pbkdf2Of(t, "pencil", salt, 4096), 4096)
	// RFC 7677's ServerSignature for its AuthMessage, made with our server key.
	auth := "n=user,r=rOprNGfwEbeRWgbNEkqO,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	m := hmac.New(sha256.New, c.ServerKey)
	m.Write([]byte(auth))
	require.Equal(t, "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", b64(m.Sum(nil)))
}

func TestScramMechanismNames(t *testing.T) {
	for _, m := range []ScramMechanism{ScramSHA256, ScramSHA512} {
		got, ok := ParseScramMechanism(m.String())
		require.True(t, ok)
		require.Equal(t, m, got)
	}
	_, ok := ParseScramMechanism("SCRAM-SHA-1")
	require.False(t, ok)
	require.Equal(t, "UNKNOWN", ScramMechanism(0).String())
	_, err := NewScramUpsertion("u", 3, "p", 4096)
	require.ErrorIs(t, err, ErrUnsupportedSASLMechanism)
	_, err = NewScramUpsertion("u", ScramSHA512, "p", 4095)
	require.ErrorIs(t, err, ErrUnacceptableCredential)
}

func TestAlterUserScramCredentials(t *testing.T) {
	groupConfigFS(t, func(t *testing.T, cfg Config, path string) {
		ctx := context.Background()
		d, err := Open(ctx, path, cfg)
		require.NoError(t, err)
		require.Empty(t, d.DescribeUserScramCredentials(nil))

		alice := mustUpsertion(t, "alice", ScramSHA256, "alice-secret", 8192)
		res, err := d.AlterUserScramCredentials(ctx, nil, []ScramUpsertion{alice, mustUpsertion(t, "bob", ScramSHA512, "b", 4096)})
		require.NoError(t, err)
		require.Equal(t, []UserScramResult{{User: "alice"}, {User: "bob"}}, res)
		c, ok := d.UserScramCredential("alice", ScramSHA256)
		require.True(t, ok)
		require.Equal(t, NewScramCredential(ScramSHA256, alice.Salt, alice.SaltedPassword, 8192), c)
		_, ok = d.UserScramCredential("alice", ScramSHA512)
		require.False(t, ok)

		// Kafka's errors, each for its user; the rest applied.
		res, err = d.AlterUserScramCredentials(ctx,
			[]ScramDeletion{{"bob", ScramSHA512}, {"carol", ScramSHA256}, {"dave", ScramSHA256}, {"", ScramSHA256}},
			[]ScramUpsertion{
				mustUpsertion(t, "bob", ScramSHA256, "b2", 4096),
				mustUpsertion(t, "alice", ScramSHA512, "a2", 16384),
				{User: "carol", Mechanism: ScramSHA256, Iterations: 4096, Salt: []byte("s"), SaltedPassword: []byte("p")},
				{User: "erin", Mechanism: 0, Iterations: 4096, Salt: []byte("s"), SaltedPassword: []byte("p")},
				{User: "frank", Mechanism: ScramSHA256, Iterations: 4095, Salt: []byte("s"), SaltedPassword: []byte("p")},
				{User: "gina", Mechanism: ScramSHA256, Iterations: 16385, Salt: []byte("s"), SaltedPassword: []byte("p")},
				{User: "hank", Mechanism: ScramSHA256, Iterations: 4096, Salt: []byte("s")},
				{User: "ivy", Mechanism: ScramSHA256, Iterations: 4096, Salt: []byte("s"), SaltedPassword: []byte("p")},
				{User: "ivy", Mechanism: ScramSHA512, Iterations: 4096, Salt: []byte("s"), SaltedPassword: []byte("p")},
			})
		require.NoError(t, err)
		want := map[string]error{
			// bob: deleted and upserted; carol: failed by her deletion,
			// her upsertion is not looked at (as Kafka's controller).
			"bob": ErrDuplicateResource, "carol": ErrResourceNotFound, "dave": ErrResourceNotFound, "": ErrUnacceptableCredential,
			"alice": nil, "erin": ErrUnsupportedSASLMechanism, "frank": ErrUnacceptableCredential, "gina": ErrUnacceptableCredential,
			"hank": ErrUnacceptableCredential, "ivy": ErrDuplicateResource,
		}
		require.Len(t, res, len(want))
		for _, r := range res {
			if want[r.User] == nil {
				require.NoError(t, r.Err, r.User)
			} else {
				require.ErrorIs(t, r.Err, want[r.User], r.User)
			}
		}
		require.Contains(t, res[len(res)-1].Err.Error(), "A user credential cannot be altered twice in the same request")
		got := d.DescribeUserScramCredentials(nil)
		require.Equal(t, []UserScramCredentials{
			{User: "alice", Iterations: map[ScramMechanism]int32{ScramSHA256: 8192, ScramSHA512: 16384}},
			{User: "bob", Iterations: map[ScramMechanism]int32{ScramSHA512: 4096}},
		}, got)

		// Described by name: missing and duplicate names fail.
		got = d.DescribeUserScramCredentials([]string{"bob", "nobody", "alice", "bob"})
		require.Len(t, got, 3)
		require.ErrorIs(t, got[0].Err, ErrDuplicateResource)
		require.Equal(t, "bob", got[0].User)
		require.ErrorIs(t, got[1].Err, ErrResourceNotFound)
		require.Equal(t, "alice", got[2].User)
		require.NoError(t, got[2].Err)

		// Deleted; the last mechanism takes the user.
		res, err = d.AlterUserScramCredentials(ctx, []ScramDeletion{{"bob", ScramSHA512}, {"alice", ScramSHA256}}, nil)
		require.NoError(t, err)
		require.Equal(t, []UserScramResult{{User: "bob"}, {User: "alice"}}, res)
		require.NoError(t, d.Close())

		// Durable across a reopen.
		d, err = Open(ctx, path, cfg)
		require.NoError(t, err)
		require.Equal(t, []UserScramCredentials{{User: "alice", Iterations: map[ScramMechanism]int32{ScramSHA512: 16384}}}, d.DescribeUserScramCredentials(nil))
		require.NoError(t, d.Close())
		_, err = d.AlterUserScramCredentials(ctx, nil, []ScramUpsertion{alice})
		require.ErrorIs(t, err, ErrClosed)
	})
}

// TestScramStoreBound: many users cannot grow the store past its bound
// (which would leave a directory Open refuses); the alteration that would
// fails its users with ErrStoreFull and changes nothing.
func TestScramStoreBound(t *testing.T) {
	mem := newStoreFS(t)
	s, err := openScramCredentials(mem, storeTestDir)
	require.NoError(t, err)
	s.maxBytes = 4096
	up := func(user string) ScramUpsertion {
		return ScramUpsertion{User: user, Mechanism: ScramSHA256, Iterations: 4096, Salt: make([]byte, 32), SaltedPassword: []byte("p")}
	}
	long := strings.Repeat("x", 1000)
	for i := range 2 {
		res, err := s.alter(nil, []ScramUpsertion{up(long + strconv.Itoa(i))})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
	}
	res, err := s.alter(nil, []ScramUpsertion{up(long + "2"), up(long + "3")})
	require.NoError(t, err)
	for _, r := range res {
		require.ErrorIs(t, r.Err, ErrStoreFull)
	}
	_, ok := s.credential(long+"2", ScramSHA256)
	require.False(t, ok)
	stored, err := loadScramStore(mem, storeTestDir)
	require.NoError(t, err)
	require.Len(t, stored, 2)
	res, err = s.alter([]ScramDeletion{{long + "0", ScramSHA256}}, []ScramUpsertion{up(long + "2")})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	require.NoError(t, res[1].Err, "room again once one is removed")
}

func TestScramStoreCorrupt(t *testing.T) {
	key := `"` + b64(make([]byte, 32)) + `"`
	cred := func(its string) string {
		return `{"salt":"AA==","stored_key":` + key + `,"server_key":` + key + `,"iterations":` + its + `}`
	}
	for name, data := range map[string]string{
		"not json":        `{"version":1,"users":`,
		"no version":      `{"users":{}}`,
		"version 2":       `{"version":2,"users":{}}`,
		"unknown field":   `{"version":1,"users":{},"extra":1}`,
		"trailing data":   `{"version":1,"users":{}} {}`,
		"empty user":      `{"version":1,"users":{"":{"SCRAM-SHA-256":` + cred("4096") + `}}}`,
		"no credentials":  `{"version":1,"users":{"u":{}}}`,
		"mechanism":       `{"version":1,"users":{"u":{"SCRAM-SHA-1":` + cred("4096") + `}}}`,
		"short key":       `{"version":1,"users":{"u":{"SCRAM-SHA-512":` + cred("4096") + `}}}`,
		"few iterations":  `{"version":1,"users":{"u":{"SCRAM-SHA-256":` + cred("4095") + `}}}`,
		"many iterations": `{"version":1,"users":{"u":{"SCRAM-SHA-256":` + cred("16385") + `}}}`,
		"not base64":      `{"version":1,"users":{"u":{"SCRAM-SHA-256":{"salt":"!","stored_key":` + key + `,"server_key":` + key + `,"iterations":4096}}}}`,
	} {
		mem := newStoreFS(t)
		f, err := mem.Create(filepath.Join(storeTestDir, scramStoreFile))
		require.NoError(t, err)
		_, err = f.Write([]byte(data))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		_, err = loadScramStore(mem, storeTestDir)
		require.ErrorIs(t, err, ErrCorruptScramStore, name)
		var ce *CorruptStoreError
		require.ErrorAs(t, err, &ce, name)
		require.Equal(t, filepath.Join(storeTestDir, scramStoreFile), ce.File)

		cfg := DefaultConfig()
		cfg.FS = mem
		_, err = Open(context.Background(), storeTestDir, cfg)
		require.ErrorIs(t, err, ErrCorruptScramStore, name)
	}
	got, err := loadScramStore(newStoreFS(t), storeTestDir)
	require.NoError(t, err)
	require.Empty(t, got, "a missing store is empty")
}

// TestScramStoreCrash alters credentials, crashing (a CrashClone of the
// memory filesystem) before every filesystem operation of each alteration
// and after it: every crash leaves exactly the previous credentials or
// the new ones, and once the alteration returns the new ones survive.
func TestScramStoreCrash(t *testing.T) {
	mem := newStoreFS(t)
	ffs := vfs.NewFaultFS(mem)
	s, err := openScramCredentials(ffs, storeTestDir)
	require.NoError(t, err)
	var crashes []*vfs.MemFS
	ffs.OnOp(func(vfs.Op, string) { crashes = append(crashes, mem.CrashClone()) })
	steps := []struct {
		dels []ScramDeletion
		ups  []ScramUpsertion
	}{
		{ups: []ScramUpsertion{mustUpsertion(t, "a", ScramSHA256, "x", 4096), mustUpsertion(t, "b", ScramSHA512, "y", 4096)}},
		{dels: []ScramDeletion{{"a", ScramSHA256}}, ups: []ScramUpsertion{mustUpsertion(t, "b", ScramSHA256, "z", 8192)}},
		{dels: []ScramDeletion{{"b", ScramSHA512}}},
	}
	before := s.users
	for i, st := range steps {
		res, err := s.alter(st.dels, st.ups)
		require.NoError(t, err)
		for _, r := range res {
			require.NoError(t, r.Err)
		}
		after := s.users
		require.NotEmpty(t, crashes)
		sawBefore, sawAfter := false, false
		for j, crashed := range crashes {
			got, err := loadScramStore(crashed, storeTestDir)
			require.NoError(t, err, "step %d crash %d", i, j)
			switch {
			case equalScramUsers(got, before):
				require.False(t, sawAfter, "step %d crash %d went back", i, j)
				sawBefore = true
			case equalScramUsers(got, after):
				sawAfter = true
			default:
				t.Fatalf("step %d crash %d left %v", i, j, got)
			}
		}
		require.True(t, sawBefore, "step %d", i)
		got, err := loadScramStore(mem.CrashClone(), storeTestDir)
		require.NoError(t, err)
		require.True(t, equalScramUsers(got, after), "step %d durable once altered", i)
		crashes, before = nil, after
	}
}

func equalScramUsers(x, y scramUsers) bool {
	if len(x) != len(y) {
		return false
	}
	for u, cx := range x {
		cy, ok := y[u]
		if !ok || len(cx) != len(cy) {
			return false
		}
		for m, c := range cx {
			o, ok := cy[m]
			if !ok || b64(c.Salt) != b64(o.Salt) || b64(c.StoredKey) != b64(o.StoredKey) || b64(c.ServerKey) != b64(o.ServerKey) || c.Iterations != o.Iterations {
				return false
			}
		}
	}
	return true
}

// TestScramAlterFaults: a failed write changes nothing, in memory or
// (after a crash) on disk.
func TestScramAlterFaults(t *testing.T) {
	mem := newStoreFS(t)
	ffs := vfs.NewFaultFS(mem)
	s, err := openScramCredentials(ffs, storeTestDir)
	require.NoError(t, err)
	_, err = s.alter(nil, []ScramUpsertion{mustUpsertion(t, "a", ScramSHA256, "x", 4096)})
	require.NoError(t, err)
	want := s.users
	for _, op := range []vfs.Op{vfs.OpRemove, vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpClose, vfs.OpRename, vfs.OpSyncDir} {
		ffs.Inject(vfs.EIO(op, storeTestDir, 1))
		_, err = s.alter([]ScramDeletion{{"a", ScramSHA256}}, []ScramUpsertion{mustUpsertion(t, "b", ScramSHA256, "y", 4096)})
		require.ErrorIs(t, err, vfs.ErrInjected, op)
		ffs.Clear()
		require.True(t, equalScramUsers(want, s.users), op)
		for _, fsys := range []vfs.FS{mem, mem.CrashClone()} {
			got, err := loadScramStore(fsys, storeTestDir)
			require.NoError(t, err)
			require.True(t, equalScramUsers(want, got), op)
		}
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func pbkdf2Of(t *testing.T, password string, salt []byte, iterations int) []byte {
	t.Helper()
	k, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	require.NoError(t, err)
	return k
}
