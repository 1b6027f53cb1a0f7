package vfs_test

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// A crash test: run a workload through a FaultFS over a MemFS and crash-clone
// the MemFS at every sync point, then at the end. Each clone is what a power
// loss at that moment would leave.
func Example_crashAtEverySyncPoint() {
	mem := vfs.NewMem()
	fsys := vfs.NewFaultFS(mem)
	var crashes []*vfs.MemFS
	fsys.OnOp(func(op vfs.Op, path string) {
		if op == vfs.OpSync || op == vfs.OpSyncDir {
			crashes = append(crashes, mem.CrashClone()) // just before the sync
		}
	})

	must(fsys.MkdirAll("/log"))
	must(fsys.SyncDir("/")) // makes /log durable
	f, err := fsys.Create("/log/00000000000000000000.log")
	must(err)
	must(fsys.SyncDir("/log")) // makes the new file's name durable
	for _, batch := range []string{"a", "b"} {
		_, err := f.Write([]byte(batch))
		must(err)
		must(f.Sync())
	}
	must(f.Close())
	crashes = append(crashes, mem.CrashClone())

	for i, c := range crashes {
		fmt.Printf("crash %d: %s\n", i, describe(c, "/log/00000000000000000000.log"))
	}
	// Output:
	// crash 0: no /log
	// crash 1: no segment
	// crash 2: segment ""
	// crash 3: segment "a"
	// crash 4: segment "ab"
}

func describe(fsys vfs.FS, name string) string {
	if _, err := fsys.Stat("/log"); err != nil {
		return "no /log"
	}
	f, err := fsys.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "no segment"
	}
	must(err)
	defer func() { must(f.Close()) }()
	size, err := f.Size()
	must(err)
	buf := make([]byte, size)
	_, err = f.ReadAt(buf, 0)
	must(err)
	return fmt.Sprintf("segment %q", buf)
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
