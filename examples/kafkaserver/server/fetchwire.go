package server

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/segment"
)

// chunk is a piece of a response frame: bytes, or a file slice whose
// batches are sent as they lie in the .log (sendfile(2) where the
// connection is a TCP socket), then released.
type chunk struct {
	b  []byte
	sl *segment.Slice
}

// releaseChunks releases the slices of chunks not written.
func releaseChunks(cs []chunk) {
	for _, c := range cs {
		if c.sl != nil {
			c.sl.Release()
		}
	}
}

// fetchEncoder writes a Fetch response frame (versions 4 to 18: 17 and 18
// changed only the request) field by field, as Kafka's FetchResponse
// schema orders them, so that a partition's records can be a file slice
// instead of bytes in memory.
// TestFetchEncoderMatchesKmsg checks it byte for byte against kmsg.
type fetchEncoder struct {
	flexible bool
	version  int16
	buf      []byte
	out      []chunk
}

func (e *fetchEncoder) i16(v int16) { e.buf = binary.BigEndian.AppendUint16(e.buf, uint16(v)) }
func (e *fetchEncoder) i32(v int32) { e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(v)) }
func (e *fetchEncoder) i64(v int64) { e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v)) }
func (e *fetchEncoder) tags()       { e.buf = append(e.buf, 0) }

// arrayLen writes an array's length (nil as null, -1, where nullable).
func (e *fetchEncoder) arrayLen(n int, isNil, nullable bool) {
	switch {
	case e.flexible && isNil && nullable:
		e.buf = binary.AppendUvarint(e.buf, 0)
	case e.flexible:
		e.buf = binary.AppendUvarint(e.buf, uint64(n)+1)
	case isNil && nullable:
		e.i32(-1)
	default:
		e.i32(int32(n))
	}
}

func (e *fetchEncoder) str(s string) {
	if e.flexible {
		e.buf = binary.AppendUvarint(e.buf, uint64(len(s))+1)
	} else {
		e.i16(int16(len(s)))
	}
	e.buf = append(e.buf, s...)
}

// records writes a partition's records: n bytes, inline or a slice.
func (e *fetchEncoder) records(b []byte, sl *segment.Slice) {
	n := len(b)
	if sl != nil {
		n = int(sl.Size)
	}
	if e.flexible {
		e.buf = binary.AppendUvarint(e.buf, uint64(n)+1)
	} else {
		e.i32(int32(n))
	}
	if sl == nil {
		e.buf = append(e.buf, b...)
		return
	}
	e.out = append(e.out, chunk{b: e.buf}, chunk{sl: sl})
	e.buf = nil
}

// encodeFetch encodes resp as a response frame for the request's
// correlation id; slices[i][j], when not nil, holds the records of topic
// i's partition j (its RecordBatches are then ignored).
func encodeFetch(version int16, correlation int32, resp *kmsg.FetchResponse, slices [][]*segment.Slice) []chunk {
	e := &fetchEncoder{flexible: version >= 12, version: version, buf: make([]byte, 4, 256)}
	e.i32(correlation)
	if e.flexible {
		e.tags() // the response header's tagged fields
	}
	e.i32(resp.ThrottleMillis)
	if version >= 7 {
		e.i16(resp.ErrorCode)
		e.i32(resp.SessionID)
	}
	e.arrayLen(len(resp.Topics), false, false)
	for i, t := range resp.Topics {
		if version >= 13 {
			e.buf = append(e.buf, t.TopicID[:]...)
		} else {
			e.str(t.Topic)
		}
		e.arrayLen(len(t.Partitions), false, false)
		for j, p := range t.Partitions {
			e.i32(p.Partition)
			e.i16(p.ErrorCode)
			e.i64(p.HighWatermark)
			e.i64(p.LastStableOffset)
			if version >= 5 {
				e.i64(p.LogStartOffset)
			}
			e.arrayLen(len(p.AbortedTransactions), p.AbortedTransactions == nil, true)
			for _, a := range p.AbortedTransactions {
				e.i64(a.ProducerID)
				e.i64(a.FirstOffset)
				if e.flexible {
					e.tags()
				}
			}
			if version >= 11 {
				e.i32(p.PreferredReadReplica)
			}
			var sl *segment.Slice
			if i < len(slices) && j < len(slices[i]) {
				sl = slices[i][j]
			}
			e.records(p.RecordBatches, sl)
			if e.flexible {
				e.partitionTags(p) // route.go: KIP-951's CurrentLeader
			}
		}
		if e.flexible {
			e.tags()
		}
	}
	if e.flexible {
		e.responseTags(resp) // route.go: KIP-951's NodeEndpoints
	}
	return e.finish()
}

// finish ends the frame: its chunks, the size written in front.
func (e *fetchEncoder) finish() []chunk {
	out := append(e.out, chunk{b: e.buf})
	size := 0
	for _, c := range out {
		if c.sl != nil {
			size += int(c.sl.Size)
		} else {
			size += len(c.b)
		}
	}
	binary.BigEndian.PutUint32(out[0].b, uint32(size-4))
	return out
}

// nullableStr writes a compact nullable string (flexible versions only).
func (e *fetchEncoder) nullableStr(s *string) {
	if s == nil {
		e.buf = binary.AppendUvarint(e.buf, 0)
		return
	}
	e.str(*s)
}

// recordSlices writes a partition's records that lie in file slices, one
// after the other, as one records field (flexible versions only).
func (e *fetchEncoder) recordSlices(sls []*segment.Slice) {
	n := 0
	for _, sl := range sls {
		n += int(sl.Size)
	}
	e.buf = binary.AppendUvarint(e.buf, uint64(n)+1)
	for _, sl := range sls {
		e.out = append(e.out, chunk{b: e.buf}, chunk{sl: sl})
		e.buf = nil
	}
}

// encodeShareFetch encodes a ShareFetch response (versions 1 and 2, which
// differ only in the request) as a response frame for the correlation id,
// field by field as Kafka's ShareFetchResponse schema orders them.
// slices[i][j], when not empty, holds the records of topic i's partition
// j (its Records are then ignored). TestShareFetchEncoderMatchesKmsg
// checks it byte for byte against kmsg.
func encodeShareFetch(correlation int32, resp *kmsg.ShareFetchResponse, slices [][][]*segment.Slice) []chunk {
	e := &fetchEncoder{flexible: true, buf: make([]byte, 4, 256)}
	e.i32(correlation)
	e.tags() // the response header's tagged fields
	e.i32(resp.ThrottleMillis)
	e.i16(resp.ErrorCode)
	e.nullableStr(resp.ErrorMessage)
	e.i32(resp.AcquisitionLockTimeoutMillis)
	e.arrayLen(len(resp.Topics), false, false)
	for i, t := range resp.Topics {
		e.buf = append(e.buf, t.TopicID[:]...)
		e.arrayLen(len(t.Partitions), false, false)
		for j, p := range t.Partitions {
			e.i32(p.Partition)
			e.i16(p.ErrorCode)
			e.nullableStr(p.ErrorMessage)
			e.i16(p.AcknowledgeErrorCode)
			e.nullableStr(p.AcknowledgeErrorMessage)
			e.i32(p.CurrentLeader.LeaderID)
			e.i32(p.CurrentLeader.LeaderEpoch)
			e.tags()
			var sls []*segment.Slice
			if i < len(slices) && j < len(slices[i]) {
				sls = slices[i][j]
			}
			switch {
			case len(sls) > 0:
				e.recordSlices(sls)
			case p.Records == nil:
				e.buf = binary.AppendUvarint(e.buf, 0)
			default:
				e.records(p.Records, nil)
			}
			e.arrayLen(len(p.AcquiredRecords), false, false)
			for _, a := range p.AcquiredRecords {
				e.i64(a.FirstOffset)
				e.i64(a.LastOffset)
				e.i16(a.DeliveryCount)
				e.tags()
			}
			e.tags()
		}
		e.tags()
	}
	e.arrayLen(len(resp.NodeEndpoints), false, false)
	for _, n := range resp.NodeEndpoints {
		e.i32(n.NodeID)
		e.str(n.Host)
		e.i32(n.Port)
		e.nullableStr(n.Rack)
		e.tags()
	}
	e.tags()
	return e.finish()
}
