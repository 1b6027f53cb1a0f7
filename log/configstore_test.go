package log

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

const storeTestDir = "/data"

// storeTestID returns a valid topic id derived from n.
func storeTestID(n byte) string {
	b := make([]byte, 16)
	for i := range b {
		b[i] = n + byte(i)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func storeTestTopics() map[string]topicMeta {
	return map[string]topicMeta{
		"orders":             {ID: storeTestID(1), Partitions: 3, Config: map[string]string{"retention.ms": "86400000"}},
		"compacted.topic":    {ID: storeTestID(2), Partitions: 1, Config: map[string]string{"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.1"}},
		"plain":              {ID: storeTestID(3), Partitions: 12, Config: map[string]string{}},
		"__consumer_offsets": {ID: storeTestID(4), Partitions: 50, Config: map[string]string{"cleanup.policy": "compact"}},
	}
}

// newStoreFS returns a memory filesystem with a durable, empty /data.
func newStoreFS(t *testing.T) *vfs.MemFS {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll(storeTestDir))
	require.NoError(t, mem.SyncDir("/"))
	return mem
}

func writeStoreFile(t *testing.T, fsys vfs.FS, data string) {
	f, err := fsys.Create(filepath.Join(storeTestDir, topicStoreFile))
	require.NoError(t, err)
	_, err = f.Write([]byte(data))
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func readStoreFile(t *testing.T, fsys vfs.FS) string {
	f, err := fsys.Open(filepath.Join(storeTestDir, topicStoreFile))
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	size, err := f.Size()
	require.NoError(t, err)
	b := make([]byte, size)
	_, err = f.ReadAt(b, 0)
	if err != nil {
		require.Equal(t, int64(len(b)), size)
	}
	return string(b)
}

func TestTopicStoreRoundTrip(t *testing.T) {
	mem := newStoreFS(t)
	topics := storeTestTopics()
	require.NoError(t, saveTopicStore(mem, storeTestDir, topics))
	got, err := loadTopicStore(mem, storeTestDir)
	require.NoError(t, err)
	require.Equal(t, topics, got)

	// Deterministic bytes, in the documented format.
	first := readStoreFile(t, mem)
	require.NoError(t, saveTopicStore(mem, storeTestDir, got))
	require.Equal(t, first, readStoreFile(t, mem))
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(first), &doc))
	require.Equal(t, float64(1), doc["version"])
	orders := doc["topics"].(map[string]any)["orders"].(map[string]any)
	require.Equal(t, map[string]any{"id": storeTestID(1), "partitions": float64(3),
		"config": map[string]any{"retention.ms": "86400000"}}, orders)

	// No temp file is left, and the store is the only file.
	entries, err := mem.List(storeTestDir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, topicStoreFile, entries[0].Name)

	// An empty store and a nil config.
	require.NoError(t, saveTopicStore(mem, storeTestDir, map[string]topicMeta{"t": {ID: storeTestID(9), Partitions: 1}}))
	got, err = loadTopicStore(mem, storeTestDir)
	require.NoError(t, err)
	require.Equal(t, map[string]topicMeta{"t": {ID: storeTestID(9), Partitions: 1, Config: map[string]string{}}}, got)
	require.NoError(t, saveTopicStore(mem, storeTestDir, nil))
	got, err = loadTopicStore(mem, storeTestDir)
	require.NoError(t, err)
	require.Empty(t, got)
	require.NotNil(t, got)
}

func TestTopicStoreOnDisk(t *testing.T) {
	dir := t.TempDir()
	topics := storeTestTopics()
	require.NoError(t, saveTopicStore(vfs.Default, dir, topics))
	got, err := loadTopicStore(vfs.Default, dir)
	require.NoError(t, err)
	require.Equal(t, topics, got)
}

func TestTopicStoreMissing(t *testing.T) {
	mem := newStoreFS(t)
	got, err := loadTopicStore(mem, storeTestDir)
	require.NoError(t, err)
	require.NotNil(t, got)
	require.Empty(t, got)

	// A missing directory reads as an empty store too (Open reports
	// fs.ErrNotExist either way); the Dir creates its directory first.
	got, err = loadTopicStore(mem, "/nowhere")
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestTopicStoreCorrupt(t *testing.T) {
	id := storeTestID(1)
	entry := func(name, body string) string {
		return fmt.Sprintf(`{"version":1,"topics":{%q:%s}}`, name, body)
	}
	tests := []struct{ name, data string }{
		{"empty file", ""},
		{"garbage", "\x00\x01garbage"},
		{"truncated", `{"version":1,"topics":{"orders":{"id":"` + id},
		{"json null", "null"},
		{"array", "[]"},
		{"no version", `{"topics":{}}`},
		{"version 0", `{"version":0,"topics":{}}`},
		{"version 2", `{"version":2,"topics":{}}`},
		{"version string", `{"version":"1","topics":{}}`},
		{"trailing data", `{"version":1,"topics":{}} {}`},
		{"trailing garbage", `{"version":1,"topics":{}}x`},
		{"unknown field", `{"version":1,"topics":{},"extra":true}`},
		{"unknown topic field", entry("orders", `{"id":"`+id+`","partitions":1,"replicas":3}`)},
		{"topics not an object", `{"version":1,"topics":[]}`},
		{"null topic", entry("orders", "null")},
		{"empty topic name", entry("", `{"id":"`+id+`","partitions":1}`)},
		{"path in topic name", entry("../etc", `{"id":"`+id+`","partitions":1}`)},
		{"no id", entry("orders", `{"partitions":1}`)},
		{"short id", entry("orders", `{"id":"AAAA","partitions":1}`)},
		{"padded id", entry("orders", `{"id":"`+base64.URLEncoding.EncodeToString(make([]byte, 16))+`","partitions":1}`)},
		{"zero id", entry("orders", `{"id":"AAAAAAAAAAAAAAAAAAAAAA","partitions":1}`)},
		{"standard base64 id", entry("orders", `{"id":"+/+/+/+/+/+/+/+/+/+/+w","partitions":1}`)},
		{"non-canonical id", entry("orders", `{"id":"AAAAAAAAAAAAAAAAAAAAAB","partitions":1}`)},
		{"no partitions", entry("orders", `{"id":"`+id+`"}`)},
		{"zero partitions", entry("orders", `{"id":"`+id+`","partitions":0}`)},
		{"negative partitions", entry("orders", `{"id":"`+id+`","partitions":-1}`)},
		{"too many partitions", entry("orders", `{"id":"`+id+`","partitions":2147483648}`)},
		{"fractional partitions", entry("orders", `{"id":"`+id+`","partitions":1.5}`)},
		{"config value not a string", entry("orders", `{"id":"`+id+`","partitions":1,"config":{"retention.ms":1000}}`)},
		{"config empty name", entry("orders", `{"id":"`+id+`","partitions":1,"config":{"":"x"}}`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := newStoreFS(t)
			writeStoreFile(t, mem, tc.data)
			got, err := loadTopicStore(mem, storeTestDir)
			require.Nil(t, got)
			require.ErrorIs(t, err, ErrCorruptTopicStore)
			var ce *CorruptStoreError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, filepath.Join(storeTestDir, topicStoreFile), ce.File)
			require.Contains(t, err.Error(), topicStoreFile)
		})
	}

	t.Run("too large", func(t *testing.T) {
		mem := newStoreFS(t)
		f, err := mem.Create(filepath.Join(storeTestDir, topicStoreFile))
		require.NoError(t, err)
		require.NoError(t, f.Truncate(maxTopicStoreBytes+1)) // sparse in a MemFS
		require.NoError(t, f.Close())
		_, err = loadTopicStore(mem, storeTestDir)
		require.ErrorIs(t, err, ErrCorruptTopicStore)
	})
}

func TestTopicStoreLoadIOError(t *testing.T) {
	mem := newStoreFS(t)
	require.NoError(t, saveTopicStore(mem, storeTestDir, storeTestTopics()))
	ffs := vfs.NewFaultFS(mem)
	ffs.Inject(vfs.EIO(vfs.OpRead, topicStoreFile, 1))
	_, err := loadTopicStore(ffs, storeTestDir)
	require.ErrorIs(t, err, vfs.ErrInjected)
	require.NotErrorIs(t, err, ErrCorruptTopicStore)
}

func TestTopicStoreSaveRefusesInvalid(t *testing.T) {
	tests := map[string]map[string]topicMeta{
		"bad name":         {"a/b": {ID: storeTestID(1), Partitions: 1}},
		"no id":            {"orders": {Partitions: 1}},
		"bad id":           {"orders": {ID: "not-an-id", Partitions: 1}},
		"no partitions":    {"orders": {ID: storeTestID(1)}},
		"empty prop name":  {"orders": {ID: storeTestID(1), Partitions: 1, Config: map[string]string{"": "x"}}},
		"one bad of many":  {"orders": {ID: storeTestID(1), Partitions: 1}, "..": {ID: storeTestID(2), Partitions: 1}},
		"internal invalid": {"__consumer_offsets": {ID: storeTestID(1), Partitions: -5}},
	}
	for name, topics := range tests {
		t.Run(name, func(t *testing.T) {
			mem := newStoreFS(t)
			require.NoError(t, saveTopicStore(mem, storeTestDir, storeTestTopics()))
			before := readStoreFile(t, mem)
			require.Error(t, saveTopicStore(mem, storeTestDir, topics))
			require.Equal(t, before, readStoreFile(t, mem), "the store is untouched")
		})
	}
}

func TestTopicStoreReplacesStaleTmp(t *testing.T) {
	mem := newStoreFS(t)
	f, err := mem.Create(filepath.Join(storeTestDir, topicStoreTmpFile))
	require.NoError(t, err)
	_, err = f.Write([]byte("stale garbage from a crash"))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	require.NoError(t, saveTopicStore(mem, storeTestDir, storeTestTopics()))
	_, err = mem.Stat(filepath.Join(storeTestDir, topicStoreTmpFile))
	require.ErrorIs(t, err, fs.ErrNotExist)
	got, err := loadTopicStore(mem, storeTestDir)
	require.NoError(t, err)
	require.Equal(t, storeTestTopics(), got)
}

// TestTopicStoreCrash saves store A durably, then store B, crashing (a
// CrashClone of the memory filesystem) before every filesystem operation of
// each save and after it: every crash leaves exactly the previous store or
// the new one, never a mixture or a corrupt file, and once a save returns
// the new store survives.
func TestTopicStoreCrash(t *testing.T) {
	a := storeTestTopics()
	b := storeTestTopics()
	delete(b, "plain")
	b["orders"] = topicMeta{ID: storeTestID(1), Partitions: 6, Config: map[string]string{}}
	b["new-topic"] = topicMeta{ID: storeTestID(7), Partitions: 2, Config: map[string]string{"segment.bytes": "1048576"}}
	empty := map[string]topicMeta{}

	mem := newStoreFS(t)
	ffs := vfs.NewFaultFS(mem)
	var crashes []*vfs.MemFS
	ffs.OnOp(func(vfs.Op, string) { crashes = append(crashes, mem.CrashClone()) })

	check := func(step string, before, after map[string]topicMeta) {
		t.Helper()
		require.NotEmpty(t, crashes)
		sawBefore, sawAfter := false, false
		for i, c := range crashes {
			got, err := loadTopicStore(c, storeTestDir)
			require.NoError(t, err, "%s: crash %d", step, i)
			switch {
			case equalStores(got, before):
				require.False(t, sawAfter, "%s: crash %d went back to the old store", step, i)
				sawBefore = true
			case equalStores(got, after):
				sawAfter = true
			default:
				t.Fatalf("%s: crash %d left %v", step, i, got)
			}
		}
		require.True(t, sawBefore, "%s: some crash before the save is durable", step)
		got, err := loadTopicStore(mem.CrashClone(), storeTestDir)
		require.NoError(t, err)
		require.Equal(t, after, got, "%s: durable once saved", step)
		crashes = nil
	}

	require.NoError(t, saveTopicStore(ffs, storeTestDir, a))
	check("first save", empty, a)
	require.NoError(t, saveTopicStore(ffs, storeTestDir, b))
	check("second save", a, b)
	// A crash while a stale temp file is around changes nothing either.
	require.NoError(t, saveTopicStore(ffs, storeTestDir, a))
	check("third save", b, a)
}

func equalStores(x, y map[string]topicMeta) bool {
	if len(x) != len(y) {
		return false
	}
	for k, v := range x {
		w, ok := y[k]
		if !ok || v.ID != w.ID || v.Partitions != w.Partitions || len(v.Config) != len(w.Config) {
			return false
		}
		for ck, cv := range v.Config {
			if wv, ok := w.Config[ck]; !ok || wv != cv {
				return false
			}
		}
	}
	return true
}

// TestTopicStoreSaveFaults fails each filesystem operation of a save in
// turn: the save reports the error, and the store, read now or after a
// crash, is the old one or the new one.
func TestTopicStoreSaveFaults(t *testing.T) {
	a, b := storeTestTopics(), map[string]topicMeta{"only": {ID: storeTestID(5), Partitions: 1, Config: map[string]string{}}}
	for _, op := range []vfs.Op{vfs.OpRemove, vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpClose, vfs.OpRename, vfs.OpSyncDir} {
		t.Run(op.String(), func(t *testing.T) {
			mem := newStoreFS(t)
			require.NoError(t, saveTopicStore(mem, storeTestDir, a))
			ffs := vfs.NewFaultFS(mem)
			ffs.Inject(vfs.EIO(op, storeTestDir, 1))
			err := saveTopicStore(ffs, storeTestDir, b)
			require.ErrorIs(t, err, vfs.ErrInjected)
			for _, fsys := range []vfs.FS{mem, mem.CrashClone()} {
				got, err := loadTopicStore(fsys, storeTestDir)
				require.NoError(t, err)
				require.True(t, equalStores(got, a) || equalStores(got, b), "%v", got)
			}
			if op == vfs.OpWrite || op == vfs.OpSync {
				_, err := mem.Stat(filepath.Join(storeTestDir, topicStoreTmpFile))
				require.ErrorIs(t, err, fs.ErrNotExist, "the temp file is cleaned up")
			}
			// The next save succeeds.
			require.NoError(t, saveTopicStore(mem, storeTestDir, b))
			got, err := loadTopicStore(mem, storeTestDir)
			require.NoError(t, err)
			require.Equal(t, b, got)
		})
	}
}

// FuzzTopicStore feeds arbitrary bytes to the loader. Invariants: it never
// panics; it returns either a store or an error matching
// ErrCorruptTopicStore; a store it returns saves and loads back equal, and
// saving that again gives the same bytes.
func FuzzTopicStore(f *testing.F) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll(storeTestDir); err != nil {
		f.Fatal(err)
	}
	if err := saveTopicStore(mem, storeTestDir, storeTestTopics()); err != nil {
		f.Fatal(err)
	}
	seed, err := mem.Open(filepath.Join(storeTestDir, topicStoreFile))
	if err != nil {
		f.Fatal(err)
	}
	size, _ := seed.Size()
	buf := make([]byte, size)
	_, _ = seed.ReadAt(buf, 0)
	_ = seed.Close()
	f.Add(buf)
	f.Add([]byte(`{"version":1,"topics":{}}`))
	f.Add([]byte(`{"version":1,"topics":{"a":{"id":"` + storeTestID(1) + `","partitions":1,"config":{"x":"y"}}}}`))
	f.Add([]byte(`{"version":1,"topics":{"a":null}}`))
	f.Add([]byte(`{"Version":1,"TOPICS":{}}`))
	f.Add([]byte("null"))
	f.Add([]byte(""))
	f.Add([]byte("\xff\xfe{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeTopicStore("fuzz", data)
		if err != nil {
			require.ErrorIs(t, err, ErrCorruptTopicStore)
			require.Nil(t, got)
			return
		}
		fsys := vfs.NewMem()
		require.NoError(t, fsys.MkdirAll(storeTestDir))
		require.NoError(t, saveTopicStore(fsys, storeTestDir, got))
		first := readStoreFile(t, fsys)
		again, err := loadTopicStore(fsys, storeTestDir)
		require.NoError(t, err)
		require.Equal(t, got, again)
		require.NoError(t, saveTopicStore(fsys, storeTestDir, again))
		require.Equal(t, first, readStoreFile(t, fsys))
		for name := range got {
			require.NoError(t, ValidateTopicName(name))
			require.False(t, strings.ContainsAny(name, `/\`))
		}
	})
}

func TestTopicStoreErrorMessage(t *testing.T) {
	cause := errors.New("boom")
	e := &CorruptStoreError{Store: ErrCorruptTopicStore, File: "/d/kafkalite-topics.json", Reason: "bad", Err: cause}
	require.Equal(t, "log: corrupt topic store /d/kafkalite-topics.json: bad", e.Error())
	require.ErrorIs(t, e, ErrCorruptTopicStore)
	require.ErrorIs(t, e, cause)
}
