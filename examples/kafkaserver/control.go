package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
)

// brokerRunner serves the virtual brokers of a cluster (-brokers), each
// on its own port, and stops and starts them on command (-control): a
// stopped broker's port closes; started again, it listens on the same
// port.
type brokerRunner struct {
	s   *server.Server
	ctx context.Context
	// ended gets each broker's end; at most one ServeBroker runs per
	// broker, so len(ids) slots never block.
	ended chan brokerEnd

	mu     sync.Mutex
	addrs  map[int32]string     // the address each broker listens on
	runs   map[int32]*brokerRun // each broker's last start
	live   int                  // ServeBroker calls not returned
	closed bool                 // the server is ending: no more starts
}

// brokerRun is one start of a broker: its ServeBroker call.
type brokerRun struct {
	done chan struct{} // closed when ServeBroker returned
	// stopped says a stop on command ended (or is ending) it; guarded by
	// the runner's mu.
	stopped bool
}

// brokerEnd is a broker's ServeBroker having returned.
type brokerEnd struct {
	run *brokerRun
	err error
}

func newBrokerRunner(ctx context.Context, s *server.Server) *brokerRunner {
	return &brokerRunner{s: s, ctx: ctx, ended: make(chan brokerEnd, len(s.Brokers())),
		addrs: map[int32]string{}, runs: map[int32]*brokerRun{}}
}

// running says whether broker id is served and not stopped on command.
// REQUIRES r.mu held.
func (r *brokerRunner) runningLocked(id int32) bool {
	run := r.runs[id]
	return run != nil && !run.stopped
}

// startLocked serves broker id on ln. REQUIRES r.mu held.
func (r *brokerRunner) startLocked(id int32, ln net.Listener) {
	r.addrs[id] = ln.Addr().String()
	run := &brokerRun{done: make(chan struct{})}
	r.runs[id] = run
	r.live++
	go func() {
		err := r.s.ServeBroker(r.ctx, id, ln)
		close(run.done)
		r.ended <- brokerEnd{run, err}
	}()
}

// wait returns the error of the first broker to end other than by a stop
// on command (that ends the server), or nil when ctx ended. It then
// refuses starts; the caller closes the server and calls drain.
func (r *brokerRunner) wait() error {
	for {
		var e brokerEnd
		select {
		case e = <-r.ended:
		case <-r.ctx.Done():
			r.mu.Lock()
			r.closed = true
			r.mu.Unlock()
			return nil
		}
		r.mu.Lock()
		r.live--
		// A run stopped on command, though its broker may be running
		// again by now.
		if e.run.stopped && errors.Is(e.err, net.ErrClosed) {
			r.mu.Unlock()
			continue
		}
		r.closed = true
		r.mu.Unlock()
		if errors.Is(e.err, context.Canceled) {
			return nil
		}
		return e.err
	}
}

// drain waits for every broker still serving to return (the server being
// closed), and gives their errors other than the server's closing.
func (r *brokerRunner) drain() []error {
	var errs []error
	for {
		r.mu.Lock()
		live := r.live
		r.mu.Unlock()
		if live == 0 {
			return errs
		}
		e := <-r.ended
		r.mu.Lock()
		r.live--
		r.mu.Unlock()
		if e.err != nil && !errors.Is(e.err, context.Canceled) && !errors.Is(e.err, server.ErrServerClosed) && !errors.Is(e.err, net.ErrClosed) {
			errs = append(errs, e.err)
		}
	}
}

// stop stops broker id as server.Server.StopBroker does and returns once
// it stopped serving.
func (r *brokerRunner) stop(ctx context.Context, id int32) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return errors.New("the server is stopping")
	}
	if _, ok := r.addrs[id]; !ok {
		r.mu.Unlock()
		return fmt.Errorf("no broker %d (brokers %v)", id, r.s.Brokers())
	}
	run := r.runs[id]
	if run == nil || run.stopped {
		r.mu.Unlock()
		return nil // stopped already, as docker compose stop answers
	}
	run.stopped = true
	done := run.done
	r.mu.Unlock()
	// A broker whose ServeBroker has not taken its listener yet would
	// be started again by it: stop it once it serves.
	if err := r.awaitServing(ctx, id, run); err != nil {
		if errors.Is(err, ctx.Err()) {
			return err
		}
		return nil // it ended on its own
	}
	if err := r.s.StopBroker(id); err != nil {
		return err
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// start serves broker id again on the port it had, and returns once
// Metadata lists it.
func (r *brokerRunner) start(ctx context.Context, id int32) error {
	r.mu.Lock()
	addr, ok := r.addrs[id]
	switch {
	case r.closed:
		r.mu.Unlock()
		return errors.New("the server is stopping")
	case !ok:
		r.mu.Unlock()
		return fmt.Errorf("no broker %d (brokers %v)", id, r.s.Brokers())
	case r.runningLocked(id):
		r.mu.Unlock()
		return nil // running already, as docker compose start answers
	}
	if prev := r.runs[id]; prev != nil {
		// Stopped: its ServeBroker has returned (stop waits for it),
		// unless a stop is still under way; wait for that too.
		r.mu.Unlock()
		select {
		case <-prev.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		r.mu.Lock()
		if r.closed || r.runs[id] != prev {
			r.mu.Unlock()
			return fmt.Errorf("broker %d changed state meanwhile; ask again", id)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		r.mu.Unlock()
		return fmt.Errorf("broker %d: %w", id, err)
	}
	r.startLocked(id, ln)
	run := r.runs[id]
	r.mu.Unlock()
	return r.awaitServing(ctx, id, run)
}

// awaitServing returns once the server serves broker id (Metadata lists
// it), or fails when run's ServeBroker returned first or ctx ended.
func (r *brokerRunner) awaitServing(ctx context.Context, id int32, run *brokerRun) error {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for r.s.BrokerAddr(id) == "" {
		select {
		case <-run.done:
			return fmt.Errorf("broker %d ended as it started", id)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// list is one line a broker: its id, the address it listens on, and
// running or stopped.
func (r *brokerRunner) list() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, id := range r.s.Brokers() {
		state := "stopped"
		if r.runningLocked(id) {
			state = "running"
		}
		fmt.Fprintf(&b, "%d %s %s\n", id, r.addrs[id], state)
	}
	return b.String()
}

// controlHandler is the -control HTTP API:
//
//	GET  /brokers                                  one line a broker: id, address, running or stopped
//	POST /brokers/{id}/stop                        stop the broker (server.Server.StopBroker)
//	POST /brokers/{id}/start                       serve it again on its port
//	POST /partitions/{topic}/{partition}/leader/{id}  make id the partition's leader (server.Server.MoveLeader)
//
// Answers are text: 200 with what was done, 400 for a request refused,
// 404 for an unknown path.
func (r *brokerRunner) controlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /brokers", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, r.list())
	})
	broker := func(f func(context.Context, int32) error, did string) http.HandlerFunc {
		return func(w http.ResponseWriter, req *http.Request) {
			id, err := strconv.ParseInt(req.PathValue("id"), 10, 32)
			if err == nil {
				err = f(req.Context(), int32(id))
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			fmt.Fprintf(w, "broker %d %s\n", id, did)
		}
	}
	mux.HandleFunc("POST /brokers/{id}/stop", broker(r.stop, "stopped"))
	mux.HandleFunc("POST /brokers/{id}/start", broker(r.start, "started"))
	mux.HandleFunc("POST /partitions/{topic}/{partition}/leader/{id}", func(w http.ResponseWriter, req *http.Request) {
		p, perr := strconv.ParseInt(req.PathValue("partition"), 10, 32)
		id, ierr := strconv.ParseInt(req.PathValue("id"), 10, 32)
		if err := errors.Join(perr, ierr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		topic := req.PathValue("topic")
		epoch, err := r.s.MoveLeader(topic, int32(p), int32(id))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%s-%d led by broker %d in leader epoch %d\n", topic, p, id, epoch)
	})
	return mux
}

// serveControl serves the control API on ln until ctx ends; the returned
// function stops it and waits for it.
func serveControl(ctx context.Context, ln net.Listener, h http.Handler) (stop func()) {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 16 << 10,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = hs.Serve(ln) // ends with http.ErrServerClosed on Close
	}()
	return func() {
		hs.Close()
		<-served
	}
}

// runControl is "kafkaserver control ADDR VERB [ARGS]": it asks the
// control API of a running kafkaserver (-control ADDR) to list, stop or
// start its brokers or move a partition's leader, prints the answer, and
// fails when the server refused.
func runControl(args []string, out, errOut io.Writer) int {
	usage := func() int {
		fmt.Fprintln(errOut, `usage: kafkaserver control host:port brokers
       kafkaserver control host:port stop|start BROKER
       kafkaserver control host:port leader TOPIC PARTITION BROKER`)
		return 2
	}
	if len(args) < 2 {
		return usage()
	}
	base := "http://" + args[0]
	var method, path string
	switch verb, rest := args[1], args[2:]; {
	case verb == "brokers" && len(rest) == 0:
		method, path = http.MethodGet, "/brokers"
	case (verb == "stop" || verb == "start") && len(rest) == 1:
		method, path = http.MethodPost, "/brokers/"+url.PathEscape(rest[0])+"/"+verb
	case verb == "leader" && len(rest) == 3:
		method, path = http.MethodPost, "/partitions/"+url.PathEscape(rest[0])+"/"+url.PathEscape(rest[1])+"/leader/"+url.PathEscape(rest[2])
	default:
		return usage()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, nil)
	if err != nil {
		fmt.Fprintln(errOut, "kafkaserver control:", err)
		return 2
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(errOut, "kafkaserver control:", err)
		return 1
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		fmt.Fprintln(errOut, "kafkaserver control:", err)
		return 1
	}
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(errOut, "kafkaserver control: %s", body)
		return 1
	}
	out.Write(body)
	return 0
}

// isControl says whether the command line is the control client's.
func isControl(args []string) bool {
	return len(args) > 0 && args[0] == "control" && !fileExists(args[0])
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
