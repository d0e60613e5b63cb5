package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/metrics"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

// The server's limits as 'baton serve' sets them (issue 16, 1.3).
const (
	serveReadHeaderTimeout = 5 * time.Second
	serveReadTimeout       = 30 * time.Second
	serveWriteTimeout      = 30 * time.Second
	serveIdleTimeout       = 120 * time.Second
	serveMaxHeaderBytes    = 64 << 10
	serveWorkers           = 4 // 'baton serve --workers' default
)

// benchToken is the write token of the server as shipped.
const benchToken = "bench-write-token-0123456789abcdef"

// oneActionWorkflow is the body of every submit: a job of one no-op
// action.
var oneActionWorkflow = []byte(`{"version": 1, "root": {"act": "noop"}}`)

// serveChildMain is the program as a child of -serve: spec is
// serveChildEnv's value. It returns the exit code.
func serveChildMain(spec string, stdout, stderr io.Writer) int {
	var sp serveSpec
	if err := json.Unmarshal([]byte(spec), &sp); err != nil {
		fmt.Fprintf(stderr, "bench serve child: bad %s: %v\n", serveChildEnv, err)
		return 2
	}
	res, err := runServeChild(context.Background(), sp)
	if err != nil {
		fmt.Fprintf(stderr, "bench serve child: %s: %v\n", sp.Figure.Name, err)
		return 1
	}
	line, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintf(stderr, "bench serve child: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", line)
	return 0
}

// runServeChild measures sp's figure in this process.
func runServeChild(ctx context.Context, sp serveSpec) (res serveResult, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	f := sp.Figure
	res.Figure = f.Name
	dir, err := os.MkdirTemp(sp.Dir, "baton-bench-serve-")
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	switch f.Kind {
	case kindEvents:
		res.Latency, err = measureEvents(ctx, f, dir)
		return res, err
	case kindIdle:
		res.Idle, err = measureIdle(ctx, f)
		return res, err
	}
	if sp.Warm < 1 {
		return res, fmt.Errorf("%d warm runs, want at least 1", sp.Warm)
	}
	run, st, closeAll, err := setupFigure(ctx, f, dir)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, closeAll()) }()
	if bs, ok := st.(*bolt.Store); ok && f.Kind == kindSubmit {
		defer func() {
			s := bs.Stats()
			res.Commits = &commitStats{Ops: f.Ops * (1 + sp.Warm), WriteTxs: s.WriteTxs, GroupCommits: s.GroupCommits, GroupWrites: s.GroupWrites}
		}()
	}
	for i := range 1 + sp.Warm {
		runtime.GC()
		cpu0, cpuOK := cpuTime()
		start := time.Now()
		wait, err := run(i)
		took := time.Since(start)
		if err == nil && wait != nil {
			err = wait() // outside the clock
		}
		if err != nil {
			return res, fmt.Errorf("run %d: %w", i+1, err)
		}
		// The CPU counts the jobs' running too, to their end: what
		// every submit costs this process, whoever waits for it.
		cpu1, _ := cpuTime()
		perOp := float64(took) / float64(f.Ops)
		if i == 0 {
			res.Cold = perOp
		} else {
			res.Warm = append(res.Warm, perOp)
			if cpuOK {
				res.CPU = append(res.CPU, float64(cpu1-cpu0)/float64(f.Ops))
			}
		}
	}
	return res, nil
}

// runFunc makes run i of a figure: f.Ops operations from serveCallers
// goroutines. The wait it returns (or nil) is called after the clock
// stops: it waits for what the run started (the jobs submitted) to end,
// so that the next run starts on an idle runner.
type runFunc func(i int) (wait func() error, err error)

// setupFigure builds what f measures, outside the clock, and returns its
// store (nil for the bare handler).
func setupFigure(ctx context.Context, f serveFigure, dir string) (runFunc, store.Store, func() error, error) {
	if f.Eng == engBare {
		b, err := startBare()
		if err != nil {
			return nil, nil, nil, err
		}
		run := func(int) (func() error, error) {
			return nil, calls(f.Ops, func(i int) error {
				if f.Kind == kindSubmit {
					_, created, err := b.client.Submit(ctx, job.ID(fmt.Sprintf("s-%d", i)), oneActionWorkflow)
					if err == nil && !created {
						err = errors.New("bare handler: not created")
					}
					return err
				}
				_, err := b.client.Job(ctx, "status", client.JobQuery{NoNodes: true})
				return err
			})
		}
		return run, nil, b.close, nil
	}
	st, err := openStore(f.Store, dir)
	if err != nil {
		return nil, nil, nil, err
	}
	var e *shipped
	if f.Eng == engHTTP {
		e, err = startShipped(ctx, st, dir)
	} else {
		e, err = startRunner(ctx, st)
	}
	if err != nil {
		return nil, nil, nil, errors.Join(err, st.Close())
	}
	switch f.Kind {
	case kindSubmit:
		root, err := ast.Decode(oneActionWorkflow)
		if err != nil {
			return nil, nil, nil, errors.Join(err, e.close())
		}
		run := func(run int) (func() error, error) {
			ids := make([]job.ID, f.Ops)
			for i := range ids {
				ids[i] = job.ID(fmt.Sprintf("s-%d-%d", run, i))
			}
			err := calls(f.Ops, func(i int) error {
				if e.client == nil {
					return e.runner.Submit(ctx, ids[i], root)
				}
				_, created, err := e.client.Submit(ctx, ids[i], oneActionWorkflow)
				if err == nil && !created {
					err = fmt.Errorf("job %s: not created", ids[i])
				}
				return err
			})
			return func() error { return e.waitAll(ctx, ids) }, err
		}
		return run, st, e.close, nil
	case kindStatus:
		id := job.ID("status")
		if err := createJob(ctx, e.store, id, f.Size); err != nil {
			return nil, nil, nil, errors.Join(err, e.close())
		}
		run := func(int) (func() error, error) {
			return nil, calls(f.Ops, func(int) error {
				if e.client == nil {
					j, err := e.store.Load(ctx, id)
					if err == nil && api.SummaryOf(j).Total != f.Size {
						err = fmt.Errorf("job %s: %d actions, want %d", id, api.SummaryOf(j).Total, f.Size)
					}
					return err
				}
				j, err := e.client.Job(ctx, id, client.JobQuery{NoNodes: true})
				if err == nil && (j.Total != f.Size || j.Nodes != nil) {
					err = fmt.Errorf("job %s: %d actions and %d nodes, want %d and none", id, j.Total, len(j.Nodes), f.Size)
				}
				return err
			})
		}
		return run, st, e.close, nil
	case kindList:
		for i := range f.Size {
			if err := createJob(ctx, e.store, job.ID(fmt.Sprintf("l-%07d", i)), 1); err != nil {
				return nil, nil, nil, errors.Join(err, e.close())
			}
		}
		want := min(f.Size, 100)
		run := func(int) (func() error, error) {
			return nil, calls(f.Ops, func(int) error {
				l, err := e.client.List(ctx, client.ListQuery{})
				if err == nil && len(l.Jobs) != want {
					err = fmt.Errorf("the first page has %d jobs, want %d", len(l.Jobs), want)
				}
				return err
			})
		}
		return run, st, e.close, nil
	}
	return nil, nil, nil, errors.Join(fmt.Errorf("figure kind %q", f.Kind), e.close())
}

// calls runs f(0) to f(n-1) from serveCallers goroutines, each taking the
// next i, and returns their errors.
func calls(n int, f func(i int) error) error {
	var next atomic.Int64
	errs := make([]error, serveCallers)
	var wg sync.WaitGroup
	for w := range serveCallers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// openStore opens a fresh store of the kind named.
func openStore(kind, dir string) (store.Store, error) {
	if kind == storeBolt {
		return bolt.Open(filepath.Join(dir, "serve.db"), &bolt.Options{})
	}
	return store.NewMemory(), nil
}

// createJob stores a job of a par of n no-op actions, as New starts it,
// without a runner: the reads measured need a job, not its running.
func createJob(ctx context.Context, st store.Store, id job.ID, n int) error {
	acts := make([]ast.Node, n)
	for i := range acts {
		acts[i] = ast.Act(actionName, nil)
	}
	root := acts[0]
	if n > 1 {
		root = ast.Par(acts...)
	}
	tr, err := job.New(id, root)
	if err != nil {
		return err
	}
	return st.Create(ctx, tr.Job)
}

// noopRegistry returns the registry of the no-op action every submitted
// job runs.
func noopRegistry() (*runner.Registry, error) {
	reg := runner.NewRegistry()
	err := runner.Handle(reg, actionName, func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil })
	return reg, err
}

// shipped is a runner/inmem, alone (the Go API) or behind the server as
// 'baton serve' ships it.
type shipped struct {
	store  store.Store // what the runner and the server use
	runner *inmem.Runner
	ran    chan error
	client *client.Client // nil for the Go API
	stop   []func() error // in order
}

// startRunner starts runner/inmem on st, with no metrics.
func startRunner(ctx context.Context, st store.Store) (*shipped, error) {
	reg, err := noopRegistry()
	if err != nil {
		return nil, err
	}
	return startInmem(ctx, st, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: serveWorkers}, Store: st})
}

func startInmem(ctx context.Context, st store.Store, o inmem.Options) (*shipped, error) {
	r, err := inmem.New(o)
	if err != nil {
		return nil, err
	}
	e := &shipped{store: o.Store, runner: r, ran: make(chan error, 1)}
	go func() { e.ran <- r.Run(ctx) }()
	e.stop = append(e.stop, func() error { return errors.Join(r.Close(), <-e.ran) }, st.Close)
	return e, nil
}

// startShipped starts the server as 'baton serve' wires it on st:
// runner/inmem with its default workers, behind server.Local (so a
// submit's actions are checked against the registry); metrics on their
// own registry (their hooks on the runner, their store wrapper, their
// middleware inside the server, /metrics served by it); a live.Hub over
// the timed store, notified at each step; a write token; one JSON log
// line per request written to a file in dir; the server's limits
// (server.HTTPServer); on 127.0.0.1; and a client with that token.
func startShipped(ctx context.Context, st store.Store, dir string) (*shipped, error) {
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		return nil, err
	}
	reg, err := noopRegistry()
	if err != nil {
		return nil, err
	}
	m.Actions(reg)
	mst := m.Store(st)
	hub, err := live.New(live.Options{Store: mst, Notified: true, Changed: job.Changed})
	if err != nil {
		return nil, err
	}
	hooks := m.Hooks(&runner.Hooks{Step: func(j job.Job, _ int) { hub.Notify(j.ID()) }})
	e, err := startInmem(ctx, st, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: serveWorkers, Hooks: hooks}, Store: mst})
	if err != nil {
		return nil, err
	}
	logs, err := os.Create(filepath.Join(dir, "requests.log"))
	if err != nil {
		return nil, errors.Join(err, e.close())
	}
	// As 'baton serve' writes its request log: through a LogWriter.
	lw := server.NewLogWriter(logs)
	e.stop = append(e.stop, lw.Close, logs.Close)
	tokens, err := server.ParseTokens([]byte("write " + benchToken + "\n"))
	if err != nil {
		return nil, errors.Join(err, e.close())
	}
	h, err := server.New(server.Options{Store: mst, Runner: server.Local{Runner: e.runner, Registry: reg, Capacity: serveWorkers, Since: time.Now()},
		Tokens: tokens, Logger: slog.New(slog.NewJSONHandler(lw, nil)), Hub: hub,
		Metrics: m.Handler(), Middleware: m.Middleware, Streams: m.Streams(), AuthFailures: m.AuthFailures()})
	if err != nil {
		return nil, errors.Join(err, e.close())
	}
	hs := server.HTTPServer(h, server.Limits{ReadHeaderTimeout: serveReadHeaderTimeout, ReadTimeout: serveReadTimeout,
		WriteTimeout: serveWriteTimeout, IdleTimeout: serveIdleTimeout, MaxHeaderBytes: serveMaxHeaderBytes})
	base, closeHTTP, err := serveLoopback(hs)
	if err != nil {
		return nil, errors.Join(err, e.close())
	}
	hc := benchHTTPClient()
	e.client = client.New(base, client.Options{HTTPClient: hc, Token: benchToken})
	// The server stops before the runner and the store.
	e.stop = append([]func() error{func() error { hc.CloseIdleConnections(); return closeHTTP() }}, e.stop...)
	return e, nil
}

// serveLoopback serves hs on a free port of 127.0.0.1 and returns its
// base URL and a func that closes it.
func serveLoopback(hs *http.Server) (string, func() error, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() error {
		err := hs.Close()
		if e := <-served; !errors.Is(e, http.ErrServerClosed) {
			err = errors.Join(err, e)
		}
		return err
	}, nil
}

// benchHTTPClient is the client's transport: keeps a connection per
// caller alive (net/http's default keeps 2 per host).
func benchHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4 * serveCallers
	return &http.Client{Transport: tr}
}

// waitAll waits for the jobs to end, each succeeded.
func (e *shipped) waitAll(ctx context.Context, ids []job.ID) error {
	for _, id := range ids {
		j, err := e.runner.Wait(ctx, id)
		if err != nil {
			return err
		}
		if j.Status() != job.StatusSucceeded {
			return fmt.Errorf("job %s: %s, want succeeded", id, j.Status())
		}
	}
	return nil
}

func (e *shipped) close() error {
	var err error
	for _, f := range e.stop {
		err = errors.Join(err, f())
	}
	return err
}

// bare is (c): a net/http handler on loopback that reads the body and
// writes a fixed JSON answer, the cost of HTTP itself.
type bare struct {
	client *client.Client
	close  func() error
}

func startBare() (*bare, error) {
	sum := api.Summary{ID: "status", Status: "running", Version: 1, Total: 10}
	posted, err := json.Marshal(sum)
	if err != nil {
		return nil, err
	}
	got, err := json.Marshal(api.Job{Summary: sum})
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(posted)
			return
		}
		_, _ = w.Write(got)
	})}
	base, closeHTTP, err := serveLoopback(hs)
	if err != nil {
		return nil, err
	}
	hc := benchHTTPClient()
	return &bare{client: client.New(base, client.Options{HTTPClient: hc}), close: func() error {
		hc.CloseIdleConnections()
		return closeHTTP()
	}}, nil
}
