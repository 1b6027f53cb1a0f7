package assignor

import (
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// Kafka's assignors run on the JVM, and a few of their tie-breaks are
// orders of the JVM rather than of the algorithm: String.compareTo (UTF-16
// code units, not bytes), String.hashCode, TopicPartition.hashCode and the
// iteration order of java.util.HashMap and HashSet. This file reproduces
// those orders so that results match Kafka's exactly; javaorder_test.go
// checks them against a JDK when one is installed.

// javaCompare compares a and b as java.lang.String.compareTo does: by UTF-16
// code units, then by length. It returns -1, 0 or +1. For strings without
// runes at or above U+E000 it agrees with Go's byte order; it differs only
// where a supplementary character (a surrogate pair, 0xD800..0xDBFF first)
// meets a BMP character in U+E000..U+FFFF.
func javaCompare(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		switch {
		case len(a) < len(b):
			return -1
		case len(a) > len(b):
			return 1
		}
		return 0
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		return cmpInt(int(a[i]), int(b[i]))
	}
	// Back up to the start of the rune the difference is in: the prefix up
	// to there is identical, so both strings have a rune boundary there.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	if c := cmpInt(int(firstUTF16Unit(ra)), int(firstUTF16Unit(rb))); c != 0 {
		return c
	}
	// Both supplementary with the same high surrogate: the low surrogates
	// order as the code points do.
	return cmpInt(int(ra), int(rb))
}

// firstUTF16Unit returns the first UTF-16 code unit of r.
func firstUTF16Unit(r rune) rune {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// javaStringHash is java.lang.String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over the UTF-16 code units of s, in wrapping int32 arithmetic. Invalid
// UTF-8 counts as U+FFFD per bad byte.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + hi
			h = 31*h + lo
			continue
		}
		h = 31*h + r
	}
	return h
}

// topicPartitionHash is org.apache.kafka.common.TopicPartition.hashCode:
// 31 * (31 + partition) + topic.hashCode(), wrapping.
func topicPartitionHash(topicHash int32, partition int32) int32 {
	return 31*(31+partition) + topicHash
}

// javaHashMapCapacity returns the table size of a java.util.HashMap made
// with the default constructor after n distinct keys were put into it: 16,
// doubled each time the size exceeds three quarters of the table.
// Tables never shrink, so n is the most keys the map ever held.
func javaHashMapCapacity(n int) int {
	c := 16
	for n > c/4*3 {
		c *= 2
	}
	return c
}

// javaBucket returns the bucket of a key with hash code h in a HashMap table
// of size capacity (a power of two): (h ^ h>>>16) & (capacity-1).
func javaBucket(h int32, capacity int) int {
	u := uint32(h)
	return int((u ^ u>>16) & uint32(capacity-1))
}

// javaHashMapOrder returns the order in which a java.util.HashMap made with
// the default constructor iterates keys put in the order of hashes
// (hashes[i] is the hash code of the i-th key put; the keys are distinct):
// by bucket, and within a bucket in insertion order (a resize splits a
// bucket's list keeping its order). The result holds indexes into hashes.
//
// Java turns a bucket of eight or more keys into a tree once the table has
// 64 buckets, and then orders that bucket differently; keys with such
// colliding hashes are not modelled.
func javaHashMapOrder(hashes []int32) []int {
	capacity := javaHashMapCapacity(len(hashes))
	order := make([]int, len(hashes))
	buckets := make([]int, len(hashes))
	for i, h := range hashes {
		order[i] = i
		buckets[i] = javaBucket(h, capacity)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpInt(buckets[a], buckets[b]) })
	return order
}

// javaPartitionSet models the iteration order of a java.util.HashSet of
// TopicPartitions made with the default constructor, for the one thing the
// sticky assignor asks of it: its first element. Elements are kept in
// insertion order; the first element is the one in the lowest bucket,
// earliest inserted among equals.
type javaPartitionSet struct {
	capacity int
	elems    []int32 // partition ids, in insertion order
	hashes   []int32 // TopicPartition hash codes, parallel to elems
}

func (s *javaPartitionSet) add(pid int32, hash int32) {
	if s.capacity == 0 {
		s.capacity = 16
	}
	s.elems = append(s.elems, pid)
	s.hashes = append(s.hashes, hash)
	if len(s.elems) > s.capacity/4*3 {
		s.capacity *= 2
	}
}

// remove removes pid and reports whether the set is now empty.
func (s *javaPartitionSet) remove(pid int32) bool {
	if i := slices.Index(s.elems, pid); i >= 0 {
		s.elems = slices.Delete(s.elems, i, i+1)
		s.hashes = slices.Delete(s.hashes, i, i+1)
	}
	return len(s.elems) == 0
}

// first returns the element a Java iterator returns first.
// REQUIRES: the set is not empty.
func (s *javaPartitionSet) first() int32 {
	best, bestBucket := 0, javaBucket(s.hashes[0], s.capacity)
	for i := 1; i < len(s.elems) && bestBucket > 0; i++ {
		if b := javaBucket(s.hashes[i], s.capacity); b < bestBucket {
			best, bestBucket = i, b
		}
	}
	return s.elems[best]
}
