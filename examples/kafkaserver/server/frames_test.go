package server

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"math/bits"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLargeFramesReused: requests larger than a connection keeps are read
// whole and exactly, whether their buffer is new or one another request
// left in largeFrames (each request's bytes differ, so bytes left from an
// earlier one would show); a new buffer grows to the power of two at or
// above its frame's size, so that it serves a later frame of that size;
// and, where the pool is not made to drop buffers (it is under -race),
// a stream of such frames allocates almost nothing once warm.
func TestLargeFramesReused(t *testing.T) {
	sizes := []int{keptFrameBytes + 1, 3 << 20, 1<<20 + 512<<10, 2 << 20, 100, keptFrameBytes, 4<<20 - 1, 1<<20 + 7}
	var stream bytes.Buffer
	for i, n := range sizes {
		stream.Write(binary.BigEndian.AppendUint32(nil, uint32(n)))
		stream.Write(bytes.Repeat([]byte{byte('a' + i)}, n))
	}
	r := bufio.NewReaderSize(bytes.NewReader(stream.Bytes()), 64<<10)
	var buf []byte
	for i, n := range sizes {
		frame, err := readFrame(r, buf, 8<<20)
		require.NoError(t, err, "frame %d", i)
		require.Len(t, frame, n, "frame %d", i)
		require.Equal(t, bytes.Repeat([]byte{byte('a' + i)}, n), frame, "frame %d", i)
		if n > keptFrameBytes {
			require.GreaterOrEqual(t, cap(frame), 1<<bits.Len(uint(n-1)), "frame %d of %d bytes", i, n)
		}
		buf = keepFrame(frame)
		if n > keptFrameBytes {
			require.Nil(t, buf, "a connection keeps no buffer over %d bytes", keptFrameBytes)
		} else {
			require.Equal(t, cap(frame), cap(buf), "a small buffer stays with the connection")
		}
	}

	if raceEnabled {
		return
	}
	frame := make([]byte, 4+(2<<20))
	binary.BigEndian.PutUint32(frame, 2<<20)
	src := bytes.NewReader(nil)
	r = bufio.NewReaderSize(src, 64<<10)
	read := func() {
		src.Reset(frame)
		r.Reset(src)
		got, err := readFrame(r, nil, 8<<20)
		require.NoError(t, err)
		require.Len(t, got, 2<<20)
		keepFrame(got)
	}
	read()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 50 {
		read()
	}
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20),
		"50 warm 2 MiB requests allocate at most two buffers (a collection may empty the pool)")
}

// TestFramePool: a buffer from the pool holds at least the bytes asked,
// whatever capacities were put in; one too small for a class is kept for
// a smaller class, never given for a larger request.
func TestFramePool(t *testing.T) {
	var p framePool
	require.Nil(t, p.get(3<<20), "an empty pool")
	for _, c := range []int{3 << 20, 2 << 20, 5<<20 + 1, 1 << 21, 16} {
		p.put(make([]byte, 10, c))
	}
	for _, n := range []int{1<<20 + 1, 2 << 20, 2<<20 + 1, 4 << 20, 5 << 20, 8 << 20, 1 << 30} {
		if b := p.get(n); b != nil {
			require.GreaterOrEqual(t, cap(b), n)
			require.Empty(t, b)
		}
	}
	require.Nil(t, p.get(1<<40), "beyond the classes")
}
