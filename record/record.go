package record

import "bytes"

// Header is a record header. Kafka's header keys are UTF-8 strings and never
// null; values may be null (nil) or empty (non-nil, zero length).
type Header struct {
	Key   []byte
	Value []byte
}

// Record is one record of a batch, with the offset and timestamp its batch
// gives it. Key and Value are nil for null and non-nil (possibly empty)
// otherwise; a null value is a tombstone on compacted topics.
//
// A Record returned by a [Reader] references the Reader's buffers (the batch
// bytes, or the decompressed section): it is valid until the Reader's next
// Reset, and its Headers slice until the next call to Next. Use [Record.Clone]
// to keep one.
type Record struct {
	// Offset is the batch's base offset plus OffsetDelta.
	Offset int64
	// Timestamp is the batch's base timestamp plus TimestampDelta, or the
	// batch's max timestamp for LogAppendTime batches.
	Timestamp int64
	Key       []byte
	Value     []byte
	Headers   []Header
	// Attributes is the record-level attributes byte; Kafka writes 0.
	Attributes int8
	// OffsetDelta and TimestampDelta are the values stored in the record.
	OffsetDelta    int32
	TimestampDelta int64
}

// Clone returns a deep copy of r that shares no memory with any buffer,
// keeping null and empty distinct.
func (r *Record) Clone() Record {
	c := *r
	c.Key = cloneBytes(r.Key)
	c.Value = cloneBytes(r.Value)
	if r.Headers != nil {
		c.Headers = make([]Header, len(r.Headers))
		for i, h := range r.Headers {
			c.Headers[i] = Header{Key: cloneBytes(h.Key), Value: cloneBytes(h.Value)}
		}
	}
	return c
}

// Equal reports whether two records have the same offset, timestamp,
// attributes, key, value and headers, with null distinct from empty.
func (r *Record) Equal(o *Record) bool {
	if r.Offset != o.Offset || r.Timestamp != o.Timestamp || r.Attributes != o.Attributes ||
		!nullableEqual(r.Key, o.Key) || !nullableEqual(r.Value, o.Value) || len(r.Headers) != len(o.Headers) {
		return false
	}
	for i := range r.Headers {
		if !nullableEqual(r.Headers[i].Key, o.Headers[i].Key) || !nullableEqual(r.Headers[i].Value, o.Headers[i].Value) {
			return false
		}
	}
	return true
}

func nullableEqual(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// encodedBodyLen returns the size of a record's body (everything after its
// length varint).
func encodedBodyLen(offsetDelta int32, timestampDelta int64, key, value []byte, headers []Header) int {
	n := 1 + varlongLen(timestampDelta) + varintLen(offsetDelta) + bytesLen(key) + bytesLen(value) + varintLen(int32(len(headers)))
	for i := range headers {
		n += bytesLen(headers[i].Key) + bytesLen(headers[i].Value)
	}
	return n
}

func bytesLen(b []byte) int {
	if b == nil {
		return 1
	}
	return varintLen(int32(len(b))) + len(b)
}

// appendRecord appends one record (length varint and body) to dst.
func appendRecord(dst []byte, bodyLen int, offsetDelta int32, timestampDelta int64, key, value []byte, headers []Header) []byte {
	dst = appendVarint(dst, int32(bodyLen))
	dst = append(dst, 0) // attributes
	dst = appendVarlong(dst, timestampDelta)
	dst = appendVarint(dst, offsetDelta)
	dst = appendBytes(dst, key)
	dst = appendBytes(dst, value)
	dst = appendVarint(dst, int32(len(headers)))
	for i := range headers {
		dst = appendBytes(dst, headers[i].Key)
		dst = appendBytes(dst, headers[i].Value)
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return append(dst, 1) // varint -1
	}
	return append(appendVarint(dst, int32(len(b))), b...)
}
