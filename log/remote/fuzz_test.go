package remote_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/remote/remotetest"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// FuzzManifest replaces a stored copy's manifest with arbitrary bytes:
// every fetch returns a typed error or exactly the bytes that were copied,
// never a panic and never other bytes.
func FuzzManifest(f *testing.F) {
	for _, seed := range []string{"log 10000 1\n", "log x y\n", "", "index 80 5\nlog 10000 7\n", strings.Repeat("log 1 2\n", 600),
		"log -1 0\n", "log 99999999999999999999 1\n"} {
		f.Add([]byte(seed))
	}
	seg := remotetest.NewSegment("t", 0, 0, 10_000, false)
	f.Fuzz(func(t *testing.T, manifest []byte) {
		ctx := context.Background()
		mem := vfs.NewMem()
		store := remote.NewFileStore(mem, "/remote")
		if _, err := store.CopyLogSegmentData(ctx, seg.Meta, seg.Data()); err != nil {
			t.Fatal(err)
		}
		var name string
		for _, p := range remotetest.Files(mem, "/remote") {
			if strings.HasSuffix(p, ".manifest") {
				name = p
			}
		}
		w, err := mem.OpenReadWrite(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Truncate(0); err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteAt(manifest, 0); err != nil {
			t.Fatal(err)
		}
		w.Close()
		check := func(got []byte, err error, want []byte) {
			if err != nil {
				if !errors.Is(err, remote.ErrCorrupt) && !errors.Is(err, remote.ErrNotFound) && !errors.Is(err, remote.ErrStorage) &&
					!strings.Contains(err.Error(), "outside the segment") {
					t.Fatalf("untyped error %v for manifest %q", err, manifest)
				}
				return
			}
			if string(got) != string(want) {
				t.Fatalf("other bytes (%d, want %d) for manifest %q", len(got), len(want), manifest)
			}
		}
		got, err := remotetest.ReadAll(store.FetchLogSegment(ctx, seg.Meta, 0, -1))
		check(got, err, seg.Log)
		got, err = remotetest.ReadAll(store.FetchIndex(ctx, seg.Meta, remote.OffsetIndex))
		check(got, err, seg.Index)
		if err := store.DeleteLogSegmentData(ctx, seg.Meta); err != nil {
			t.Fatal(err)
		}
		if left := remotetest.Files(mem, filepath.Dir(name)); len(left) > 0 {
			t.Fatalf("left after the delete: %v", left)
		}
	})
}
