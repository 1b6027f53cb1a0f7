package interop

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"testing"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"
)

// Independent codecs for the cross-check. Every decoder here shares no code
// with what the record package uses (klauspost gzip and s2, pierrec/lz4's
// reader, klauspost zstd's DecodeAll):
//
//	gzip    the standard library's compress/gzip
//	snappy  github.com/golang/snappy blocks; the xerial framing is parsed and
//	        written here from snappy-java's stream format (record package doc)
//	lz4     the frame is parsed here from the LZ4 frame spec and the frame
//	        Kafka's Lz4BlockOutputStream writes (record package doc), with
//	        an xxHash32 and an LZ4 block decoder written here from their
//	        specifications
//	zstd    the standard library's own zstd decoder (internal/zstd), reached
//	        through debug/elf, which uses it for SHF_COMPRESSED sections
//
// The encoders that produce variant streams are the standard library's gzip,
// golang/snappy, pierrec/lz4 with options Kafka's writer never uses, and
// klauspost zstd's streaming Encoder (the record package uses EncodeAll).

// ---- xxHash32 (https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md)

const (
	xxPrime1 uint32 = 2654435761
	xxPrime2 uint32 = 2246822519
	xxPrime3 uint32 = 3266489917
	xxPrime4 uint32 = 668265263
	xxPrime5 uint32 = 374761393
)

func xxRound(acc, lane uint32) uint32 {
	return bits.RotateLeft32(acc+lane*xxPrime2, 13) * xxPrime1
}

// xxHash32 computes XXH32(b, seed) as the xxHash specification defines it.
func xxHash32(b []byte, seed uint32) uint32 {
	n := len(b)
	var acc uint32
	if n >= 16 {
		v1, v2, v3, v4 := seed+xxPrime1+xxPrime2, seed+xxPrime2, seed, seed-xxPrime1
		for len(b) >= 16 {
			v1 = xxRound(v1, binary.LittleEndian.Uint32(b[0:]))
			v2 = xxRound(v2, binary.LittleEndian.Uint32(b[4:]))
			v3 = xxRound(v3, binary.LittleEndian.Uint32(b[8:]))
			v4 = xxRound(v4, binary.LittleEndian.Uint32(b[12:]))
			b = b[16:]
		}
		acc = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		acc = seed + xxPrime5
	}
	acc += uint32(n)
	for len(b) >= 4 {
		acc = bits.RotateLeft32(acc+binary.LittleEndian.Uint32(b)*xxPrime3, 17) * xxPrime4
		b = b[4:]
	}
	for _, c := range b {
		acc = bits.RotateLeft32(acc+uint32(c)*xxPrime5, 11) * xxPrime1
	}
	acc ^= acc >> 15
	acc *= xxPrime2
	acc ^= acc >> 13
	acc *= xxPrime3
	acc ^= acc >> 16
	return acc
}

func TestXXHash32Vectors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		seed uint32
		want uint32
	}{
		// Reference values of the xxHash project (XXH32, seed 0).
		{name: "empty", in: nil, want: 0x02CC5D05},
		{name: "a", in: []byte("a"), want: 0x550D7456},
		{name: "abc", in: []byte("abc"), want: 0x32D153FF},
		{name: "stripes", in: []byte("Nobody inspects the spammish repetition"), want: 0xE2293B2F},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, xxHash32(tc.in, tc.seed))
		})
	}
	// The LZ4 frame header of every Kafka producer is 04 22 4D 18 60 40 82.
	require.Equal(t, byte(0x82), byte(xxHash32([]byte{0x60, 0x40}, 0)>>8))
}

// ---- LZ4 (https://github.com/lz4/lz4/blob/dev/doc/lz4_Block_format.md and
// lz4_Frame_format.md)

// lz4DecodeBlock appends the decoded LZ4 block src to dst. It fails, never
// panics, on malformed input, and on output past limit bytes.
func lz4DecodeBlock(dst, src []byte, limit int) ([]byte, error) {
	start := len(dst)
	readLen := func(i *int, n int) (int, error) {
		if n != 15 {
			return n, nil
		}
		for {
			if *i >= len(src) {
				return 0, errors.New("lz4: truncated length")
			}
			c := src[*i]
			*i++
			n += int(c)
			if c != 255 {
				return n, nil
			}
		}
	}
	i := 0
	for {
		if i >= len(src) {
			return dst, errors.New("lz4: truncated sequence")
		}
		token := src[i]
		i++
		lit, err := readLen(&i, int(token>>4))
		if err != nil {
			return dst, err
		}
		if lit > len(src)-i || len(dst)-start+lit > limit {
			return dst, errors.New("lz4: literals past the end")
		}
		dst = append(dst, src[i:i+lit]...)
		i += lit
		if i == len(src) { // the last sequence has literals only
			return dst, nil
		}
		if len(src)-i < 2 {
			return dst, errors.New("lz4: truncated offset")
		}
		off := int(binary.LittleEndian.Uint16(src[i:]))
		i += 2
		if off == 0 || off > len(dst)-start {
			return dst, fmt.Errorf("lz4: match offset %d with %d bytes decoded", off, len(dst)-start)
		}
		match, err := readLen(&i, int(token&15))
		if err != nil {
			return dst, err
		}
		match += 4
		if len(dst)-start+match > limit {
			return dst, errors.New("lz4: match past the limit")
		}
		from := len(dst) - off
		for k := 0; k < match; k++ { // byte by byte: a match may overlap its own output
			dst = append(dst, dst[from+k])
		}
	}
}

type lz4Block struct {
	stored   bool // bit 31 of the block size: the data is not compressed
	data     []byte
	checksum *uint32
}

type lz4Frame struct {
	flg, bd         byte
	contentSize     *uint64
	headerChecksum  byte
	blocks          []lz4Block
	contentChecksum *uint32
	size            int // bytes the frame takes
}

func (f *lz4Frame) blockMax() int { return 1 << (2*((f.bd>>4)&7) + 8) }

// parseLZ4Frame parses one LZ4 frame at the start of b, checking everything
// Kafka's Lz4BlockInputStream checks (version 01, independent blocks, reserved
// bits zero, BD size code 4–7, header checksum, block checksums) and, unlike
// Kafka, the content checksum and content size too.
func parseLZ4Frame(b []byte) (*lz4Frame, error) {
	if len(b) < 7 {
		return nil, errors.New("lz4: frame shorter than 7 bytes")
	}
	if m := binary.LittleEndian.Uint32(b); m != 0x184D2204 {
		return nil, fmt.Errorf("lz4: magic %#08x", m)
	}
	f := &lz4Frame{flg: b[4], bd: b[5]}
	if f.flg>>6 != 1 {
		return nil, fmt.Errorf("lz4: FLG %#02x: version %d", f.flg, f.flg>>6)
	}
	if f.flg&0x20 == 0 {
		return nil, fmt.Errorf("lz4: FLG %#02x: dependent blocks", f.flg)
	}
	if f.flg&0x03 != 0 {
		return nil, fmt.Errorf("lz4: FLG %#02x: reserved bit or dictionary id", f.flg)
	}
	if f.bd&0x8F != 0 || (f.bd>>4)&7 < 4 {
		return nil, fmt.Errorf("lz4: BD %#02x", f.bd)
	}
	pos := 6
	if f.flg&0x08 != 0 {
		if len(b) < pos+8+1 {
			return nil, errors.New("lz4: truncated content size")
		}
		n := binary.LittleEndian.Uint64(b[pos:])
		f.contentSize = &n
		pos += 8
	}
	f.headerChecksum = b[pos]
	if want := byte(xxHash32(b[4:pos], 0) >> 8); f.headerChecksum != want {
		return nil, fmt.Errorf("lz4: header checksum %#02x, want %#02x", f.headerChecksum, want)
	}
	pos++
	for {
		if len(b)-pos < 4 {
			return nil, errors.New("lz4: truncated block size")
		}
		word := binary.LittleEndian.Uint32(b[pos:])
		pos += 4
		if word == 0 {
			break
		}
		blk := lz4Block{stored: word&(1<<31) != 0}
		n := int(word &^ (1 << 31))
		if n > f.blockMax() || n > len(b)-pos {
			return nil, fmt.Errorf("lz4: block of %d bytes (max %d, %d left)", n, f.blockMax(), len(b)-pos)
		}
		blk.data = b[pos : pos+n]
		pos += n
		if f.flg&0x10 != 0 {
			if len(b)-pos < 4 {
				return nil, errors.New("lz4: truncated block checksum")
			}
			sum := binary.LittleEndian.Uint32(b[pos:])
			if want := xxHash32(blk.data, 0); sum != want {
				return nil, fmt.Errorf("lz4: block checksum %#08x, want %#08x", sum, want)
			}
			blk.checksum = &sum
			pos += 4
		}
		f.blocks = append(f.blocks, blk)
	}
	if f.flg&0x04 != 0 {
		if len(b)-pos < 4 {
			return nil, errors.New("lz4: truncated content checksum")
		}
		sum := binary.LittleEndian.Uint32(b[pos:])
		f.contentChecksum = &sum
		pos += 4
	}
	f.size = pos
	return f, nil
}

// decode decodes every block with lz4DecodeBlock and checks the content
// size and checksum when the frame has them.
func (f *lz4Frame) decode() ([]byte, error) {
	var out []byte
	for i, blk := range f.blocks {
		before := len(out)
		if blk.stored {
			out = append(out, blk.data...)
		} else {
			var err error
			if out, err = lz4DecodeBlock(out, blk.data, f.blockMax()); err != nil {
				return nil, fmt.Errorf("block %d: %w", i, err)
			}
		}
		if len(out)-before > f.blockMax() {
			return nil, fmt.Errorf("lz4: block %d decodes to %d bytes", i, len(out)-before)
		}
	}
	if f.contentSize != nil && *f.contentSize != uint64(len(out)) {
		return nil, fmt.Errorf("lz4: content size %d, decoded %d", *f.contentSize, len(out))
	}
	if f.contentChecksum != nil && *f.contentChecksum != xxHash32(out, 0) {
		return nil, fmt.Errorf("lz4: content checksum %#08x, want %#08x", *f.contentChecksum, xxHash32(out, 0))
	}
	return out, nil
}

// lz4Encode writes src as one LZ4 frame with pierrec/lz4, using the given
// options on top of single-goroutine compression (so the output is
// deterministic).
func lz4Encode(t *testing.T, src []byte, opts ...lz4.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	require.NoError(t, w.Apply(append([]lz4.Option{lz4.ConcurrencyOption(1)}, opts...)...))
	_, err := w.Write(src)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func TestLZ4BlockDecoder(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{name: "text", in: []byte(jsonPayload(1, 5))},
		{name: "run", in: bytes.Repeat([]byte{'x'}, 5000)},    // overlapping matches
		{name: "long literal", in: pseudoRandomBytes(9, 700)}, // literal length past 255
		{name: "short", in: []byte("abc")},                    // literals only
		{name: "mixed", in: append(pseudoRandomBytes(3, 300), bytes.Repeat([]byte("abcd"), 300)...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			enc := make([]byte, lz4.CompressBlockBound(len(tc.in)))
			n, err := lz4.CompressBlock(tc.in, enc, nil)
			require.NoError(t, err)
			require.Positive(t, n, "pierrec reports incompressible input as 0")
			got, err := lz4DecodeBlock(nil, enc[:n], len(tc.in))
			require.NoError(t, err)
			require.Equal(t, tc.in, got)
		})
	}
}

// ---- snappy, xerial framing (snappy-java's SnappyOutputStream)

var xerialHeader = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}

// xerialEncode appends src as one xerial stream of golang/snappy blocks of
// blockSize uncompressed bytes, as snappy-java's SnappyOutputStream frames it.
func xerialEncode(dst, src []byte, blockSize int) []byte {
	dst = append(dst, xerialHeader...)
	for len(src) > 0 {
		n := min(len(src), blockSize)
		blk := snappy.Encode(nil, src[:n])
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(blk)))
		dst = append(dst, blk...)
		src = src[n:]
	}
	return dst
}

// xerialChunks parses one or more concatenated xerial streams (the header
// must be exactly magic, version 1, compatible version 1) and returns the
// raw snappy blocks and the number of stream headers seen.
func xerialChunks(b []byte) (chunks [][]byte, streams int, err error) {
	for len(b) > 0 {
		if bytes.HasPrefix(b, xerialHeader[:4]) {
			if len(b) < len(xerialHeader) || !bytes.Equal(b[:len(xerialHeader)], xerialHeader) {
				return nil, 0, fmt.Errorf("xerial: bad stream header % x", b[:min(len(b), 16)])
			}
			b = b[len(xerialHeader):]
			streams++
			continue
		}
		if streams == 0 {
			return nil, 0, errors.New("xerial: no stream header")
		}
		if len(b) < 4 {
			return nil, 0, errors.New("xerial: truncated chunk length")
		}
		n := binary.BigEndian.Uint32(b)
		if n > uint32(len(b)-4) {
			return nil, 0, fmt.Errorf("xerial: chunk of %d bytes, %d left", n, len(b)-4)
		}
		chunks = append(chunks, b[4:4+n])
		b = b[4+n:]
	}
	return chunks, streams, nil
}

// ---- zstd

// zstdFrameInfo describes one zstd frame (RFC 8878 §3.1.1).
type zstdFrameInfo struct {
	hasContentSize bool
	contentSize    uint64
	singleSegment  bool
	hasChecksum    bool
	size           int // bytes the frame takes
}

// zstdFrames walks the frames of b without decoding their blocks.
func zstdFrames(b []byte) ([]zstdFrameInfo, error) {
	var frames []zstdFrameInfo
	for len(b) > 0 {
		if len(b) < 5 || binary.LittleEndian.Uint32(b) != 0xFD2FB528 {
			return nil, fmt.Errorf("zstd: no frame magic at % x", b[:min(len(b), 4)])
		}
		d := b[4]
		f := zstdFrameInfo{singleSegment: d&0x20 != 0, hasChecksum: d&0x04 != 0}
		fcsLen := [4]int{0, 2, 4, 8}[d>>6]
		if d>>6 == 0 && f.singleSegment {
			fcsLen = 1
		}
		pos := 5
		if !f.singleSegment {
			pos++ // window descriptor
		}
		pos += [4]int{0, 1, 2, 4}[d&3] // dictionary id
		if len(b) < pos+fcsLen {
			return nil, errors.New("zstd: truncated frame header")
		}
		if fcsLen > 0 {
			f.hasContentSize = true
			var v [8]byte
			copy(v[:], b[pos:pos+fcsLen])
			f.contentSize = binary.LittleEndian.Uint64(v[:])
			if fcsLen == 2 {
				f.contentSize += 256
			}
		}
		pos += fcsLen
		for {
			if len(b)-pos < 3 {
				return nil, errors.New("zstd: truncated block header")
			}
			h := uint32(b[pos]) | uint32(b[pos+1])<<8 | uint32(b[pos+2])<<16
			pos += 3
			n := int(h >> 3)
			if (h>>1)&3 == 1 { // RLE block: one byte
				n = 1
			}
			if n > len(b)-pos {
				return nil, errors.New("zstd: truncated block")
			}
			pos += n
			if h&1 != 0 {
				break
			}
		}
		if f.hasChecksum {
			pos += 4
		}
		if pos > len(b) {
			return nil, errors.New("zstd: truncated checksum")
		}
		f.size = pos
		frames = append(frames, f)
		b = b[pos:]
	}
	return frames, nil
}

// zstdDecodeStdlib decodes one or more zstd frames with the Go standard
// library's own zstd decoder. That decoder is internal to the standard
// library; its public door is debug/elf, which decompresses ELF sections
// flagged SHF_COMPRESSED with ch_type ELFCOMPRESS_ZSTD. So this wraps src in
// a minimal ELF64 relocatable file with one such section and reads it.
func zstdDecodeStdlib(src []byte) ([]byte, error) {
	const (
		ehdrLen    = 64
		shdrLen    = 64
		chdrLen    = 24
		shstrtab   = "\x00.z\x00.shstrtab\x00"
		nameZ      = 1
		nameStrtab = 4
	)
	le := binary.LittleEndian
	secOff := ehdrLen
	secLen := chdrLen + len(src)
	strOff := secOff + secLen
	shOff := strOff + len(shstrtab)

	f := make([]byte, 0, shOff+3*shdrLen)
	f = append(f, 0x7F, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT))
	f = append(f, make([]byte, 16-len(f))...)
	f = le.AppendUint16(f, uint16(elf.ET_REL))
	f = le.AppendUint16(f, uint16(elf.EM_X86_64))
	f = le.AppendUint32(f, uint32(elf.EV_CURRENT))
	f = le.AppendUint64(f, 0)             // e_entry
	f = le.AppendUint64(f, 0)             // e_phoff
	f = le.AppendUint64(f, uint64(shOff)) // e_shoff
	f = le.AppendUint32(f, 0)             // e_flags
	f = le.AppendUint16(f, ehdrLen)
	f = le.AppendUint16(f, 0) // e_phentsize
	f = le.AppendUint16(f, 0) // e_phnum
	f = le.AppendUint16(f, shdrLen)
	f = le.AppendUint16(f, 3) // e_shnum
	f = le.AppendUint16(f, 2) // e_shstrndx

	// Section data: Elf64_Chdr, then the zstd frames. ch_size is only a
	// hint for Section.Data; Open reads to the end of the stream.
	f = le.AppendUint32(f, uint32(elf.COMPRESS_ZSTD))
	f = le.AppendUint32(f, 0)
	f = le.AppendUint64(f, 0)
	f = le.AppendUint64(f, 1)
	f = append(f, src...)
	f = append(f, shstrtab...)

	shdr := func(name uint32, typ elf.SectionType, flags elf.SectionFlag, off, size int) {
		f = le.AppendUint32(f, name)
		f = le.AppendUint32(f, uint32(typ))
		f = le.AppendUint64(f, uint64(flags))
		f = le.AppendUint64(f, 0) // sh_addr
		f = le.AppendUint64(f, uint64(off))
		f = le.AppendUint64(f, uint64(size))
		f = le.AppendUint32(f, 0) // sh_link
		f = le.AppendUint32(f, 0) // sh_info
		f = le.AppendUint64(f, 1) // sh_addralign
		f = le.AppendUint64(f, 0) // sh_entsize
	}
	shdr(0, elf.SHT_NULL, 0, 0, 0)
	shdr(nameZ, elf.SHT_PROGBITS, elf.SHF_COMPRESSED, secOff, secLen)
	shdr(nameStrtab, elf.SHT_STRTAB, 0, strOff, len(shstrtab))

	ef, err := elf.NewFile(bytes.NewReader(f))
	if err != nil {
		return nil, err
	}
	sec := ef.Section(".z")
	if sec == nil {
		return nil, errors.New("zstd via debug/elf: section not found")
	}
	return io.ReadAll(sec.Open())
}

// zstdStream compresses src with klauspost zstd's streaming Encoder, as a
// zstd-jni ZstdOutputStream would: the frame header goes out before the
// input size is known, so it has no content size. (Write then Close alone
// would take the encoder's one-shot path for small inputs, which does write
// the size; the Flush forces the streaming header.)
func zstdStream(t *testing.T, src []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
	require.NoError(t, err)
	_, err = w.Write(src)
	require.NoError(t, err)
	require.NoError(t, w.Flush())
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// zstdOneShot compresses src in one call (EncodeAll): a single-segment frame
// with the content size, as zstd's one-shot API writes it.
func zstdOneShot(t *testing.T, src []byte) []byte {
	t.Helper()
	e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedBetterCompression))
	require.NoError(t, err)
	defer e.Close()
	return e.EncodeAll(src, nil)
}

func TestZstdDecodeStdlib(t *testing.T) {
	in := []byte(jsonPayload(2, 30))
	tests := []struct {
		name string
		enc  []byte
	}{
		{name: "stream", enc: zstdStream(t, in)},
		{name: "one shot", enc: zstdOneShot(t, in)},
		{name: "two frames", enc: append(zstdStream(t, in[:1000]), zstdOneShot(t, in[1000:])...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := zstdDecodeStdlib(tc.enc)
			require.NoError(t, err)
			require.Equal(t, in, got)
		})
	}
	_, err := zstdDecodeStdlib([]byte{0x28, 0xB5, 0x2F, 0xFD, 0x00})
	require.Error(t, err, "a truncated frame must not decode")
}

// ---- gzip

// gzipMembers decodes b member by member with the standard library and
// returns each member's header and content; every member must be complete.
func gzipMembers(b []byte) ([]gzip.Header, [][]byte, error) {
	var hdrs []gzip.Header
	var parts [][]byte
	src := bytes.NewReader(b) // an io.ByteReader: the decoder does not read ahead
	for src.Len() > 0 {
		zr, err := gzip.NewReader(src)
		if err != nil {
			return nil, nil, err
		}
		zr.Multistream(false)
		part, err := io.ReadAll(zr)
		if err != nil {
			return nil, nil, err
		}
		hdrs = append(hdrs, zr.Header)
		parts = append(parts, part)
	}
	return hdrs, parts, nil
}

// gzipMember compresses src as one gzip member with the standard library.
func gzipMember(t *testing.T, hdr gzip.Header, level int, src []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, level)
	require.NoError(t, err)
	w.Header = hdr
	_, err = w.Write(src)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}
