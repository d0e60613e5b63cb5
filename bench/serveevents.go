package main

// The event figures of -serve: the latency from the save (runner/inmem's
// Hooks.Step) to the event read by a client, through the server's event
// route as 'baton serve' ships it (events-http) and, for comparison, on
// server/live's Hub served bare (events-live); and the memory idle streams
// cost (on the bare hub).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/metrics"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/store"
)

// gateAction is the action of the event figures' job: it ends when the
// driver lets it.
const gateAction = "gate"

// stepGap is the pause before each step of the latency figure: longer
// than the hub's gap between two events of a stream (1/DefaultMaxRate),
// so that what is measured is the delivery, not the coalescing.
const stepGap = time.Second/live.DefaultMaxRate + 10*time.Millisecond

// liveEnv is a runner/inmem on the memory store, with metrics, whose
// Hooks.Step notifies a live.Hub, and a job of gate actions in a seq. The
// hub is served bare on an httptest server, or by the server as shipped
// (server.New with the hub, a write token, request logs to a file,
// metrics, 'baton serve's timeouts) on 127.0.0.1.
type liveEnv struct {
	hub       *live.Hub
	srv       *httptest.Server // the bare hub's; nil through the server
	base      string           // the server's base URL
	token     string           // the token streams send; "" for the bare hub
	closeHTTP func() error
	runner    *inmem.Runner
	ran       chan error
	gate      chan struct{}
	id        job.ID

	mu      sync.Mutex
	stepAt  map[uint64]time.Time // when Hooks.Step saw each version of the job
	stepped chan uint64          // the versions Hooks.Step saw, in order
}

// startLive starts a liveEnv, its hub taking at most streams streams
// (live.DefaultMaxStreams as the server's default, or more), served
// through the server as shipped when route is set (its request log in
// dir), and submits its job of n gate actions.
func startLive(ctx context.Context, n, streams int, route bool, dir string) (*liveEnv, error) {
	e := &liveEnv{gate: make(chan struct{}), id: "events", stepAt: map[uint64]time.Time{}, stepped: make(chan uint64, n+16), ran: make(chan error, 1)}
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		return nil, err
	}
	reg := runner.NewRegistry()
	err = runner.Handle(reg, gateAction, func(ctx context.Context, _ struct{}) (struct{}, error) {
		select {
		case <-e.gate:
			return struct{}{}, nil
		case <-ctx.Done():
			return struct{}{}, ctx.Err()
		}
	})
	if err != nil {
		return nil, err
	}
	m.Actions(reg)
	st := m.Store(store.NewMemory())
	if e.hub, err = live.New(live.Options{Store: st, Notified: true, Changed: job.Changed, MaxStreams: max(streams, live.DefaultMaxStreams)}); err != nil {
		return nil, err
	}
	hooks := m.Hooks(&runner.Hooks{Step: func(j job.Job, _ int) {
		now := time.Now()
		e.mu.Lock()
		e.stepAt[j.Version()] = now
		e.mu.Unlock()
		e.hub.Notify(j.ID())
		select {
		case e.stepped <- j.Version():
		default:
		}
	}})
	if e.runner, err = inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: serveWorkers, Hooks: hooks}, Store: st}); err != nil {
		return nil, err
	}
	go func() { e.ran <- e.runner.Run(ctx) }()
	if route {
		if err := e.serveShipped(m, st, reg, dir); err != nil {
			return nil, errors.Join(err, e.close())
		}
	} else {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /api/v1/jobs/{id}/events", func(w http.ResponseWriter, r *http.Request) {
			if err := e.hub.ServeJob(w, r, job.ID(r.PathValue("id")), eventEncoder{}); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
			}
		})
		e.srv = httptest.NewServer(mux)
		e.base = e.srv.URL
	}
	acts := make([]ast.Node, n)
	for i := range acts {
		acts[i] = ast.Act(gateAction, nil)
	}
	if err := e.runner.Submit(ctx, e.id, ast.Seq(acts...)); err != nil {
		return nil, errors.Join(err, e.close())
	}
	return e, nil
}

// serveShipped serves the hub as 'baton serve' does: server.New over the
// runner's store with the hub, a write token, one JSON log line per
// request to a file in dir, metrics' handler and middleware, and the
// server's timeouts, on 127.0.0.1.
func (e *liveEnv) serveShipped(m *metrics.Metrics, st store.Store, reg *runner.Registry, dir string) error {
	logs, err := os.Create(dir + "/events-requests.log")
	if err != nil {
		return err
	}
	tokens, err := server.ParseTokens([]byte("write " + benchToken + "\n"))
	if err != nil {
		return errors.Join(err, logs.Close())
	}
	h, err := server.New(server.Options{Store: st, Runner: server.Local{Runner: e.runner, Registry: reg, Capacity: serveWorkers},
		Tokens: tokens, Logger: slog.New(slog.NewJSONHandler(logs, nil)), Hub: e.hub, Streams: m.Streams(), Middleware: m.Middleware})
	if err != nil {
		return errors.Join(err, logs.Close())
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.Handle("/", h)
	hs := &http.Server{Handler: mux,
		ReadHeaderTimeout: serveReadHeaderTimeout, ReadTimeout: serveReadTimeout, WriteTimeout: serveWriteTimeout,
		IdleTimeout: serveIdleTimeout, MaxHeaderBytes: serveMaxHeaderBytes}
	base, closeHTTP, err := serveLoopback(hs)
	if err != nil {
		return errors.Join(err, logs.Close())
	}
	e.base, e.token = base, benchToken
	e.closeHTTP = func() error { return errors.Join(closeHTTP(), logs.Close()) }
	return nil
}

func (e *liveEnv) url() string { return e.base + "/api/v1/jobs/" + string(e.id) + "/events" }

// step lets the running action end and returns the version of the step
// that applied its result, once Hooks.Step saw it.
func (e *liveEnv) step(ctx context.Context) (uint64, error) {
	select {
	case e.gate <- struct{}{}:
	case <-ctx.Done():
		return 0, fmt.Errorf("no action to let end: %w", ctx.Err())
	}
	select {
	case v := <-e.stepped:
		return v, nil
	case <-ctx.Done():
		return 0, fmt.Errorf("no step after an action ended: %w", ctx.Err())
	}
}

// close shuts the hub and the server down, then the runner (whose
// running gate action ends with its context).
func (e *liveEnv) close() error {
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := e.hub.Shutdown(sctx)
	if e.srv != nil {
		e.srv.CloseClientConnections()
		e.srv.Close()
	}
	if e.closeHTTP != nil {
		err = errors.Join(err, e.closeHTTP())
	}
	return errors.Join(err, e.runner.Close(), <-e.ran)
}

// measureEvents opens f.Size streams on a running job, then lets f.Steps
// actions end one at a time, stepGap apart, each once every stream has
// read the previous step, then the last one (the job ends), and measures
// for every stream and step (f.Steps+1 each) the time from Hooks.Step
// to the client's reading the step event.
func measureEvents(ctx context.Context, f serveFigure, dir string) (*latencyStats, error) {
	e, err := startLive(ctx, f.Steps+1, f.Size, f.Eng == engHTTP, dir)
	if err != nil {
		return nil, err
	}
	defer e.close()
	tr := &http.Transport{MaxIdleConnsPerHost: f.Size}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	sctx, stopStreams := context.WithCancel(ctx)
	seen := make([]atomic.Uint64, f.Size) // the newest version each stream read
	lat := make([][]float64, f.Size)
	ended := make([]error, f.Size)
	var wg sync.WaitGroup
	for i := range f.Size {
		wg.Go(func() { ended[i] = e.follow(sctx, hc, &seen[i], &lat[i]) })
	}
	defer func() { stopStreams(); wg.Wait() }()
	if err := waitAll(ctx, seen, 1); err != nil {
		return nil, fmt.Errorf("snapshots: %w", err)
	}
	for range len(e.stepped) { // the creation's step, if Hooks.Step told it
		<-e.stepped
	}
	for k := range f.Steps {
		time.Sleep(stepGap)
		v, err := e.step(ctx)
		if err != nil {
			return nil, err
		}
		if err := waitAll(ctx, seen, v); err != nil {
			return nil, fmt.Errorf("step %d (version %d): %w", k+1, v, err)
		}
	}
	time.Sleep(stepGap)
	if _, err := e.step(ctx); err != nil { // the last action: the job ends (a step, then end), and so do the streams
		return nil, err
	}
	wg.Wait()
	var all []float64
	for i := range f.Size {
		if ended[i] != nil {
			return nil, fmt.Errorf("stream %d: %w", i, ended[i])
		}
		all = append(all, lat[i]...)
	}
	if len(all) == 0 {
		return nil, errors.New("no step event read")
	}
	slices.Sort(all)
	return &latencyStats{Samples: len(all), Median: median(all), P99: all[(len(all)*99+99)/100-1], Max: all[len(all)-1]}, nil
}

// errEnded stops reading a stream at its end event.
var errEnded = errors.New("end event")

// follow reads the job's event stream until its end event, storing the
// newest version read in seen and the latency of each step event in lat.
func (e *liveEnv) follow(ctx context.Context, hc *http.Client, seen *atomic.Uint64, lat *[]float64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url(), nil)
	if err != nil {
		return err
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	err = live.ReadEvents(resp.Body, func(ev live.Event) error {
		now := time.Now()
		v, err := strconv.ParseUint(ev.ID, 10, 64)
		if err != nil {
			return fmt.Errorf("event %s: id %q", ev.Type, ev.ID)
		}
		switch ev.Type {
		case "step":
			e.mu.Lock()
			at, ok := e.stepAt[v]
			e.mu.Unlock()
			if ok {
				*lat = append(*lat, float64(now.Sub(at)))
			}
		case "end":
			return errEnded
		}
		seen.Store(v)
		return nil
	})
	if errors.Is(err, errEnded) {
		return nil
	}
	if err == nil {
		err = errors.New("the stream ended before its end event")
	}
	return err
}

// waitAll waits until every stream has read version v.
func waitAll(ctx context.Context, seen []atomic.Uint64, v uint64) error {
	for {
		behind := 0
		for i := range seen {
			if seen[i].Load() < v {
				behind++
			}
		}
		if behind == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d streams have not read version %d: %w", behind, len(seen), v, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

// measureIdle opens f.Size streams on a running job, each a raw socket
// that reads the stream's headers and snapshot and then nothing, and
// returns the resident memory and Go heap the process gained.
func measureIdle(ctx context.Context, f serveFigure) (*idleStats, error) {
	e, err := startLive(ctx, 1, f.Size+1, false, "") // and the stream opened first
	if err != nil {
		return nil, err
	}
	defer e.close()
	addr := strings.TrimPrefix(e.srv.URL, "http://")
	open := func() (net.Conn, error) { // one stream, read up to its snapshot
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(c, "GET /api/v1/jobs/%s/events HTTP/1.1\r\nHost: %s\r\n\r\n", e.id, addr)
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		br := bufio.NewReaderSize(c, 512)
		status, err := br.ReadString('\n')
		if !strings.HasPrefix(status, "HTTP/1.1 200 ") {
			return nil, errors.Join(fmt.Errorf("answer %q, %v: want 200", status, err), c.Close())
		}
		var got []byte
		for !bytes.Contains(got, []byte("event: snapshot")) || !bytes.HasSuffix(got, []byte("\n\n")) {
			b, err := br.ReadBytes('\n')
			got = append(got, b...)
			if err != nil {
				return nil, errors.Join(fmt.Errorf("read %q: %w", got, err), c.Close())
			}
		}
		return c, c.SetReadDeadline(time.Time{})
	}
	warm, err := open() // the watcher and the first stream's one-off costs
	if err != nil {
		return nil, err
	}
	defer warm.Close()
	rss0, heap0 := memoryNow()
	conns := make([]net.Conn, 0, f.Size)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range f.Size {
		c, err := open()
		if err != nil {
			return nil, fmt.Errorf("stream %d: %w", len(conns)+1, err)
		}
		conns = append(conns, c)
	}
	if n := e.hub.Stats().Streams; n != f.Size+1 {
		return nil, fmt.Errorf("the hub has %d streams open, want %d", n, f.Size+1)
	}
	time.Sleep(100 * time.Millisecond)
	rss1, heap1 := memoryNow()
	out := &idleStats{Streams: f.Size, RSS: -1, Heap: int64(heap1) - int64(heap0)}
	if rss0 >= 0 && rss1 >= 0 {
		out.RSS = rss1 - rss0
	}
	return out, nil
}

// memoryNow collects garbage and returns the process's resident memory
// (VmRSS; -1 where /proc does not tell it) and the Go heap in use.
func memoryNow() (rss int64, heap uint64) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss = -1
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64); err == nil {
					rss = kb << 10
				}
			}
		}
	}
	return rss, ms.HeapInuse
}

// eventEncoder makes the events' data as the API's schema has them.
type eventEncoder struct{}

func (eventEncoder) Snapshot(j job.Job) any { return api.JobOf(j, true) }

func (eventEncoder) Step(steps []live.Step, changed []job.NodeInfo) any {
	nodes := make([]api.Node, len(changed))
	for i, n := range changed {
		nodes[i] = api.NodeOf(n, api.ClipBytes)
	}
	return struct {
		Steps []live.Step `json:"steps"`
		Nodes []api.Node  `json:"nodes"`
	}{steps, nodes}
}

func (eventEncoder) End(j job.Job) any { return api.SummaryOf(j) }
