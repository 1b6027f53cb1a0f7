package log

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
	"github.com/stretchr/testify/require"
)

// Hostile input: what a network client could send a broker built on this
// library. Every case must be refused with a typed error (errors.Is
// against the packages' sentinels) and bounded memory, through
// record.NewReader, Log.Append, Log.AppendAsReplica and segment recovery.

// TestHostileTopicNames: names that try to leave the directory, or that a
// filesystem would mangle, are refused with ErrInvalidTopicName and create
// nothing.
func TestHostileTopicNames(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	for _, name := range []string{
		"", ".", "..", "../x", "..\\x", "a/b", "/abs", "a\\b", "x\x00y", "\x00", "tópico", "日本", "emoji-🙂",
		"a b", "tab\t", "new\nline", strings.Repeat("a", 250), "a:b", "a*b",
	} {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			before, err := e.mem.List("/data")
			require.NoError(t, err)
			_, err = d.CreateTopic(context.Background(), name, 1, nil)
			require.ErrorIs(t, err, ErrInvalidTopicName)
			after, err := e.mem.List("/data")
			require.NoError(t, err)
			require.Equal(t, before, after, "nothing created")
		})
	}
}

// hostileBase is a valid 3-record uncompressed batch (keys k0..k2, values
// of 8 bytes) to damage.
func hostileBase(t *testing.T) []byte {
	t.Helper()
	return producerBatch(t, 3, 8, 1_800_000_000_000, record.None)
}

// fixCRC rewrites a batch's length and CRC after its bytes were changed,
// so that the damage is what the decoder meets, not a CRC mismatch.
func fixCRC(b []byte) []byte {
	binary.BigEndian.PutUint32(b[8:12], uint32(len(b)-12))
	crc, err := record.ComputeCRC(b)
	if err == nil {
		binary.BigEndian.PutUint32(b[17:21], crc)
	}
	return b
}

const recordsAt = 61 // the records section of a v2 batch

// withRecords replaces a batch's records section and count.
func withRecords(base []byte, count int32, section []byte) []byte {
	b := append(bytes.Clone(base[:recordsAt]), section...)
	binary.BigEndian.PutUint32(b[57:61], uint32(count))
	return fixCRC(b)
}

// rawRecord encodes one record by hand: attributes, deltas, and the given
// key/value lengths and bytes, header count and header bytes.
func rawRecord(keyLen int64, key []byte, valueLen int64, value []byte, headerCount int64, headers []byte) []byte {
	var body []byte
	body = append(body, 0)                     // attributes
	body = binary.AppendVarint(body, 0)        // timestamp delta
	body = binary.AppendVarint(body, 0)        // offset delta
	body = binary.AppendVarint(body, keyLen)   // key length
	body = append(body, key...)                //
	body = binary.AppendVarint(body, valueLen) // value length
	body = append(body, value...)              //
	body = binary.AppendVarint(body, headerCount)
	body = append(body, headers...)
	return append(binary.AppendVarint(nil, int64(len(body))), body...)
}

// compressionBomb builds a batch of one record claiming codec whose
// records section decompresses to about total bytes: the compressed
// section of a 1 MiB record, repeated (every codec's reader accepts
// concatenated members, frames or streams).
func compressionBomb(t *testing.T, codec record.Compression, total int) []byte {
	t.Helper()
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, Attributes: record.Attributes(0).WithCompression(codec),
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	require.NoError(t, b.Append(1_800_000_000_000, []byte("k"), make([]byte, 1<<20), nil))
	one, err := b.Build()
	require.NoError(t, err)
	one = bytes.Clone(one)
	section := bytes.Repeat(one[recordsAt:], total/(1<<20))
	return withRecords(one, 1, section)
}

type hostileCase struct {
	name  string
	batch func(t *testing.T) []byte
	// want: the decoder's error matches one of these.
	want []error
}

func hostileCases() []hostileCase {
	corrupt := []error{record.ErrCorrupt, record.ErrTruncated, record.ErrTooLarge}
	cases := []hostileCase{
		{"length claims 2 GiB", func(t *testing.T) []byte {
			b := hostileBase(t)
			binary.BigEndian.PutUint32(b[8:12], 0x7fffffff)
			return b
		}, corrupt},
		{"negative length", func(t *testing.T) []byte {
			b := hostileBase(t)
			binary.BigEndian.PutUint32(b[8:12], 0xfffffff0)
			return b
		}, corrupt},
		{"length below the header", func(t *testing.T) []byte {
			b := hostileBase(t)
			binary.BigEndian.PutUint32(b[8:12], 20)
			return b
		}, corrupt},
		{"record count claims more", func(t *testing.T) []byte {
			b := hostileBase(t)
			binary.BigEndian.PutUint32(b[57:61], 1000)
			return fixCRC(b)
		}, corrupt},
		{"record count claims fewer", func(t *testing.T) []byte {
			b := hostileBase(t)
			binary.BigEndian.PutUint32(b[57:61], 1)
			return fixCRC(b)
		}, corrupt},
		{"record count claims max int32", func(t *testing.T) []byte {
			b := hostileBase(t)
			binary.BigEndian.PutUint32(b[57:61], 0x7fffffff)
			return fixCRC(b)
		}, corrupt},
		{"negative record count", func(t *testing.T) []byte {
			b := hostileBase(t)
			binary.BigEndian.PutUint32(b[57:61], 0xffffffff)
			return fixCRC(b)
		}, corrupt},
		{"huge varint", func(t *testing.T) []byte {
			return withRecords(hostileBase(t), 1, append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, make([]byte, 20)...))
		}, corrupt},
		{"record length past the batch", func(t *testing.T) []byte {
			return withRecords(hostileBase(t), 1, append(binary.AppendVarint(nil, 1<<30), make([]byte, 20)...))
		}, corrupt},
		{"key length past the batch", func(t *testing.T) []byte {
			return withRecords(hostileBase(t), 1, rawRecord(1<<30, []byte("k"), 1, []byte("v"), 0, nil))
		}, corrupt},
		{"value length past the batch", func(t *testing.T) []byte {
			return withRecords(hostileBase(t), 1, rawRecord(1, []byte("k"), 1<<30, []byte("v"), 0, nil))
		}, corrupt},
		{"negative key length below -1", func(t *testing.T) []byte {
			return withRecords(hostileBase(t), 1, rawRecord(-7, nil, 1, []byte("v"), 0, nil))
		}, corrupt},
		{"header count claims 2^31-1", func(t *testing.T) []byte {
			return withRecords(hostileBase(t), 1, rawRecord(1, []byte("k"), 1, []byte("v"), 1<<31-1, nil))
		}, corrupt},
		{"negative header count", func(t *testing.T) []byte {
			return withRecords(hostileBase(t), 1, rawRecord(1, []byte("k"), 1, []byte("v"), -5, nil))
		}, corrupt},
		{"header key length past the batch", func(t *testing.T) []byte {
			h := append(binary.AppendVarint(nil, 1<<29), 'x')
			return withRecords(hostileBase(t), 1, rawRecord(1, []byte("k"), 1, []byte("v"), 1, h))
		}, corrupt},
		{"unknown codec", func(t *testing.T) []byte {
			b := hostileBase(t)
			b[22] |= 7
			return fixCRC(b)
		}, corrupt},
		{"legacy magic", func(t *testing.T) []byte {
			b := hostileBase(t)
			b[16] = 1
			return b
		}, append(corrupt, record.ErrUnsupportedMagic)},
		{"CRC mismatch", func(t *testing.T) []byte {
			b := hostileBase(t)
			b[len(b)-1] ^= 0xff
			return b
		}, corrupt},
	}
	for _, codec := range []record.Compression{record.Gzip, record.Snappy, record.LZ4, record.Zstd} {
		cases = append(cases, hostileCase{fmt.Sprintf("%v bomb of 96 MiB", codec), func(t *testing.T) []byte {
			return compressionBomb(t, codec, 96<<20)
		}, corrupt})
	}
	return cases
}

// allocated runs f and returns the bytes it allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func matchesOne(err error, targets []error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// TestHostileBatchesReader decodes each hostile batch with a reader
// limited to 8 MiB of decompressed data: a typed error, and at most
// 4 × (the limit + the input) allocated.
func TestHostileBatchesReader(t *testing.T) {
	const limit = 8 << 20
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.batch(t)
			var err error
			alloc := allocated(func() {
				r := record.NewReader(record.ReaderOptions{MaxDecompressedBytes: limit})
				if err = r.Reset(b); err == nil {
					for r.Next() {
					}
					err = r.Err()
				}
			})
			require.Error(t, err)
			require.True(t, matchesOne(err, tc.want), "%v matches none of %v", err, tc.want)
			require.LessOrEqual(t, alloc, uint64(4*(limit+len(b))), "allocated %d bytes", alloc)
		})
	}
}

// TestHostileBatchesAppend offers each hostile batch to Log.Append: refused
// with a typed error, nothing written, the partition still accepting good
// batches, and memory bounded by 6 × the reader's default limit (64 MiB) plus
// the input. Log.AppendAsReplica checks, as Kafka's follower append does,
// the batch's framing (length, magic, CRC, offsets) and not the records
// under a valid CRC: a batch it accepts must then read back with a typed
// error, never a panic, with bounded memory.
func TestHostileBatchesAppend(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "h", 1, map[string]string{"max.message.bytes": "200000000", "segment.bytes": "1073741824"})
	typed := []error{record.ErrCorrupt, record.ErrTruncated, record.ErrTooLarge, record.ErrUnsupportedMagic,
		ErrInvalidRecord, ErrRecordTooLarge, ErrInvalidTimestamp}
	cases := append(hostileCases(), hostileCase{"offset delta past the records", func(t *testing.T) []byte {
		b := hostileBase(t)
		binary.BigEndian.PutUint32(b[23:27], 0x7fffffff) // lastOffsetDelta
		return fixCRC(b)
	}, nil})
	for _, tc := range cases {
		t.Run(tc.name+"/Append", func(t *testing.T) {
			l := partition(t, d, "h", 0)
			b := tc.batch(t)
			leo := l.LogEndOffset()
			var err error
			alloc := allocated(func() { _, err = l.Append(b) })
			require.Error(t, err)
			require.True(t, matchesOne(err, typed), "%v matches none of the typed errors", err)
			require.False(t, errors.Is(err, ErrStorage), "bad input is not a storage failure")
			require.Equal(t, leo, l.LogEndOffset(), "nothing written")
			require.LessOrEqual(t, alloc, uint64(6*(64<<20)+3*len(b)), "allocated %d bytes", alloc)
		})
		t.Run(tc.name+"/AppendAsReplica", func(t *testing.T) {
			_, err := d.CreateTopic(context.Background(), "r", 1, map[string]string{"max.message.bytes": "200000000", "segment.bytes": "1073741824"})
			require.NoError(t, err)
			defer func() { require.NoError(t, d.DeleteTopic(context.Background(), "r")) }()
			l := partition(t, d, "r", 0)
			b := tc.batch(t)
			_ = record.SetBaseOffset(b, 0)
			var aerr, rerr error
			alloc := allocated(func() {
				if _, aerr = l.AppendAsReplica(b); aerr == nil {
					_, rerr = l.ReadRecords(0, 1<<30, func(*record.Record, *record.BatchHeader) error { return nil })
				}
			})
			if aerr != nil {
				require.True(t, matchesOne(aerr, typed), "%v matches none of the typed errors", aerr)
				require.False(t, errors.Is(aerr, ErrStorage), "bad input is not a storage failure")
				require.Zero(t, l.LogEndOffset(), "nothing written")
			} else if tc.want != nil {
				require.Error(t, rerr, "accepted by the replica path, refused when read")
				require.True(t, matchesOne(rerr, typed), "%v matches none of the typed errors", rerr)
			}
			// Cumulative allocation of reading a bomb back is up to about
			// 5 × the 64 MiB limit (snappy's growing buffers); peak use is
			// one limit's worth.
			require.LessOrEqual(t, alloc, uint64(6*(64<<20)+3*len(b)), "allocated %d bytes", alloc)
		})
	}
	l := partition(t, d, "h", 0)
	// Offsets and timestamps a replica or client may not use.
	for _, tc := range []struct {
		name string
		fn   func() error
		want error // nil: any typed error; errAcceptable: a typed error or success
	}{
		{"replica batch at a negative offset", func() error {
			b := hostileBase(t)
			require.NoError(t, record.SetBaseOffset(b, -10))
			_, err := l.AppendAsReplica(b)
			return err
		}, ErrInvalidRecord},
		{"replica batch below the log end", func() error {
			b := hostileBase(t)
			require.NoError(t, record.SetBaseOffset(b, l.LogEndOffset()-1))
			_, err := l.AppendAsReplica(b)
			return err
		}, ErrInvalidRecord},
		{"negative timestamp", func() error {
			b := hostileBase(t)
			binary.BigEndian.PutUint64(b[27:35], uint64(0xfffffffffffffffb)) // baseTimestamp -5
			binary.BigEndian.PutUint64(b[35:43], uint64(0xfffffffffffffffb)) // maxTimestamp -5
			_, err := l.Append(fixCRC(b))
			return err
		}, errAcceptable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leo := l.LogEndOffset()
			err := tc.fn()
			if tc.want == errAcceptable {
				// Kafka accepts any CreateTime within
				// message.timestamp.before.max.ms (unlimited by default).
				if err != nil {
					require.True(t, matchesOne(err, typed), "%v matches none of the typed errors", err)
				}
				return
			}
			require.Error(t, err)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			} else {
				require.True(t, matchesOne(err, typed), "%v matches none of the typed errors", err)
			}
			require.Equal(t, leo, l.LogEndOffset())
		})
	}
	_, err := l.Append(hostileBase(t))
	require.NoError(t, err, "the partition still takes good batches")
}

// errAcceptable marks a hostile case that may also succeed.
var errAcceptable = errors.New("acceptable")

// TestHostileHeaderFlood: a record with 400,000 empty headers within a
// 1 MiB batch is valid Kafka; decoding it allocates a bounded multiple of
// the batch (at most 160×), and skimming (what Append does) allocates nothing per header.
func TestHostileHeaderFlood(t *testing.T) {
	const headers = 400_000
	var hb []byte
	for range headers {
		hb = binary.AppendVarint(hb, 0)  // empty key
		hb = binary.AppendVarint(hb, -1) // null value
	}
	b := withRecords(hostileBase(t), 1, rawRecord(1, []byte("k"), 1, []byte("v"), headers, hb))
	binary.BigEndian.PutUint32(b[23:27], 0) // lastOffsetDelta: one record
	b = fixCRC(b)
	var n int
	var err error
	alloc := allocated(func() {
		r := record.NewReader(record.ReaderOptions{})
		if err = r.Reset(b); err == nil {
			for r.Next() {
				n = len(r.Record().Headers)
			}
			err = r.Err()
		}
	})
	if err != nil {
		require.True(t, errors.Is(err, record.ErrCorrupt) || errors.Is(err, record.ErrTooLarge), "%v", err)
	} else {
		require.Equal(t, headers, n)
	}
	// About 270 bytes per 2-byte header (a Header struct, its key and
	// value slices): bounded by the batch size, which max.message.bytes
	// bounds in turn.
	require.LessOrEqual(t, alloc, uint64(160*len(b)), "decoding allocated %d bytes for a %d-byte batch", alloc, len(b))

	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "h", 1, map[string]string{"max.message.bytes": "2000000"})
	l := partition(t, d, "h", 0)
	var aerr error
	alloc = allocated(func() { _, aerr = l.Append(bytes.Clone(b)) })
	require.NoError(t, aerr, "a header flood within the size limits is valid")
	require.LessOrEqual(t, alloc, uint64(4*len(b)), "Append allocated %d bytes", alloc)
}

// TestHostileSegmentRecovery writes each hostile batch after two good ones
// at the end of a segment file, as a damaged disk or a torn write would
// leave it: recovery keeps the good batches and either cuts the rest with
// a typed cause (damaged framing) or keeps a batch whose framing and CRC
// are valid, and allocates a bounded amount either way.
func TestHostileSegmentRecovery(t *testing.T) {
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			require.NoError(t, e.mem.MkdirAll("/p-0"))
			cfg := segment.DefaultConfig()
			cfg.MaxIndexBytes = 4096
			s, err := segment.Create(e.mem, "/p-0", 0, cfg, 0)
			require.NoError(t, err)
			for i := range 2 {
				b := hostileBase(t)
				require.NoError(t, record.SetBaseOffset(b, int64(i*3)))
				h, err := record.Validate(b)
				require.NoError(t, err)
				require.NoError(t, s.Append(b, &h))
			}
			require.NoError(t, s.Close())
			f, err := e.mem.OpenReadWrite("/p-0/" + segment.FileName(0, segment.LogSuffix))
			require.NoError(t, err)
			size, err := f.Size()
			require.NoError(t, err)
			bad := tc.batch(t)
			_ = record.SetBaseOffset(bad, 6)
			_, err = f.WriteAt(bad, size)
			require.NoError(t, err)
			require.NoError(t, f.Close())

			var res segment.RecoverResult
			alloc := allocated(func() {
				r, err := segment.Open(e.mem, "/p-0", 0, cfg, segment.OpenOptions{Active: true})
				require.NotNil(t, r, "%v", err)
				res, err = r.Recover(segment.RecoverOptions{})
				if tc.name == "legacy magic" {
					// Valid Kafka data this library cannot read: never
					// truncated, refused with the file and position.
					require.ErrorIs(t, err, segment.ErrLegacyFormat)
					res.NextOffset = -1
				} else {
					require.NoError(t, err)
				}
				require.NoError(t, r.Close())
			})
			if res.NextOffset == -1 {
				return
			}
			if res.NextOffset > 6 {
				// Valid framing: recovery checks length, magic, CRC and
				// offsets, not the records under a valid CRC; reading them
				// is what refuses them (TestHostileBatchesReader).
				require.NoError(t, res.Cause)
				return
			}
			require.Equal(t, int64(6), res.NextOffset, "the good batches stay")
			require.Equal(t, size, res.ValidBytes)
			require.Error(t, res.Cause)
			require.True(t, matchesOne(res.Cause, []error{record.ErrCorrupt, record.ErrTruncated, segment.ErrOffsetOrder}), "%v", res.Cause)
			require.LessOrEqual(t, alloc, uint64(16<<20+2*len(bad)), "recovery allocated %d bytes", alloc)
		})
	}
}
