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

	mu      sync.Mutex
	addrs   map[int32]string        // the address each broker listens on
	running map[int32]bool          // served and not stopped on command
	done    map[int32]chan struct{} // closed when the broker's ServeBroker returned
	live    int                     // ServeBroker calls not returned
	closed  bool                    // the server is ending: no more starts
}

// brokerEnd is a broker's ServeBroker having returned.
type brokerEnd struct {
	id  int32
	err error
}

func newBrokerRunner(ctx context.Context, s *server.Server) *brokerRunner {
	n := len(s.Brokers())
	return &brokerRunner{s: s, ctx: ctx, ended: make(chan brokerEnd, n),
		addrs: map[int32]string{}, running: map[int32]bool{}, done: map[int32]chan struct{}{}}
}

// startLocked serves broker id on ln. REQUIRES r.mu held.
func (r *brokerRunner) startLocked(id int32, ln net.Listener) {
	r.addrs[id] = ln.Addr().String()
	r.running[id] = true
	done := make(chan struct{})
	r.done[id] = done
	r.live++
	go func() {
		err := r.s.ServeBroker(r.ctx, id, ln)
		close(done)
		r.ended <- brokerEnd{id, err}
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
		stopped := !r.running[e.id]
		if stopped && errors.Is(e.err, net.ErrClosed) {
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
	if !r.running[id] {
		r.mu.Unlock()
		return nil // stopped already, as docker compose stop answers
	}
	r.running[id] = false
	done := r.done[id]
	r.mu.Unlock()
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
	case r.running[id]:
		r.mu.Unlock()
		return nil // running already, as docker compose start answers
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		r.mu.Unlock()
		return fmt.Errorf("broker %d: %w", id, err)
	}
	r.startLocked(id, ln)
	done := r.done[id]
	r.mu.Unlock()
	for tick := time.NewTicker(5 * time.Millisecond); r.s.BrokerAddr(id) == ""; {
		select {
		case <-done:
			tick.Stop()
			return fmt.Errorf("broker %d ended as it started", id)
		case <-ctx.Done():
			tick.Stop()
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
		if r.running[id] {
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
