package compaction

import (
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// SlotBytes is what one entry of the [OffsetMap] costs: a 128-bit key hash
// and an int64 offset, as in Kafka's SkimpyOffsetMap (whose hash is MD5).
const SlotBytes = 24

// hashSeed seeds the second 64 bits of a key's hash. Any constant other
// than 0 (the first half's seed) would do; it is fixed so that results do
// not vary between runs.
const hashSeed = 0x9e3779b97f4a7c15

// OffsetMap is the cleaner's dedupe buffer: key → latest offset over the
// dirty section of a log, within a fixed memory budget (Kafka's
// log.cleaner.dedupe.buffer.size, shared by the cleaner threads).
//
// Keys are not stored: a key is represented by a 128-bit hash, two
// independently seeded xxhash64 sums. Two keys collide only if both sums
// collide; for n keys the chance of any collision in a round is about
// n²/2¹²⁹ (below 10⁻²⁶ for a billion keys), which is how Kafka's map (MD5,
// 128 bits) treats it too. A collision could make the cleaner drop the
// older key's live value; at these odds it is not confirmed against the log.
//
// The table is open-addressed with linear probing; an empty slot holds
// offset 0 (offsets are stored plus one). It holds at most
// slots × load factor keys ([OffsetMap.Full]).
//
// An OffsetMap is not safe for concurrent use.
type OffsetMap struct {
	budgetSlots int
	loadFactor  float64
	hashes      []uint64 // 2 per slot
	offsets     []int64  // offset+1; 0 = empty
	size        int
	maxSize     int
	latest      int64
	lookups     int64
	probes      int64
	digest      *xxhash.Digest
}

// NewOffsetMap returns a map whose table may use up to budgetBytes
// (SlotBytes per slot) and holds at most loadFactor of its slots. It
// allocates nothing until [OffsetMap.Reset].
func NewOffsetMap(budgetBytes int64, loadFactor float64) *OffsetMap {
	slots := budgetBytes / SlotBytes
	slots = min(slots, 1<<31-1)
	return &OffsetMap{budgetSlots: int(slots), loadFactor: loadFactor, latest: -1, digest: xxhash.NewWithSeed(hashSeed)}
}

// BudgetSlots returns the largest number of slots the budget allows.
func (m *OffsetMap) BudgetSlots() int { return m.budgetSlots }

// Reset empties the map and sizes its table for at most keys distinct keys
// (the offset span of the section to map is a bound), never beyond the
// budget: a small log does not cost the whole dedupe buffer.
func (m *OffsetMap) Reset(keys int64) {
	want := int64(float64(keys)/m.loadFactor) + 1
	slots := int(min(max(want, 16), int64(m.budgetSlots)))
	if slots > len(m.offsets) || slots < len(m.offsets)/4 {
		m.hashes = make([]uint64, 2*slots)
		m.offsets = make([]int64, slots)
	} else {
		m.hashes = m.hashes[:2*slots]
		m.offsets = m.offsets[:slots]
		clear(m.hashes)
		clear(m.offsets)
	}
	m.size = 0
	m.maxSize = max(int(float64(slots)*m.loadFactor), 1)
	m.maxSize = min(m.maxSize, slots-1)
	m.latest = -1
	m.lookups, m.probes = 0, 0
}

// Slots returns the table's current number of slots.
func (m *OffsetMap) Slots() int { return len(m.offsets) }

// MemoryBytes returns the bytes the table uses now.
func (m *OffsetMap) MemoryBytes() int64 { return int64(len(m.offsets)) * SlotBytes }

// Size returns the number of keys in the map.
func (m *OffsetMap) Size() int { return m.size }

// Full reports whether the map cannot take another new key.
func (m *OffsetMap) Full() bool { return m.size >= m.maxSize }

// Utilization returns size / slots.
func (m *OffsetMap) Utilization() float64 {
	if len(m.offsets) == 0 {
		return 0
	}
	return float64(m.size) / float64(len(m.offsets))
}

// LatestOffset returns the largest offset put into the map (or recorded
// with UpdateLatestOffset), -1 if none.
func (m *OffsetMap) LatestOffset() int64 { return m.latest }

// UpdateLatestOffset records that the map covers the log up to offset.
func (m *OffsetMap) UpdateLatestOffset(offset int64) { m.latest = max(m.latest, offset) }

func (m *OffsetMap) hash(key []byte) (uint64, uint64) {
	h1 := xxhash.Sum64(key)
	m.digest.ResetWithSeed(hashSeed)
	_, _ = m.digest.Write(key) // never fails
	return h1, m.digest.Sum64()
}

// slot returns the slot holding the key's hash, or the empty slot where it
// would go.
func (m *OffsetMap) slot(h1, h2 uint64) int {
	n := uint64(len(m.offsets))
	hi, _ := bits.Mul64(h1, n)
	i := int(hi)
	m.lookups++
	for {
		m.probes++
		if m.offsets[i] == 0 || (m.hashes[2*i] == h1 && m.hashes[2*i+1] == h2) {
			return i
		}
		i++
		if i == len(m.offsets) {
			i = 0
		}
	}
}

// Put records offset as the latest offset of key. It returns false, and
// changes nothing, when key is new and the map is full.
// REQUIRES: Reset was called.
func (m *OffsetMap) Put(key []byte, offset int64) bool {
	h1, h2 := m.hash(key)
	i := m.slot(h1, h2)
	if m.offsets[i] == 0 {
		if m.size >= m.maxSize {
			return false
		}
		m.size++
		m.hashes[2*i], m.hashes[2*i+1] = h1, h2
	}
	m.offsets[i] = offset + 1
	m.latest = max(m.latest, offset)
	return true
}

// Get returns the latest offset of key, or -1 if the map does not hold it.
func (m *OffsetMap) Get(key []byte) int64 {
	if len(m.offsets) == 0 {
		return -1
	}
	h1, h2 := m.hash(key)
	return m.offsets[m.slot(h1, h2)] - 1
}
