// Package perfsuite holds the performance workloads of docs/performance.md's
// "Against a plain file" table and the baseline they are measured
// against: one process, each workload run through a plain file of framed
// records, through the raw log API and through the producer and consumer,
// interleaved, so that every figure is a ratio to the baseline of the
// same run.
//
// The baseline is what an append-only file can do here: frames of
// [length u32][crc32c u32][key length u32][key][value] through a 1 MiB
// write buffer, a dense in-memory array of frame positions, fdatasync for
// a durable flush and pread for a point read. It checks nothing a log
// checks and keeps no index on disk, so it is the practical limit.
//
// The workloads, over one partition of 16-byte keys and JSON-like values
// whose fields vary from record to record (so that codecs see realistic
// ratios):
//
//   - W1: append Records records of about 100 bytes in calls of 1,000,
//     one flush at the end;
//   - W2: Records/10 records of 1 KiB in calls of 1,000;
//   - W3: W1 with a durable flush after every call;
//   - R1: after W1, read everything from the first offset, checking
//     every value;
//   - R2: after W1, PointReads reads of uniformly random offsets, each
//     checked.
//
// The raw path is record.Builder and log.Log.Append (a call's records in
// one batch, or in batches of 512 KiB where they are more), Log.Sync,
// log.RecordReader and Log.ReadRecord; the client path is producer.Send
// per record with a callback counting acknowledgements and Kafka's
// defaults (acks=1 for W1 and W2, acks=all and idempotence for W3, each
// call of 1,000 followed by Flush), and a consumer that assigns, seeks
// and polls (R1) or seeks and polls once per read (R2).
package perfsuite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/internal/cputime"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
)

// Workload names a workload.
type Workload string

// The workloads (see the package doc).
const (
	W1 Workload = "W1"
	W2 Workload = "W2"
	W3 Workload = "W3"
	R1 Workload = "R1"
	R2 Workload = "R2"
)

// Workloads lists them in order.
var Workloads = []Workload{W1, W2, W3, R1, R2}

// Path names a way through kafkalite.
type Path string

// The paths.
const (
	Baseline Path = "baseline"
	Raw      Path = "raw"
	Client   Path = "client"
)

// Options size a run.
type Options struct {
	Records    int                // W1, W3, R1 and R2 write this many; W2 a tenth
	PointReads int                // R2's reads
	Codec      record.Compression // for the raw and client paths; the baseline never compresses
	Dir        string             // where files go: a fresh directory per run is made inside
	Workloads  []Workload         // Table's workloads; nil is all of them
}

// DefaultOptions are the sizes of docs/performance.md's figures.
func DefaultOptions() Options {
	return Options{Records: 1_000_000, PointReads: 10_000, Codec: record.None, Dir: os.TempDir()}
}

const perCall = 1000

// Result is one run of one workload on one path.
type Result struct {
	Workload Workload
	Path     Path
	Records  int
	Elapsed  time.Duration
	CPU      time.Duration // the process's CPU time over the run
}

// PerSecond is the run's records per second.
func (r Result) PerSecond() float64 { return float64(r.Records) / r.Elapsed.Seconds() }

// ErrMismatch is returned when a read finds a record other than the one
// written.
var ErrMismatch = errors.New("perfsuite: record read back differs")

// Key is record i's key: 16 bytes.
func Key(i int) []byte { return fmt.Appendf(nil, "key-%012d", i) }

// Value is record i's value: a JSON object of about size bytes whose
// fields vary with i.
func Value(i, size int) []byte {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	b := fmt.Appendf(nil, `{"id":%d,"user":"u%05d","event":"%s","amount":%d.%02d,"ok":%t,"pad":"`,
		i, r.IntN(20000), events[r.IntN(len(events))], r.IntN(10000), r.IntN(100), r.IntN(4) != 0)
	for len(b) < size-2 {
		b = append(b, "abcdefghijklmnopqrstuvwxyz0123456789"[r.IntN(36)])
	}
	return append(b, `"}`...)
}

var events = []string{"view", "click", "purchase", "refund", "signup", "login"}

// values precomputes the values of n records of size bytes, so that
// generating them is not timed.
func values(n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = Value(i, size)
	}
	return out
}

// ValueSize is the size of w's values.
func ValueSize(w Workload) int {
	if w == W2 {
		return 1024
	}
	return 100
}

// RecordsOf is how many records a run of w with o counts: those written,
// read or (R2) looked up.
func RecordsOf(w Workload, o Options) int {
	switch w {
	case W2:
		return o.Records / 10
	case R2:
		return o.PointReads
	}
	return o.Records
}

// Run runs workload w on path p with o in a fresh directory, which it
// removes.
func Run(ctx context.Context, w Workload, p Path, o Options) (Result, error) {
	dir, err := os.MkdirTemp(o.Dir, "perfsuite-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	n, size := o.Records, ValueSize(w)
	if w == W2 {
		n = o.Records / 10
	}
	vals := values(n, size)
	var s subject
	switch p {
	case Baseline:
		s, err = newPlain(dir)
	case Raw:
		s, err = newRawLog(ctx, dir, o.Codec)
	case Client:
		s, err = newClient(ctx, dir, o.Codec, w == W3)
	default:
		err = fmt.Errorf("perfsuite: no path %q", p)
	}
	if err != nil {
		return Result{}, err
	}
	defer s.close()
	res := Result{Workload: w, Path: p}
	if w == R1 || w == R2 {
		if err := writeAll(ctx, s, vals, false); err != nil {
			return Result{}, err
		}
		if err := s.settle(ctx); err != nil {
			return Result{}, err
		}
	}
	start, cpu0 := time.Now(), cputime.Process()
	switch w {
	case W1, W2:
		err, res.Records = writeAll(ctx, s, vals, false), n
	case W3:
		err, res.Records = writeAll(ctx, s, vals, true), n
	case R1:
		res.Records = n
		err = s.readAll(ctx, func(i int, key, value []byte) error { return check(i, key, value, vals) }, n)
	case R2:
		res.Records = o.PointReads
		r := rand.New(rand.NewPCG(42, 42))
		for range o.PointReads {
			i := r.IntN(n)
			key, value, rerr := s.readAt(ctx, i)
			if rerr != nil {
				err = rerr
				break
			}
			if err = check(i, key, value, vals); err != nil {
				break
			}
		}
	}
	res.Elapsed, res.CPU = time.Since(start), cputime.Process()-cpu0
	return res, err
}

func check(i int, key, value []byte, vals [][]byte) error {
	if i >= len(vals) || !bytes.Equal(key, Key(i)) || !bytes.Equal(value, vals[i]) {
		return fmt.Errorf("%w: record %d: key %q", ErrMismatch, i, key)
	}
	return nil
}

func writeAll(ctx context.Context, s subject, vals [][]byte, durable bool) error {
	for from := 0; from < len(vals); from += perCall {
		to := min(from+perCall, len(vals))
		if err := s.append(ctx, from, vals[from:to]); err != nil {
			return err
		}
		if durable {
			if err := s.flush(ctx, true); err != nil {
				return err
			}
		}
	}
	if !durable {
		return s.flush(ctx, false)
	}
	return nil
}

// subject is a path under test.
type subject interface {
	// append writes records first, first+1, ... with values vals.
	append(ctx context.Context, first int, vals [][]byte) error
	// flush makes the appends visible, and durable if asked.
	flush(ctx context.Context, durable bool) error
	// settle readies reads after the writes of a read workload.
	settle(ctx context.Context) error
	readAll(ctx context.Context, fn func(i int, key, value []byte) error, n int) error
	readAt(ctx context.Context, i int) (key, value []byte, err error)
	close() error
}

// plain is the baseline.
type plain struct {
	f   *os.File
	w   *bufio.Writer
	pos []int64 // frame positions by record index
	end int64
	buf []byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newPlain(dir string) (*plain, error) {
	f, err := os.Create(filepath.Join(dir, "plain.log"))
	if err != nil {
		return nil, err
	}
	return &plain{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

func (p *plain) append(_ context.Context, first int, vals [][]byte) error {
	for i, v := range vals {
		key := Key(first + i)
		n := 4 + len(key) + len(v)
		var h [12]byte
		binary.BigEndian.PutUint32(h[0:], uint32(n))
		binary.BigEndian.PutUint32(h[8:], uint32(len(key)))
		c := crc32.Update(0, castagnoli, h[8:12])
		c = crc32.Update(c, castagnoli, key)
		binary.BigEndian.PutUint32(h[4:], crc32.Update(c, castagnoli, v))
		p.pos = append(p.pos, p.end)
		if _, err := p.w.Write(h[:]); err != nil {
			return err
		}
		if _, err := p.w.Write(key); err != nil {
			return err
		}
		if _, err := p.w.Write(v); err != nil {
			return err
		}
		p.end += int64(8 + n)
	}
	return nil
}

func (p *plain) flush(_ context.Context, durable bool) error {
	if err := p.w.Flush(); err != nil {
		return err
	}
	if durable {
		return fdatasync(p.f)
	}
	return nil
}

func (p *plain) settle(context.Context) error { return nil }

func (p *plain) readAll(_ context.Context, fn func(i int, key, value []byte) error, n int) error {
	r := bufio.NewReaderSize(io.NewSectionReader(p.f, 0, p.end), 1<<20)
	for i := range n {
		key, value, err := p.frame(r)
		if err != nil {
			return err
		}
		if err := fn(i, key, value); err != nil {
			return err
		}
	}
	return nil
}

func (p *plain) frame(r io.Reader) (key, value []byte, err error) {
	var h [12]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, nil, err
	}
	n, klen := binary.BigEndian.Uint32(h[0:]), binary.BigEndian.Uint32(h[8:])
	if n < 4 || klen > n-4 || n > 1<<24 {
		return nil, nil, fmt.Errorf("%w: a frame of %d bytes", ErrMismatch, n)
	}
	if cap(p.buf) < int(n-4) {
		p.buf = make([]byte, n-4)
	}
	body := p.buf[:n-4]
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, nil, err
	}
	if crc32.Update(crc32.Update(0, castagnoli, h[8:12]), castagnoli, body) != binary.BigEndian.Uint32(h[4:]) {
		return nil, nil, fmt.Errorf("%w: a frame's CRC", ErrMismatch)
	}
	return body[:klen], body[klen:], nil
}

func (p *plain) readAt(_ context.Context, i int) (key, value []byte, err error) {
	return p.frame(io.NewSectionReader(p.f, p.pos[i], 1<<24))
}

func (p *plain) close() error { return p.f.Close() }

const topic = "perf"

func openDir(ctx context.Context, dir string) (*log.Dir, *log.Log, error) {
	d, err := log.Open(ctx, filepath.Join(dir, "kafkalite"), log.DefaultConfig())
	if err != nil {
		return nil, nil, err
	}
	if _, err := d.CreateTopic(ctx, topic, 1, nil); err != nil {
		return nil, nil, errors.Join(err, d.Close())
	}
	l, err := d.Partition(topic, 0)
	if err != nil {
		return nil, nil, errors.Join(err, d.Close())
	}
	return d, l, nil
}

// rawLog is the raw log API.
type rawLog struct {
	d     *log.Dir
	l     *log.Log
	codec record.Compression
	b     record.Builder
	rr    log.RecordReader
}

func newRawLog(ctx context.Context, dir string, codec record.Compression) (*rawLog, error) {
	d, l, err := openDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	return &rawLog{d: d, l: l, codec: codec}, nil
}

// maxBatch keeps a raw batch under the topic's max.message.bytes (1 MiB
// by default): a call of 1,000 records of 1 KiB is two batches.
const maxBatch = 512 << 10

func (r *rawLog) append(_ context.Context, first int, vals [][]byte) error {
	now := time.Now().UnixMilli()
	for len(vals) > 0 {
		r.b.Reset(record.BatchHeader{Attributes: record.Attributes(0).WithCompression(r.codec),
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
		n := 0
		for ; n < len(vals) && r.b.Size() < maxBatch; n++ {
			if err := r.b.Append(now, Key(first+n), vals[n], nil); err != nil {
				return err
			}
		}
		batch, err := r.b.Build()
		if err != nil {
			return err
		}
		if _, err := r.l.Append(batch); err != nil {
			return err
		}
		first, vals = first+n, vals[n:]
	}
	return nil
}

func (r *rawLog) flush(ctx context.Context, durable bool) error {
	if durable {
		return r.l.Sync(ctx, r.l.LogEndOffset())
	}
	return nil
}

func (r *rawLog) settle(context.Context) error { return nil }

func (r *rawLog) readAll(_ context.Context, fn func(i int, key, value []byte) error, n int) error {
	off := int64(0)
	for off < int64(n) {
		next, err := r.rr.ReadRecords(r.l, off, 1<<20, func(rec *record.Record, _ *record.BatchHeader) error {
			return fn(int(rec.Offset), rec.Key, rec.Value)
		})
		if err != nil {
			return err
		}
		if next == off {
			return fmt.Errorf("%w: no progress at offset %d", ErrMismatch, off)
		}
		off = next
	}
	return nil
}

func (r *rawLog) readAt(_ context.Context, i int) (key, value []byte, err error) {
	rec, ok, err := r.l.ReadRecord(int64(i))
	if err != nil || !ok || rec.Offset != int64(i) {
		return nil, nil, errors.Join(err, fmt.Errorf("%w: offset %d not found", ErrMismatch, i))
	}
	return rec.Key, rec.Value, nil
}

func (r *rawLog) close() error { return r.d.Close() }

// client is the producer and the consumer.
type client struct {
	d  *log.Dir
	p  *producer.Producer
	c  *consumer.Consumer
	tp log.TopicPartition

	// Each Send has a callback, as a user's has, counting the
	// acknowledgements; flush checks them all.
	cb    producer.Callback
	sent  int64
	acked atomic.Int64
	mu    sync.Mutex
	err   error // the first error a callback saw
}

// ack is the records' callback.
func (c *client) ack(_ producer.RecordMetadata, err error) {
	if err != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	}
	c.acked.Add(1)
}

func newClient(ctx context.Context, dir string, codec record.Compression, acksAll bool) (*client, error) {
	d, _, err := openDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	pcfg := producer.DefaultConfig()
	pcfg.CompressionType = codec
	if !acksAll {
		pcfg.Acks, pcfg.EnableIdempotence = producer.AcksLeader, false
	}
	p, err := producer.New(d, pcfg)
	if err != nil {
		return nil, errors.Join(err, d.Close())
	}
	ccfg := consumer.DefaultConfig()
	c, err := consumer.New(d, ccfg)
	if err != nil {
		return nil, errors.Join(err, p.Close(ctx), d.Close())
	}
	cl := &client{d: d, p: p, c: c, tp: log.TopicPartition{Topic: topic, Partition: 0}}
	cl.cb = cl.ack
	return cl, nil
}

func (c *client) append(ctx context.Context, first int, vals [][]byte) error {
	rec := producer.Record{Topic: c.tp.Topic}
	for i, v := range vals {
		rec.Key, rec.Value = Key(first+i), v
		if _, err := c.p.Send(ctx, &rec, c.cb); err != nil {
			return err
		}
		c.sent++
	}
	return nil
}

func (c *client) flush(ctx context.Context, _ bool) error {
	if err := c.p.Flush(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if n := c.acked.Load(); n != c.sent {
		return fmt.Errorf("%w: %d records acknowledged of %d sent", ErrMismatch, n, c.sent)
	}
	return nil
}

func (c *client) settle(context.Context) error { return c.c.Assign([]log.TopicPartition{c.tp}) }

func (c *client) readAll(ctx context.Context, fn func(i int, key, value []byte) error, n int) error {
	if err := c.c.Seek(c.tp, 0); err != nil {
		return err
	}
	for seen := 0; seen < n; {
		recs, err := c.c.Poll(ctx)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := fn(int(r.Offset), r.Key, r.Value); err != nil {
				return err
			}
			seen++
		}
	}
	return nil
}

func (c *client) readAt(ctx context.Context, i int) (key, value []byte, err error) {
	if err := c.c.Seek(c.tp, int64(i)); err != nil {
		return nil, nil, err
	}
	for {
		recs, err := c.c.Poll(ctx)
		if err != nil {
			return nil, nil, err
		}
		if len(recs) > 0 {
			r := recs[0]
			if r.Offset != int64(i) {
				return nil, nil, fmt.Errorf("%w: Seek(%d) then Poll gave offset %d", ErrMismatch, i, r.Offset)
			}
			return r.Key, r.Value, nil
		}
	}
}

func (c *client) close() error {
	ctx := context.Background()
	return errors.Join(c.c.Close(ctx), c.p.Close(ctx), c.d.Close())
}

// Row is one workload's figures over a Table's repetitions: medians of
// records per second on each path, and the CPU time per record.
type Row struct {
	Workload              Workload
	Baseline, Raw, Client float64       // records/s, medians
	RawCPU, ClientCPU     time.Duration // CPU per record, medians
}

// RawRatio and ClientRatio are the paths' medians over the baseline's.
func (r Row) RawRatio() float64    { return r.Raw / r.Baseline }
func (r Row) ClientRatio() float64 { return r.Client / r.Baseline }

// Table runs every workload reps times, each repetition the baseline, the
// raw path and the client path one after the other, and returns a Row per
// workload. progress, if not nil, sees every run.
func Table(ctx context.Context, o Options, reps int, progress func(Result)) ([]Row, error) {
	var rows []Row
	ws := o.Workloads
	if ws == nil {
		ws = Workloads
	}
	for _, w := range ws {
		runs := map[Path][]Result{}
		for range reps {
			for _, p := range []Path{Baseline, Raw, Client} {
				res, err := Run(ctx, w, p, o)
				if err != nil {
					return rows, fmt.Errorf("%s %s: %w", w, p, err)
				}
				if progress != nil {
					progress(res)
				}
				runs[p] = append(runs[p], res)
			}
		}
		rows = append(rows, Row{Workload: w,
			Baseline: median(runs[Baseline], Result.PerSecond), Raw: median(runs[Raw], Result.PerSecond),
			Client: median(runs[Client], Result.PerSecond),
			RawCPU: time.Duration(median(runs[Raw], cpuPerRecord)), ClientCPU: time.Duration(median(runs[Client], cpuPerRecord))})
	}
	return rows, nil
}

func cpuPerRecord(r Result) float64 { return float64(r.CPU) / float64(r.Records) }

func median(rs []Result, f func(Result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// Markdown prints rows as docs/performance.md's table.
func Markdown(rows []Row) string {
	var b strings.Builder
	b.WriteString("| workload | baseline records/s | raw log API | producer / consumer | CPU per record, raw / client |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s (%.2f) | %s (%.2f) | %v / %v |\n", r.Workload, rate(r.Baseline),
			rate(r.Raw), r.RawRatio(), rate(r.Client), r.ClientRatio(), r.RawCPU.Round(10*time.Nanosecond), r.ClientCPU.Round(10*time.Nanosecond))
	}
	return b.String()
}

func rate(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0f k", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// Shared is the workload of many senders: goroutines sending keyed records
// of valueSize bytes to a topic of partitions partitions through one
// producer with Kafka's defaults (acks=all, idempotence, linger.ms 5,
// batch.size 16 KiB), records in all, then Flush. It has no baseline: it
// measures the producer under contention, modelled on a user's service
// (6 partitions, 4 goroutines, 200-byte JSON values; docs/performance.md
// compares it with the figure that service measured).
func Shared(ctx context.Context, dir string, partitions, goroutines, records, valueSize int, codec record.Compression) (Result, error) {
	dir, err := os.MkdirTemp(dir, "perfsuite-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	d, err := log.Open(ctx, filepath.Join(dir, "kafkalite"), log.DefaultConfig())
	if err != nil {
		return Result{}, err
	}
	defer d.Close()
	if _, err := d.CreateTopic(ctx, topic, int32(partitions), nil); err != nil {
		return Result{}, err
	}
	cfg := producer.DefaultConfig()
	cfg.CompressionType = codec
	p, err := producer.New(d, cfg)
	if err != nil {
		return Result{}, err
	}
	defer p.Close(ctx)
	vals := values(records, valueSize)
	per := records / goroutines
	errs := make(chan error, goroutines)
	start, cpu0 := time.Now(), cputime.Process()
	for g := range goroutines {
		go func() {
			rec := producer.Record{Topic: topic}
			for i := g * per; i < (g+1)*per; i++ {
				rec.Key, rec.Value = Key(i), vals[i]
				if _, err := p.Send(ctx, &rec, nil); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range goroutines {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	if err == nil {
		err = p.Flush(ctx)
	}
	res := Result{Workload: "shared", Path: Client, Records: per * goroutines, Elapsed: time.Since(start), CPU: cputime.Process() - cpu0}
	if err != nil {
		return res, err
	}
	// Every record is there once.
	var n int64
	for part := range int32(partitions) {
		l, err := d.Partition(topic, part)
		if err != nil {
			return res, err
		}
		n += l.LogEndOffset()
	}
	if n != int64(res.Records) {
		return res, fmt.Errorf("%w: %d records in the topic, %d sent", ErrMismatch, n, res.Records)
	}
	return res, nil
}
