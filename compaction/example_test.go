package compaction_test

import (
	"fmt"

	"github.com/kafkalite/kafkalite/compaction"
)

// The offset map is the cleaner's first pass: key → latest offset over the
// dirty section, in a fixed memory budget (log.cleaner.dedupe.buffer.size).
// A record whose offset is below its key's latest is removed by the second
// pass. Logs are cleaned by the log directory's cleaner (log.Dir.CleanNow
// runs it at once); this shows the map on its own.
func ExampleOffsetMap() {
	m := compaction.NewOffsetMap(1<<20, 0.9) // a 1 MiB budget
	m.Reset(3)
	for off, key := range []string{"a", "b", "a", "c", "a"} {
		m.Put([]byte(key), int64(off))
	}
	for _, key := range []string{"a", "b", "c", "d"} {
		fmt.Printf("%s: latest offset %d\n", key, m.Get([]byte(key)))
	}
	fmt.Println("latest offset mapped:", m.LatestOffset())
	// Output:
	// a: latest offset 4
	// b: latest offset 1
	// c: latest offset 3
	// d: latest offset -1
	// latest offset mapped: 4
}
