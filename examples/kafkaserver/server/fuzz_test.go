package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// FuzzHandle feeds arbitrary request frames (without their size prefix)
// to the server's request handling, over a memory-filesystem directory:
// whatever the bytes, it answers, or refuses with ErrBadFrame, and never
// panics. The seeds are a valid request of every served API at its
// lowest and highest served versions.
func FuzzHandle(f *testing.F) {
	for key, a := range apis {
		for _, v := range []int16{a.min, a.max} {
			req := kmsg.RequestForKey(key)
			req.SetVersion(v)
			if mr, ok := req.(*kmsg.MetadataRequest); ok {
				name := "t"
				mr.Topics = []kmsg.MetadataRequestTopic{{Topic: &name}}
			}
			f.Add(frameOf(key, v, req))
		}
	}
	f.Add([]byte{0, 18, 0, 99, 0, 0, 0, 1, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0x7f})
	ctx := context.Background()
	cfg := log.DefaultConfig()
	cfg.FS = vfs.NewMem()
	d, err := log.Open(ctx, "/fuzz", cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = d.Close() })
	if _, err := d.CreateTopic(ctx, "t", 2, nil); err != nil {
		f.Fatal(err)
	}
	sc := DefaultConfig()
	sc.AutoCreateTopics = false // a fuzzed name must not fill the directory
	s, err := New(d, sc)
	if err != nil {
		f.Fatal(err)
	}
	s.first = &boundListener{Listener: s.listeners[0], host: "127.0.0.1", port: 9092}
	f.Fuzz(func(t *testing.T, frame []byte) {
		// Fetches must not wait: max.wait.ms is fuzzed too.
		hctx, cancel := context.WithCancel(ctx)
		cancel()
		watchdog := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("handle took over 10 s on %x", frame)) })
		out, err := s.handle(hctx, frame)
		watchdog.Stop()
		if err != nil && !errors.Is(err, ErrBadFrame) && !errors.Is(err, context.Canceled) {
			t.Fatalf("an error other than ErrBadFrame: %v", err)
		}
		if out != nil {
			b, err := flatten(out)
			if err != nil {
				t.Fatalf("reading a response's slice: %v", err)
			}
			if int(binary.BigEndian.Uint32(b)) != len(b)-4 {
				t.Fatalf("response frame of %d bytes says %d", len(b), binary.BigEndian.Uint32(b))
			}
		}
	})
}

// frameOf encodes a request frame without its size prefix.
func frameOf(key, version int16, req kmsg.Request) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, 1)
	b = binary.BigEndian.AppendUint16(b, 1)
	b = append(b, 'f')
	if req.IsFlexible() {
		b = append(b, 0)
	}
	return req.AppendTo(b)
}

// flatten reads a response's chunks into one frame, releasing its slices.
func flatten(out []chunk) ([]byte, error) {
	defer releaseChunks(out)
	var b []byte
	for _, c := range out {
		if c.sl == nil {
			b = append(b, c.b...)
			continue
		}
		var err error
		if b, err = c.sl.Bytes(b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// FuzzReadFrame feeds an arbitrary byte stream to the connection's frame
// reader: it returns each size-prefixed frame exactly as it was written,
// refuses a size over the limit or below a header's with a typed error,
// never holds more than the limit, and never panics; a large frame's
// buffer goes to the pool and serves a later one, as on a connection.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 8, 0, 18, 0, 3, 0, 0, 0, 1})
	f.Add([]byte{0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0x7f, 0, 0, 0, 0, 8})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0x10, 0, 0, 1, 2, 3})
	// Two frames over the size a connection keeps, the second smaller
	// and of other bytes: it is read into the first one's buffer.
	large := binary.BigEndian.AppendUint32(nil, 3<<19)
	large = append(large, bytes.Repeat([]byte{1}, 3<<19)...)
	large = binary.BigEndian.AppendUint32(large, 5<<18)
	f.Add(append(large, bytes.Repeat([]byte{2}, 5<<18)...))
	const limit = 3 << 20 // above frameStep, so that growth in steps is fuzzed
	f.Fuzz(func(t *testing.T, stream []byte) {
		r := bufio.NewReaderSize(bytes.NewReader(stream), 16)
		var buf []byte
		pos := 0
		for {
			frame, err := readFrame(r, buf, limit)
			if len(frame) > limit {
				t.Fatalf("a frame of %d bytes, over the limit", len(frame))
			}
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrBadFrame) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("an untyped error: %v", err)
				}
				return
			}
			size := int(binary.BigEndian.Uint32(stream[pos:]))
			if size != len(frame) || !bytes.Equal(frame, stream[pos+4:pos+4+size]) {
				t.Fatalf("frame at %d: got %d bytes, the stream holds %d", pos, len(frame), size)
			}
			pos += 4 + size
			buf = keepFrame(frame) // as a connection does: a large buffer goes to the pool
		}
	})
}

// FuzzOAuthBearer feeds arbitrary OAUTHBEARER initial responses to the
// parser and, when they parse, their tokens to the unsecured validator:
// each answers a token, ErrOAuthBearerMalformed, a refusal with Kafka's
// error JSON, or errOAuthBearerClose; never a panic.
func FuzzOAuthBearer(f *testing.F) {
	f.Add([]byte("n,,\x01auth=Bearer " + unsecuredJWS(`{"sub":"alice","exp":1800000000,"iat":1,"scope":["a","b"]}`) + "\x01k=v\x01\x01"))
	f.Add([]byte("n,a=alice,\x01auth=Bearer eyJhbGciOiJub25lIn0.e30.\x01\x01"))
	f.Add([]byte("n,,\x01auth=Bearer a..b\x01\x01"))
	f.Add([]byte("n,a==2C,\x01auth=bearer x=\x01\x01"))
	cfg := DefaultConfig()
	cfg.OAuthBearerRequiredScope = []string{"a"}
	v, err := newUnsecuredValidator(cfg)
	if err != nil {
		f.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	f.Fuzz(func(t *testing.T, msg []byte) {
		in, err := parseOAuthInitial(msg)
		if err != nil {
			if !errors.Is(err, ErrOAuthBearerMalformed) && !errors.Is(err, errOAuthBearerClose) {
				t.Fatalf("an untyped error: %v", err)
			}
			return
		}
		tok, err := v.validate(in.token, now)
		if r, ok := errors.AsType[*oauthRefusal](err); ok {
			if j := r.json(); j != `{"status":"invalid_token"}` && j != `{"status":"insufficient_scope", "scope":"[a]"}` {
				t.Fatalf("refusal %s", j)
			}
			return
		}
		if err != nil {
			if !errors.Is(err, errOAuthBearerClose) {
				t.Fatalf("an untyped error: %v", err)
			}
			return
		}
		if tok.principal == "" || tok.lifetimeMs < now.UnixMilli() {
			t.Fatalf("accepted %q: %+v", in.token, tok)
		}
	})
}
