// Command broker shows the raw API a custom broker builds on: a producer's
// encoded batch appended with log.Log.Append (validated, offsets assigned),
// file-backed batches fetched with log.Log.Read and sent with
// segment.Slice.WriteTo (sendfile(2) on Linux when the writer is a
// *net.TCPConn or an *os.File: the bytes never pass through user space), and
// ListOffsets answered by log.Log.OffsetForTimestamp.
//
// kafkalite has no network protocol. The Handler interface and the framing
// below are a sketch of where a network layer plugs in, defined by this
// example only; they are not Kafka's wire protocol, which a real broker would
// implement on top of the same three calls.
//
//	go run ./examples/broker                    # serves a temporary directory on loopback, runs a client against it
//	go run ./examples/broker -dir DIR           # keeps the directory
//	go run ./examples/broker -compression lz4   # the client's batches compressed with lz4 (default none)
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// Handler is what a network layer calls. Each method maps to one call of
// package log.
type Handler interface {
	// Produce appends one producer batch to a partition, validated and
	// rewritten as a Kafka broker does (see [log.Log.Append]).
	Produce(topic string, partition int32, batch []byte) (log.AppendResult, error)
	// Fetch returns whole batches from offset, at most maxBytes of them but at
	// least one, as file slices. The caller releases the result.
	Fetch(topic string, partition int32, offset int64, maxBytes int) (log.FetchResult, error)
	// ListOffsets answers Kafka's ListOffsets: timestamp is a time in
	// milliseconds, or log.EarliestTimestamp, log.LatestTimestamp,
	// log.MaxTimestamp. ok is false when no record is that recent.
	ListOffsets(topic string, partition int32, timestamp int64) (ot log.OffsetAndTimestamp, ok bool, err error)
}

// DirHandler serves the partitions of an open log directory.
type DirHandler struct {
	Dir *log.Dir
}

var _ Handler = DirHandler{}

// Produce appends batch with log.Log.Append: the log validates it as a Kafka
// leader does (CRC, sizes, base offset 0, record layout, timestamps), assigns
// its offsets by rewriting its base offset, stamps its leader epoch, and
// appends it. A refused batch is an error matching log.ErrInvalidRecord,
// record.ErrCorrupt, log.ErrRecordTooLarge or log.ErrInvalidTimestamp.
func (h DirHandler) Produce(topic string, partition int32, batch []byte) (log.AppendResult, error) {
	l, err := h.Dir.Partition(topic, partition)
	if err != nil {
		return log.AppendResult{}, err
	}
	return l.Append(batch)
}

// Fetch reads with log.Log.Read, which returns a reference-counted file
// slice rather than a copy.
func (h DirHandler) Fetch(topic string, partition int32, offset int64, maxBytes int) (log.FetchResult, error) {
	l, err := h.Dir.Partition(topic, partition)
	if err != nil {
		return log.FetchResult{}, err
	}
	return l.Read(offset, maxBytes, true)
}

// ListOffsets answers with log.Log.OffsetForTimestamp.
func (h DirHandler) ListOffsets(topic string, partition int32, timestamp int64) (log.OffsetAndTimestamp, bool, error) {
	l, err := h.Dir.Partition(topic, partition)
	if err != nil {
		return log.OffsetAndTimestamp{}, false, err
	}
	return l.OffsetForTimestamp(timestamp)
}

// The example's framing, big-endian like Kafka's but nothing else like it.
// A request is
//
//	length uint32 | api uint8 | topic length uint16 | topic | partition int32 | body
//
// with body: Produce the batch; Fetch offset int64, maxBytes int32;
// ListOffsets timestamp int64. A response is
//
//	length uint32 | code uint8 | body
//
// with code 0 and body: Produce baseOffset int64, lastOffset int64,
// logAppendTime int64; Fetch highWatermark int64, then the batches;
// ListOffsets found uint8, offset int64, timestamp int64. A non-zero code
// is an error, and the body its message.
const (
	apiProduce     = 1
	apiFetch       = 2
	apiListOffsets = 3

	maxRequestBytes = 16 << 20
)

// Error codes of the example's framing, for the errors a client may want
// to tell apart.
var errorCodes = []struct {
	code byte
	err  error
}{
	{1, log.ErrInvalidRecord},
	{2, record.ErrCorrupt},
	{3, log.ErrOffsetOutOfRange},
	{4, log.ErrUnknownTopicOrPartition},
	{5, log.ErrRecordTooLarge},
	{6, log.ErrInvalidTimestamp},
}

const codeUnknown = 255

// RemoteError is an error the server returned. It matches the sentinel its
// code stands for under errors.Is.
type RemoteError struct {
	Code    byte
	Message string
}

func (e *RemoteError) Error() string { return "broker: " + e.Message }

// Is reports whether target is the sentinel of e's code.
func (e *RemoteError) Is(target error) bool {
	for _, c := range errorCodes {
		if c.code == e.Code && c.err == target {
			return true
		}
	}
	return false
}

func errorCode(err error) byte {
	for _, c := range errorCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return codeUnknown
}

// Server serves a Handler over listeners, one goroutine per connection.
// Serve starts them; Close closes the listeners and the connections and
// waits for every connection's goroutine to return. A Server is safe for
// concurrent use.
type Server struct {
	h Handler

	mu        sync.Mutex // protects the fields below
	listeners []net.Listener
	conns     map[net.Conn]struct{}
	closed    bool

	wg sync.WaitGroup
}

// NewServer returns a server for h.
func NewServer(h Handler) *Server {
	return &Server{h: h, conns: make(map[net.Conn]struct{})}
}

// Serve accepts connections on ln until ln fails or Close is called, and
// returns the listener's error (nil after Close).
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ln.Close()
	}
	s.listeners = append(s.listeners, ln)
	s.mu.Unlock()
	for {
		conn, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			return err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = conn.Close()
			return nil
		}
		s.conns[conn] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serveConn(conn)
			s.mu.Lock()
			delete(s.conns, conn)
			s.mu.Unlock()
			_ = conn.Close()
		}()
	}
}

// Close closes the listeners and every connection, and waits for the
// connections' goroutines.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for _, ln := range s.listeners {
		_ = ln.Close()
	}
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// serveConn answers requests until the connection fails or closes.
func (s *Server) serveConn(conn net.Conn) {
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(conn, hdr[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n < 7 || n > maxRequestBytes {
			return // not our framing: drop the connection
		}
		req := make([]byte, n)
		if _, err := io.ReadFull(conn, req); err != nil {
			return
		}
		if err := s.handle(conn, req); err != nil {
			return
		}
	}
}

// handle answers one request.
func (s *Server) handle(conn net.Conn, req []byte) error {
	api := req[0]
	tlen := int(binary.BigEndian.Uint16(req[1:]))
	if len(req) < 3+tlen+4 {
		return writeError(conn, fmt.Errorf("short request"))
	}
	topic := string(req[3 : 3+tlen])
	partition := int32(binary.BigEndian.Uint32(req[3+tlen:]))
	body := req[3+tlen+4:]
	switch api {
	case apiProduce:
		res, err := s.h.Produce(topic, partition, body)
		if err != nil {
			return writeError(conn, err)
		}
		return writeResponse(conn, be64(res.BaseOffset), be64(res.LastOffset), be64(res.LogAppendTime))
	case apiFetch:
		if len(body) != 12 {
			return writeError(conn, fmt.Errorf("bad fetch request"))
		}
		offset := int64(binary.BigEndian.Uint64(body))
		maxBytes := int(binary.BigEndian.Uint32(body[8:]))
		res, err := s.h.Fetch(topic, partition, offset, maxBytes)
		if err != nil {
			return writeError(conn, err)
		}
		defer res.Release()
		var size int64
		if res.Slice != nil {
			size = res.Slice.Size
		}
		// The header first, then the batches straight from the segment
		// file to the socket: sendfile(2) on Linux for a *net.TCPConn.
		var h [4 + 1 + 8]byte
		binary.BigEndian.PutUint32(h[:], uint32(1+8+size))
		binary.BigEndian.PutUint64(h[5:], uint64(res.HighWatermark))
		if _, err := conn.Write(h[:]); err != nil {
			return err
		}
		if res.Slice == nil {
			return nil
		}
		_, err = res.Slice.WriteTo(conn)
		return err
	case apiListOffsets:
		if len(body) != 8 {
			return writeError(conn, fmt.Errorf("bad list offsets request"))
		}
		ot, ok, err := s.h.ListOffsets(topic, partition, int64(binary.BigEndian.Uint64(body)))
		if err != nil {
			return writeError(conn, err)
		}
		found := []byte{0}
		if ok {
			found[0] = 1
		}
		return writeResponse(conn, found, be64(ot.Offset), be64(ot.Timestamp))
	default:
		return writeError(conn, fmt.Errorf("unknown api %d", api))
	}
}

func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func writeResponse(w io.Writer, parts ...[]byte) error {
	msg := []byte{0, 0, 0, 0, 0}
	for _, p := range parts {
		msg = append(msg, p...)
	}
	binary.BigEndian.PutUint32(msg, uint32(len(msg)-4))
	_, err := w.Write(msg)
	return err
}

func writeError(w io.Writer, err error) error {
	msg := append([]byte{0, 0, 0, 0, errorCode(err)}, err.Error()...)
	binary.BigEndian.PutUint32(msg, uint32(len(msg)-4))
	_, werr := w.Write(msg)
	return werr
}

// Client speaks the example's framing over one connection. It is not safe
// for concurrent use.
type Client struct {
	conn net.Conn
}

// NewClient returns a client using conn.
func NewClient(conn net.Conn) *Client { return &Client{conn: conn} }

// call sends one request and returns the response body.
func (c *Client) call(api byte, topic string, partition int32, body []byte) ([]byte, error) {
	req := make([]byte, 4, 4+1+2+len(topic)+4+len(body))
	req = append(req, api)
	req = binary.BigEndian.AppendUint16(req, uint16(len(topic)))
	req = append(req, topic...)
	req = binary.BigEndian.AppendUint32(req, uint32(partition))
	req = append(req, body...)
	binary.BigEndian.PutUint32(req, uint32(len(req)-4))
	if _, err := c.conn.Write(req); err != nil {
		return nil, err
	}
	var hdr [5]byte
	if _, err := io.ReadFull(c.conn, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n < 1 || n > maxRequestBytes {
		return nil, fmt.Errorf("broker: bad response length %d", n)
	}
	resp := make([]byte, n-1)
	if _, err := io.ReadFull(c.conn, resp); err != nil {
		return nil, err
	}
	if hdr[4] != 0 {
		return nil, &RemoteError{Code: hdr[4], Message: string(resp)}
	}
	return resp, nil
}

// Produce appends batch to a partition and returns the offsets it got and,
// on a LogAppendTime topic, the append time (else −1).
func (c *Client) Produce(topic string, partition int32, batch []byte) (baseOffset, lastOffset, logAppendTime int64, err error) {
	resp, err := c.call(apiProduce, topic, partition, batch)
	if err != nil {
		return 0, 0, 0, err
	}
	if len(resp) != 24 {
		return 0, 0, 0, fmt.Errorf("broker: bad produce response")
	}
	return int64(binary.BigEndian.Uint64(resp)), int64(binary.BigEndian.Uint64(resp[8:])), int64(binary.BigEndian.Uint64(resp[16:])), nil
}

// Fetch returns the batches from offset (whole batches, the first may start
// before offset) and the partition's high watermark.
func (c *Client) Fetch(topic string, partition int32, offset int64, maxBytes int) (batches []byte, highWatermark int64, err error) {
	body := binary.BigEndian.AppendUint64(nil, uint64(offset))
	body = binary.BigEndian.AppendUint32(body, uint32(maxBytes))
	resp, err := c.call(apiFetch, topic, partition, body)
	if err != nil {
		return nil, 0, err
	}
	if len(resp) < 8 {
		return nil, 0, fmt.Errorf("broker: bad fetch response")
	}
	return resp[8:], int64(binary.BigEndian.Uint64(resp)), nil
}

// ListOffsets asks for the offset of timestamp (or one of log's special
// timestamps).
func (c *Client) ListOffsets(topic string, partition int32, timestamp int64) (ot log.OffsetAndTimestamp, ok bool, err error) {
	resp, err := c.call(apiListOffsets, topic, partition, binary.BigEndian.AppendUint64(nil, uint64(timestamp)))
	if err != nil {
		return ot, false, err
	}
	if len(resp) != 17 {
		return ot, false, fmt.Errorf("broker: bad list offsets response")
	}
	ot.Offset = int64(binary.BigEndian.Uint64(resp[1:]))
	ot.Timestamp = int64(binary.BigEndian.Uint64(resp[9:]))
	return ot, resp[0] == 1, nil
}
