package record

// Kafka's variable-length integers (ByteUtils in Kafka): zig-zag encoded, then
// unsigned LEB128. A varint decodes into an int32 and takes at most 5 bytes; a
// varlong into an int64 and at most 10. The decoders here are stricter than
// Kafka's in one way only: bits that do not fit the target type (which
// Kafka's reader silently drops and its writer never sets) are rejected.
// Non-minimal encodings within the byte limit are accepted, as Kafka accepts
// them.

const (
	maxVarintLen  = 5
	maxVarlongLen = 10
)

// appendVarint appends v zig-zag encoded.
func appendVarint(dst []byte, v int32) []byte {
	return appendUvarint64(dst, uint64(uint32((v<<1)^(v>>31))))
}

// appendVarlong appends v zig-zag encoded.
func appendVarlong(dst []byte, v int64) []byte {
	return appendUvarint64(dst, uint64((v<<1)^(v>>63)))
}

func appendUvarint64(dst []byte, u uint64) []byte {
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// varintLen returns the encoded size of the varint v.
func varintLen(v int32) int { return uvarintLen(uint64(uint32((v << 1) ^ (v >> 31)))) }

// varlongLen returns the encoded size of the varlong v.
func varlongLen(v int64) int { return uvarintLen(uint64((v << 1) ^ (v >> 63))) }

func uvarintLen(u uint64) int {
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// readVarint decodes a varint at b[pos:]. It returns the value and the
// position after it, or ok=false if the input ends, the encoding is longer
// than 5 bytes, or the value does not fit in 32 bits.
func readVarint(b []byte, pos int) (v int32, next int, ok bool) {
	if pos+1 < len(b) { // one- and two-byte fast paths
		if c := b[pos]; c < 0x80 {
			u := uint32(c)
			return int32(u>>1) ^ -int32(u&1), pos + 1, true
		} else if d := b[pos+1]; d < 0x80 {
			u := uint32(c&0x7f) | uint32(d)<<7
			return int32(u>>1) ^ -int32(u&1), pos + 2, true
		}
	} else if pos < len(b) && b[pos] < 0x80 {
		u := uint32(b[pos])
		return int32(u>>1) ^ -int32(u&1), pos + 1, true
	}
	var u uint32
	for i := 0; i < maxVarintLen; i++ {
		if pos+i >= len(b) {
			return 0, pos, false
		}
		c := b[pos+i]
		if i == maxVarintLen-1 && c > 0x0f { // continuation bit or bits past 32
			return 0, pos, false
		}
		u |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			return int32(u>>1) ^ -int32(u&1), pos + i + 1, true
		}
	}
	return 0, pos, false
}

// readVarlong decodes a varlong at b[pos:], with the same rules as
// readVarint for 10 bytes and 64 bits.
func readVarlong(b []byte, pos int) (v int64, next int, ok bool) {
	if pos < len(b) && b[pos] < 0x80 {
		u := uint64(b[pos])
		return int64(u>>1) ^ -int64(u&1), pos + 1, true
	}
	var u uint64
	for i := 0; i < maxVarlongLen; i++ {
		if pos+i >= len(b) {
			return 0, pos, false
		}
		c := b[pos+i]
		if i == maxVarlongLen-1 && c > 1 {
			return 0, pos, false
		}
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), pos + i + 1, true
		}
	}
	return 0, pos, false
}
