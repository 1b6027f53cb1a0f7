package index_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// Example_offsetIndex builds the offset index of a segment whose base offset
// is 1000, rolls it, and looks offsets up as a fetch would.
func Example_offsetIndex() {
	dir, err := os.MkdirTemp("", "kafkalite-index-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "00000000000000001000.index")

	ix, err := index.CreateOffsetIndex(vfs.Default, name, 1000, index.DefaultMaxIndexBytes)
	if err != nil {
		log.Fatal(err)
	}
	// One entry per ~4 KiB of batches: (last offset of the batch, its position).
	for _, e := range []index.OffsetPosition{{Offset: 1031, Position: 4160}, {Offset: 1065, Position: 8375}} {
		if err := ix.Append(e.Offset, e.Position); err != nil {
			log.Fatal(err)
		}
	}
	// Roll: trim to the entries in use, make durable, close.
	if err := ix.TrimToValidSize(); err != nil {
		log.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		log.Fatal(err)
	}

	ix, err = index.OpenOffsetIndex(vfs.Default, name, 1000, index.DefaultMaxIndexBytes, index.ReadOnly)
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	if err := ix.SanityCheck(); err != nil {
		log.Fatal(err) // a segment would rebuild the index from the .log
	}
	for _, target := range []int64{1000, 1040, 1065, 2000} {
		e, err := ix.Lookup(target)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("offset %d: scan the .log from %v\n", target, e)
	}
	// Output:
	// offset 1000: scan the .log from 1000@0
	// offset 1040: scan the .log from 1031@4160
	// offset 1065: scan the .log from 1065@8375
	// offset 2000: scan the .log from 1065@8375
}

// Example_timeIndex shows the time index's filling rules: equal timestamps
// are skipped and the roll entry takes the reserved last slot.
func Example_timeIndex() {
	fsys := vfs.NewMem()
	// Room for 3 entries: IsFull at 2, the third slot is the roll entry's.
	ix, err := index.CreateTimeIndex(fsys, "00000000000000000000.timeindex", 0, 3*index.TimeIndexEntryBytes)
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	for _, e := range []index.TimestampOffset{{Timestamp: 100, Offset: 9}, {Timestamp: 100, Offset: 20}, {Timestamp: 150, Offset: 31}} {
		if err := ix.MaybeAppend(e.Timestamp, e.Offset, false); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("entries:", ix.Entries(), "full:", ix.IsFull())
	// On roll: (segment max timestamp, its offset), skipping the full check.
	if err := ix.MaybeAppend(180, 40, true); err != nil {
		log.Fatal(err)
	}
	e, err := ix.Lookup(170)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("entries:", ix.Entries(), "lookup 170:", e)
	// Output:
	// entries: 2 full: true
	// entries: 3 lookup 170: 150:31
}
