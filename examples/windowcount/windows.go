package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Event is an input event: JSON {"type": ..., "ts": <ms>} in the source
// topic, keyed by its type.
type Event struct {
	Type string `json:"type"`
	TS   int64  `json:"ts"`
}

// Result is an emitted window count: JSON in the results topic, keyed by
// its type.
type Result struct {
	Type  string `json:"type"`
	Start int64  `json:"start"` // ms, inclusive
	End   int64  `json:"end"`   // ms, exclusive
	Count int64  `json:"count"`
}

// Windows configures the windowing: tumbling windows of Size milliseconds
// (aligned to the epoch), and a watermark Lateness milliseconds behind the
// largest event time seen (bounded out-of-orderness).
type Windows struct {
	Size, Lateness int64
}

// WindowKey names one count: a window, by its start, and an event type. Its
// String is the key of the count in the changelog.
type WindowKey struct {
	Start int64
	Type  string
}

// String returns "<start>/<type>".
func (k WindowKey) String() string { return strconv.FormatInt(k.Start, 10) + "/" + k.Type }

// ParseWindowKey parses WindowKey.String.
func ParseWindowKey(s string) (WindowKey, error) {
	start, typ, ok := strings.Cut(s, "/")
	if !ok {
		return WindowKey{}, fmt.Errorf("window key %q: no '/'", s)
	}
	n, err := strconv.ParseInt(start, 10, 64)
	if err != nil {
		return WindowKey{}, fmt.Errorf("window key %q: %w", s, err)
	}
	return WindowKey{Start: n, Type: typ}, nil
}

// noTime is the event time and watermark of a task that has seen no event.
const noTime = math.MinInt64

// task is the windowing state of one source partition, as Kafka Streams
// keeps a task per partition: its stream time (the largest event time seen),
// the counts of the windows not yet emitted, and the counts changed since
// the last changelog write.
//
// For each event, in offset order:
//
//  1. its window is [start, start+Size), start = ts rounded down to Size;
//  2. if the window's end is at or below the watermark, the window was
//     emitted already: the event is late (and changes nothing);
//  3. otherwise the window's count goes up by one, the stream time moves
//     to the event's time if that is larger, and every window whose end
//     the new watermark (stream time − Lateness) reached is emitted, in
//     order of end then type, and forgotten.
//
// So each window is emitted once, when the watermark passes its end, and an
// event arriving after that is late. A task is not safe for concurrent use.
type task struct {
	cfg    Windows
	maxTS  int64               // stream time; noTime before the first event
	counts map[WindowKey]int64 // open windows
	dirty  map[WindowKey]bool  // changed since takeChanges
}

func newTask(cfg Windows, maxTS int64, counts map[WindowKey]int64) *task {
	if counts == nil {
		counts = map[WindowKey]int64{}
	}
	return &task{cfg: cfg, maxTS: maxTS, counts: counts, dirty: map[WindowKey]bool{}}
}

// watermark returns the task's watermark: no event at or below it can
// still be counted.
func (t *task) watermark() int64 {
	if t.maxTS == noTime {
		return noTime
	}
	return t.maxTS - t.cfg.Lateness
}

// windowStart rounds ts down to a multiple of the window size.
func (t *task) windowStart(ts int64) int64 {
	start := ts - ts%t.cfg.Size
	if ts%t.cfg.Size < 0 {
		start -= t.cfg.Size
	}
	return start
}

// process applies one event. It returns whether the event was late, and the
// windows the event's watermark closed.
func (t *task) process(ev Event) (late bool, emitted []Result) {
	key := WindowKey{Start: t.windowStart(ev.TS), Type: ev.Type}
	if key.Start+t.cfg.Size <= t.watermark() {
		return true, nil
	}
	t.counts[key]++
	t.dirty[key] = true
	t.maxTS = max(t.maxTS, ev.TS)
	wm := t.watermark()
	for k, n := range t.counts {
		if k.Start+t.cfg.Size <= wm {
			emitted = append(emitted, Result{Type: k.Type, Start: k.Start, End: k.Start + t.cfg.Size, Count: n})
			delete(t.counts, k)
			t.dirty[k] = true
		}
	}
	slices.SortFunc(emitted, func(a, b Result) int {
		return cmp.Or(cmp.Compare(a.End, b.End), cmp.Compare(a.Type, b.Type))
	})
	return false, emitted
}

// change is a changelog update: a window's count, or its removal.
type change struct {
	Key     WindowKey
	Count   int64
	Deleted bool
}

// takeChanges returns the counts changed since the last call, sorted by
// key, each with its latest value (a window counted and emitted in between
// is a removal), and forgets them.
func (t *task) takeChanges() []change {
	out := make([]change, 0, len(t.dirty))
	for k := range t.dirty {
		n, ok := t.counts[k]
		out = append(out, change{Key: k, Count: n, Deleted: !ok})
	}
	clear(t.dirty)
	slices.SortFunc(out, func(a, b change) int {
		return cmp.Or(cmp.Compare(a.Key.Start, b.Key.Start), cmp.Compare(a.Key.Type, b.Key.Type))
	})
	return out
}
