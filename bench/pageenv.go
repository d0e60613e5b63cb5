package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/store/bolt"
)

// The jobs of -page.
const (
	pageJob     job.ID = "page-1000"
	pageBigJob  job.ID = "page-big"
	pageLiveJob job.ID = "page-live"
	floorPrefix        = "/bench/floor/" // the bench's static pages, beside the server's
)

// pageEnv is the server as 'baton serve' wires it (server.New, a hub
// notified by runner/inmem's Hooks.Step, store/bolt with fsync on) on
// 127.0.0.1, with one handler of the bench's own beside it: the floor,
// a static HTML page of a job's nodes.
type pageEnv struct {
	base   string
	runner *inmem.Runner
	hub    *live.Hub
	gate   chan struct{} // each receive lets a gate action end
	stop   []func() error

	mu      sync.Mutex
	floors  map[job.ID][]byte
	stepAt  map[uint64]time.Time // when Hooks.Step saw each version of the live job
	stepped chan uint64          // the live job's versions Hooks.Step saw, in order
}

func startPageEnv(ctx context.Context, dir string) (e *pageEnv, err error) {
	e = &pageEnv{gate: make(chan struct{}), floors: map[job.ID][]byte{}, stepAt: map[uint64]time.Time{}, stepped: make(chan uint64, 1024)}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.close())
		}
	}()
	tmp, err := os.MkdirTemp(dir, "baton-bench-page-")
	if err != nil {
		return nil, err
	}
	e.stop = append(e.stop, func() error { return os.RemoveAll(tmp) })
	st, err := bolt.Open(filepath.Join(tmp, "page.db"), &bolt.Options{})
	if err != nil {
		return nil, err
	}
	e.stop = append([]func() error{st.Close}, e.stop...)
	reg := runner.NewRegistry()
	type in struct {
		Fail bool `json:"fail"`
	}
	err = errors.Join(
		runner.Handle(reg, "work", func(ctx context.Context, p in) (struct{}, error) {
			if p.Fail {
				return struct{}{}, errors.New("failed on purpose")
			}
			return struct{}{}, nil
		}),
		runner.Handle(reg, "gate", func(ctx context.Context, _ struct{}) (struct{}, error) {
			select {
			case <-e.gate:
				return struct{}{}, nil
			case <-ctx.Done():
				return struct{}{}, ctx.Err()
			}
		}))
	if err != nil {
		return nil, err
	}
	if e.hub, err = live.New(live.Options{Store: st, Notified: true, Changed: job.Changed}); err != nil {
		return nil, err
	}
	hooks := &runner.Hooks{Step: func(j job.Job, _ int) {
		if j.ID() == pageLiveJob {
			now := time.Now()
			e.mu.Lock()
			e.stepAt[j.Version()] = now
			e.mu.Unlock()
			select {
			case e.stepped <- j.Version():
			default:
			}
		}
		e.hub.Notify(j.ID())
	}}
	e.runner, err = inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: serveWorkers, Hooks: hooks}, Store: st})
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- e.runner.Run(rctx) }()
	e.stop = append([]func() error{func() error { cancel(); return errors.Join(e.runner.Close(), <-ran) }}, e.stop...)
	closing := make(chan struct{})
	h, err := server.New(server.Options{Store: st, Runner: server.Local{Runner: e.runner, Registry: reg, Capacity: serveWorkers}, Hub: e.hub, Closing: closing})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+floorPrefix+"{id}", e.serveFloor)
	mux.Handle("/", h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: serveReadHeaderTimeout, IdleTimeout: serveIdleTimeout, MaxHeaderBytes: serveMaxHeaderBytes}
	base, closeHTTP, err := serveLoopback(hs)
	if err != nil {
		return nil, err
	}
	e.base = base
	e.stop = append([]func() error{func() error { close(closing); return closeHTTP() }}, e.stop...)
	return e, nil
}

// close stops the server, the runner and the store, and removes the file.
func (e *pageEnv) close() error {
	var errs []error
	for _, f := range e.stop {
		errs = append(errs, f())
	}
	e.stop = nil
	return errors.Join(errs...)
}

// loadJobs runs the jobs whose pages are loaded to their end, makes the
// floor's page of the 1,000-node one, and returns the figures.
func (e *pageEnv) loadJobs(ctx context.Context, sz pageSizes) ([]pageFigure, error) {
	// A par of seqs, a third of which fail part of the way: every state
	// but running in one drawing.
	seqs := make([]ast.Node, sz.Seqs)
	for i := range seqs {
		acts := make([]ast.Node, sz.SeqLen)
		for k := range acts {
			acts[k] = ast.Act("work", map[string]any{"seq": i, "step": k, "fail": i%3 == 1 && k == sz.SeqLen*2/3})
		}
		seqs[i] = ast.Seq(acts...)
	}
	acts := make([]ast.Node, sz.Big)
	for k := range acts {
		acts[k] = ast.Act("work", map[string]any{"n": k, "fail": k%97 == 5})
	}
	var jobs = []struct {
		id   job.ID
		root ast.Node
	}{{pageJob, ast.Par(seqs...)}, {pageBigJob, ast.Par(acts...)}}
	nodes := map[job.ID]int{}
	for _, j := range jobs {
		if err := e.runner.Submit(ctx, j.id, j.root); err != nil {
			return nil, fmt.Errorf("submit %s: %w", j.id, err)
		}
		done, err := e.runner.Wait(ctx, j.id)
		if err != nil {
			return nil, fmt.Errorf("wait for %s: %w", j.id, err)
		}
		var lines []string
		done.Walk(func(n job.NodeInfo) bool {
			nodes[j.id]++
			if j.id == pageJob {
				lines = append(lines, floorLine(n))
			}
			return true
		})
		if j.id == pageJob {
			e.floors[j.id] = floorPage(done, lines)
		}
	}
	return []pageFigure{
		{Name: "floor", Path: floorPrefix + string(pageJob), Nodes: nodes[pageJob],
			About: "a static HTML page of the same nodes, one line each (kind, action, payload, state), served beside the server"},
		{Name: "page", Path: "/jobs/" + string(pageJob), Nodes: nodes[pageJob],
			About: fmt.Sprintf("the job page of a settled par of %d seqs of %d actions (some failed, the rest of their seq idle) on store/bolt", sz.Seqs, sz.SeqLen)},
		{Name: "big", Path: "/jobs/" + string(pageBigJob), Nodes: nodes[pageBigJob],
			About: fmt.Sprintf("the job page of a settled par of %s actions", fmtCount(int64(sz.Big)))},
	}, nil
}

// floorLine is one node of the floor's page.
func floorLine(n job.NodeInfo) string {
	what := n.Kind.String()
	if n.Kind == ast.KindAct {
		what += " " + n.Action
	}
	payload := string(n.Payload)
	if len(payload) > 40 {
		payload = payload[:40] + "…"
	}
	return fmt.Sprintf(`<div class="node" data-path="%s" data-status="%s"><b>%s</b> %s <span>%s</span></div>`,
		html.EscapeString(n.Path), n.Status, html.EscapeString(what), html.EscapeString(payload), n.Status)
}

// floorPage is the floor: the nodes' lines pre-rendered, the mark set by
// a script at the end of the body (so once they are parsed).
func floorPage(j job.Job, lines []string) []byte {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><meta charset=utf-8><title>")
	b.WriteString(html.EscapeString(string(j.ID())))
	b.WriteString("</title><style>.node{font:12px monospace;border:1px solid #999;margin:1px;padding:2px}" +
		"[data-status=succeeded]{background:#009E73}[data-status=failed]{background:#D55E00}[data-status=cancelled]{background:#8C8C8C}</style></head><body><div id=tree>\n")
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n</div><script>performance.mark('baton:drawn');window.batonDrawn=true</script></body></html>\n")
	return []byte(b.String())
}

func (e *pageEnv) serveFloor(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	page, ok := e.floors[job.ID(r.PathValue("id"))]
	e.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(page)
}
