package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression of the records section (see the package doc). Writers produce
// what Kafka's Java producer produces: a gzip member; snappy in xerial
// framing (32 KiB blocks); an LZ4 frame with 64 KiB independent blocks, no
// block or content checksums and a correct header checksum; a zstd frame.
// Readers accept what any client writes: concatenated gzip members, xerial
// framed or raw snappy (and concatenated xerial streams), LZ4 frames with or
// without checksums or content size, and one or more zstd frames with or
// without a content size. Every reader stops at a caller's limit, so a small
// batch cannot expand into unbounded memory.

// DefaultLevel asks for the codec's Kafka default level: gzip 6
// (compression.gzip.level = -1, zlib's default), lz4 9
// (compression.lz4.level), zstd 3 (compression.zstd.level).
const DefaultLevel = 0

// DefaultMaxDecompressedBytes is the decompression limit of a [Reader] whose
// options leave it zero. Kafka has no such limit (its batches are bounded by
// message.max.bytes before decompression only); kafkalite bounds the
// expansion so that a hostile 1 MiB batch cannot claim gigabytes.
const DefaultMaxDecompressedBytes = 64 << 20

var xerialMagic = [8]byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	xerialHeaderLen = 16
	xerialBlockSize = 32 << 10
)

var (
	gzipWriters sync.Map // level -> *sync.Pool of *gzip.Writer
	lz4Writers  sync.Map // level -> *sync.Pool of *lz4.Writer
	zstdWriters sync.Map // level -> *sync.Pool of *zstd.Encoder
	gzipReaders sync.Pool
	lz4Readers  sync.Pool
)

func poolFor(m *sync.Map, key int, newFn func() any) *sync.Pool {
	if p, ok := m.Load(key); ok {
		return p.(*sync.Pool)
	}
	p, _ := m.LoadOrStore(key, &sync.Pool{New: newFn})
	return p.(*sync.Pool)
}

// appendCompressed appends src compressed with codec c at level to dst.
func appendCompressed(dst, src []byte, c Compression, level int) ([]byte, error) {
	switch c {
	case None:
		return append(dst, src...), nil
	case Gzip:
		return appendGzip(dst, src, level)
	case Snappy:
		return appendXerialSnappy(dst, src), nil
	case LZ4:
		return appendLZ4(dst, src, level)
	case Zstd:
		return appendZstd(dst, src, level)
	}
	return dst, fmt.Errorf("%w: %d", ErrUnknownCodec, c)
}

// appendWriter is an io.Writer appending to a slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

func appendGzip(dst, src []byte, level int) ([]byte, error) {
	if level == DefaultLevel || level == -1 {
		level = 6
	}
	if level < gzip.HuffmanOnly || level > gzip.BestCompression {
		return dst, fmt.Errorf("record: gzip level %d out of range", level)
	}
	pool := poolFor(&gzipWriters, level, func() any {
		w, _ := gzip.NewWriterLevel(nil, level) // level checked above
		return w
	})
	w := pool.Get().(*gzip.Writer)
	defer pool.Put(w)
	return compressWith(w, dst, src)
}

// resetWriter is a pooled compressing writer: gzip's or lz4's.
type resetWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

// compressWith resets w to append to dst, writes src through it and closes
// it, and returns dst with the compressed bytes; on error, dst as it was.
func compressWith(w resetWriter, dst, src []byte) ([]byte, error) {
	aw := appendWriter{b: dst}
	w.Reset(&aw)
	if _, err := w.Write(src); err != nil {
		return dst, err
	}
	if err := w.Close(); err != nil {
		return dst, err
	}
	return aw.b, nil
}

func appendXerialSnappy(dst, src []byte) []byte {
	dst = append(dst, xerialMagic[:]...)
	dst = binary.BigEndian.AppendUint32(dst, 1) // version
	dst = binary.BigEndian.AppendUint32(dst, 1) // compatible version
	for len(src) > 0 {
		n := min(len(src), xerialBlockSize)
		lenAt := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		dst = slices.Grow(dst, s2.MaxEncodedLen(n))
		block := s2.EncodeSnappy(dst[len(dst):cap(dst)], src[:n])
		binary.BigEndian.PutUint32(dst[lenAt:], uint32(len(block)))
		dst = dst[:len(dst)+len(block)]
		src = src[n:]
	}
	return dst
}

// lz4Level maps Kafka's compression.lz4.level (1–17, default 9) onto
// pierrec/lz4's levels. As Kafka's Lz4BlockOutputStream does, the default
// level uses lz4's fast compressor and every other level the
// high-compression one (lz4-java's highCompressor(level)): levels 1–8 map
// to pierrec's Level1–Level8 and 10–17, above what it grades, to Level9.
// The frames are valid LZ4 either way; their bytes differ from Kafka's,
// whose compressor is another implementation.
func lz4Level(level int) (lz4.CompressionLevel, error) {
	switch {
	case level == DefaultLevel || level == 9:
		return lz4.Fast, nil
	case level >= 1 && level <= 8:
		return lz4.CompressionLevel(1 << (8 + level)), nil // Level1..Level8
	case level >= 10 && level <= 17:
		return lz4.Level9, nil
	}
	return 0, fmt.Errorf("record: lz4 level %d out of range 1–17", level)
}

func appendLZ4(dst, src []byte, level int) ([]byte, error) {
	lvl, err := lz4Level(level)
	if err != nil {
		return dst, err
	}
	pool := poolFor(&lz4Writers, level, func() any {
		w := lz4.NewWriter(nil)
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false),
			lz4.BlockChecksumOption(false), lz4.CompressionLevelOption(lvl)); err != nil {
			return err
		}
		return w
	})
	got := pool.Get()
	w, ok := got.(*lz4.Writer)
	if !ok {
		return dst, fmt.Errorf("record: lz4 writer: %v", got)
	}
	defer pool.Put(w)
	return compressWith(w, dst, src)
}

func appendZstd(dst, src []byte, level int) ([]byte, error) {
	if level == DefaultLevel {
		level = 3
	}
	if level < -131072 || level > 22 {
		return dst, fmt.Errorf("record: zstd level %d out of range", level)
	}
	pool := poolFor(&zstdWriters, level, func() any {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)))
		if err != nil {
			return err
		}
		return e
	})
	got := pool.Get()
	e, ok := got.(*zstd.Encoder)
	if !ok {
		return dst, fmt.Errorf("record: zstd encoder: %v", got)
	}
	defer pool.Put(e)
	return e.EncodeAll(src, dst), nil
}

// decompress decodes src (codec c) into dst[:0], growing it as needed but
// never past limit bytes of output. It returns ErrTooLarge (unwrapped; the
// caller adds the position) if the output would exceed limit, and an error
// wrapping ErrCompression if src is not valid for the codec.
func decompress(c Compression, src, dst []byte, limit int) ([]byte, error) {
	var out []byte
	var err error
	switch c {
	case Gzip:
		out, err = decompressGzip(src, dst, limit)
	case Snappy:
		out, err = decompressSnappy(src, dst, limit)
	case LZ4:
		out, err = decompressLZ4(src, dst, limit)
	case Zstd:
		out, err = decompressZstd(src, dst, limit)
	default:
		return dst, ErrUnknownCodec
	}
	if err != nil && !errors.Is(err, ErrTooLarge) {
		err = fmt.Errorf("%w: %s: %v", ErrCompression, c, err)
	}
	return out, err
}

type gzipReader struct {
	src bytes.Reader
	r   gzip.Reader
}

func decompressGzip(src, dst []byte, limit int) ([]byte, error) {
	g, _ := gzipReaders.Get().(*gzipReader)
	if g == nil {
		g = new(gzipReader)
	}
	defer gzipReaders.Put(g)
	g.src.Reset(src)
	if err := g.r.Reset(&g.src); err != nil { // multistream: concatenated members are read
		return dst, err
	}
	return readBounded(&g.r, dst, limit, 4*len(src))
}

type lz4Reader struct {
	src bytes.Reader
	r   *lz4.Reader
}

func decompressLZ4(src, dst []byte, limit int) ([]byte, error) {
	l, _ := lz4Readers.Get().(*lz4Reader)
	if l == nil {
		l = &lz4Reader{r: lz4.NewReader(nil)}
	}
	defer lz4Readers.Put(l)
	l.src.Reset(src)
	l.r.Reset(&l.src)
	return readBounded(l.r, dst, limit, 4*len(src))
}

// zstdMaxWindow is the largest zstd window accepted: Java writers use
// zstd's defaults for their level, up to 128 MiB at level 22 (Kafka itself
// sets no limit). Decoding a whole batch at once keeps no separate window;
// the output buffer's capacity bounds memory.
const zstdMaxWindow = 128 << 20

var zstdReaders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxMemory(zstdMaxWindow), zstd.WithDecoderMaxWindow(zstdMaxWindow))
	if err != nil {
		return err
	}
	return d
}}

// decompressZstd decodes into a buffer whose capacity caps the output
// (the decoder stops a block past it): it starts from the frame's content
// size when the frame states one, or from a guess, and retries with a larger
// buffer up to limit when the output does not fit. The window a frame
// declares does not count against limit: a 10-byte batch from a streaming
// writer may declare zstd's 2 MiB default window.
func decompressZstd(src, dst []byte, limit int) ([]byte, error) {
	got := zstdReaders.Get()
	d, ok := got.(*zstd.Decoder)
	if !ok {
		return dst, fmt.Errorf("zstd decoder: %v", got)
	}
	defer zstdReaders.Put(d)
	size := max(8*len(src), 64<<10)
	var fh zstd.Header
	if fh.Decode(src) == nil && fh.HasFCS {
		if fh.FrameContentSize > uint64(limit) {
			return dst, ErrTooLarge
		}
		size = max(int(fh.FrameContentSize), size)
	}
	for {
		size = min(size, limit)
		if cap(dst) < size {
			dst = make([]byte, 0, size)
		}
		out, err := d.DecodeAll(src, dst[:0:size])
		if err == nil && len(out) <= size {
			return out, nil
		}
		if errors.Is(err, zstd.ErrWindowSizeExceeded) {
			return dst, fmt.Errorf("window larger than %d bytes: %w", zstdMaxWindow, err)
		}
		if size < limit {
			// The output may simply not fit: the decoder reports a full
			// buffer as ErrDecoderSizeExceeded or, inside a block, as
			// "output bigger than max block size". Corrupt input fails
			// again at every size and is reported below.
			size *= 4
			continue
		}
		if err == nil || errors.Is(err, zstd.ErrDecoderSizeExceeded) || strings.Contains(err.Error(), "output bigger than max block size") {
			return dst, ErrTooLarge
		}
		return dst, err
	}
}

// decompressSnappy reads xerial-framed snappy when src starts with the xerial
// header, and a raw snappy block otherwise, as snappy-java's reader does.
func decompressSnappy(src, dst []byte, limit int) ([]byte, error) {
	if len(src) == 0 {
		return dst, errors.New("empty snappy input")
	}
	dst = dst[:0]
	if len(src) < xerialHeaderLen || !bytes.Equal(src[:8], xerialMagic[:]) {
		return appendSnappyBlock(dst, src, limit)
	}
	src = src[xerialHeaderLen:]
	for len(src) > 0 {
		if len(src) < 4 {
			return dst, errors.New("truncated xerial chunk length")
		}
		n := int32(binary.BigEndian.Uint32(src))
		if uint32(n) == binary.BigEndian.Uint32(xerialMagic[:4]) { // a concatenated stream's header
			if len(src) < xerialHeaderLen {
				return dst, errors.New("truncated xerial header")
			}
			src = src[xerialHeaderLen:]
			continue
		}
		if n < 0 || int(n) > len(src)-4 {
			return dst, fmt.Errorf("xerial chunk length %d with %d bytes left", n, len(src)-4)
		}
		var err error
		if dst, err = appendSnappyBlock(dst, src[4:4+n], limit); err != nil {
			return dst, err
		}
		src = src[4+n:]
	}
	return dst, nil
}

func appendSnappyBlock(dst, block []byte, limit int) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return dst, err
	}
	if n > limit-len(dst) {
		return dst, ErrTooLarge
	}
	dst = slices.Grow(dst, n)
	out, err := s2.Decode(dst[len(dst):len(dst)+n], block)
	if err != nil {
		return dst, err
	}
	if len(out) != n {
		return dst, errors.New("snappy block length mismatch")
	}
	return dst[:len(dst)+n], nil
}

// readBounded reads r to EOF into dst[:0], growing dst up to limit bytes,
// starting from about hint bytes; reading more than limit is ErrTooLarge.
func readBounded(r io.Reader, dst []byte, limit, hint int) ([]byte, error) {
	dst = dst[:0]
	if cap(dst) == 0 {
		dst = make([]byte, 0, min(max(hint, 512), limit+1))
	}
	for {
		if len(dst) == cap(dst) {
			if len(dst) > limit {
				return dst, ErrTooLarge
			}
			dst = slices.Grow(dst, min(max(cap(dst), 4096), limit+1-len(dst)))
		}
		n, err := r.Read(dst[len(dst):min(cap(dst), limit+1)])
		dst = dst[:len(dst)+n]
		if len(dst) > limit {
			return dst, ErrTooLarge
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}
