package main

// The -serve mode: the HTTP API as shipped (package server with tokens,
// request logs and metrics) against its baselines. serve.go drives it,
// servechild.go and serveevents.go measure in the children,
// servereport.go prints.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// serveChildEnv is the environment variable that makes the program a
// child of the -serve mode, measuring the serveSpec in it.
const serveChildEnv = "BATON_BENCH_SERVE_CHILD"

// serveCallers is how many goroutines call at once in the throughput
// figures.
const serveCallers = 8

// Figure kinds: how a child measures.
const (
	kindSubmit  = "submit" // N submits of a one-action job
	kindStatus  = "status" // N reads of one job's summary
	kindList    = "list"   // N reads of the first page of the job list
	kindEvents  = "events" // event latency with many streams open
	kindIdle    = "idle"   // resident memory of idle streams
	storeBolt   = "bolt"   // store/bolt, a real file, fsync on
	storeMemory = "memory" // store.NewMemory
	engGo       = "go"     // (a) the Go API in the same process
	engHTTP     = "http"   // the server as shipped, through package client
	engBare     = "bare"   // (c) a bare net/http handler, through package client
	engLive     = "live"   // server/live's Hub on an httptest server
	engNone     = "-"      // no store
)

// serveFigure is one thing a child measures: a scenario (the table's
// row group) on one engine.
type serveFigure struct {
	Name  string // the child's key: scenario and engine
	Kind  string
	Store string // storeBolt, storeMemory or engNone
	Eng   string
	Ops   int // operations per run at scale 1
	Size  int // actions of the job read (status), jobs stored (list), streams (events, idle)
	Steps int // events: steps measured
	About string
}

// serveFigures are the figures of -serve, in the order each round runs
// them.
func serveFigures() []serveFigure {
	return []serveFigure{
		{Name: "submit-bolt-go", Kind: kindSubmit, Store: storeBolt, Eng: engGo, Ops: 400,
			About: "runner/inmem on store/bolt: Submit from 8 goroutines (waits for nothing more than the submit)"},
		{Name: "submit-bolt-http", Kind: kindSubmit, Store: storeBolt, Eng: engHTTP, Ops: 400,
			About: "POST /api/v1/jobs to the server as shipped on the same, through package client"},
		{Name: "submit-memory-go", Kind: kindSubmit, Store: storeMemory, Eng: engGo, Ops: 2000,
			About: "runner/inmem on store.NewMemory: Submit from 8 goroutines"},
		{Name: "submit-memory-http", Kind: kindSubmit, Store: storeMemory, Eng: engHTTP, Ops: 2000,
			About: "POST /api/v1/jobs to the server as shipped on the same"},
		{Name: "submit-bare", Kind: kindSubmit, Store: engNone, Eng: engBare, Ops: 2000,
			About: "POST to a bare net/http handler that reads the body and writes a fixed JSON answer"},
		{Name: "status-go", Kind: kindStatus, Store: storeMemory, Eng: engGo, Ops: 4000, Size: 10,
			About: "Load and api.SummaryOf of a job of 10 actions in the same process"},
		{Name: "status-http", Kind: kindStatus, Store: storeMemory, Eng: engHTTP, Ops: 4000, Size: 10,
			About: "GET /api/v1/jobs/{id}?nodes=false of the same job from the server as shipped"},
		{Name: "status-bare", Kind: kindStatus, Store: engNone, Eng: engBare, Ops: 4000, Size: 10,
			About: "GET from the bare handler (a fixed summary)"},
		{Name: "summary-big-http", Kind: kindStatus, Store: storeMemory, Eng: engHTTP, Ops: 2000, Size: 100_000,
			About: "GET ?nodes=false of a job of 100,000 actions (compared with status-http's 10)"},
		{Name: "list-small-http", Kind: kindList, Store: storeMemory, Eng: engHTTP, Ops: 1000, Size: 1000,
			About: "GET /api/v1/jobs, the first page (100 jobs), of 1,000 jobs stored"},
		{Name: "list-big-http", Kind: kindList, Store: storeMemory, Eng: engHTTP, Ops: 1000, Size: 100_000,
			About: "the same of 100,000 jobs stored"},
		{Name: "events-http", Kind: kindEvents, Store: storeMemory, Eng: engHTTP, Size: 100, Steps: 20,
			About: "GET /api/v1/jobs/{id}/events from the server as shipped (server.New with its hub notified by runner/inmem's Hooks.Step, " +
				"a write token, request logs, metrics, on 127.0.0.1): one job whose actions finish one at a time, a step every 110ms " +
				"(just over the hub's 10 events a second), read by every stream; from Hooks.Step to the client's reading the step event"},
		{Name: "events-live", Kind: kindEvents, Store: storeMemory, Eng: engLive, Size: 100, Steps: 20,
			About: "the same on server/live's Hub served bare (live.New, ServeJob on an httptest server): what the route adds"},
		{Name: "idle-live", Kind: kindIdle, Store: storeMemory, Eng: engLive, Size: 1000,
			About: "resident memory (VmRSS) the process gains when that many streams are opened on a running job and left idle; the clients are raw sockets in the same process"},
	}
}

// scaledTo returns n times scale, at least least.
func scaledTo(n int, scale float64, least int) int {
	return max(least, int(math.Round(float64(n)*scale)))
}

// sized returns f with its sizes scaled.
func (f serveFigure) sized(scale float64) serveFigure {
	if f.Ops > 0 {
		f.Ops = scaledTo(f.Ops, scale, serveCallers)
	}
	switch {
	case f.Kind == kindStatus && f.Size > 10:
		f.Size = scaledTo(f.Size, scale, 100)
	case f.Kind == kindList:
		f.Size = scaledTo(f.Size, scale, 10)
	case f.Kind == kindEvents || f.Kind == kindIdle:
		f.Size = scaledTo(f.Size, scale, 2)
		f.Steps = scaledTo(f.Steps, scale, 3)
	}
	return f
}

// serveSpec is what one child of -serve measures.
type serveSpec struct {
	Figure serveFigure `json:"figure"`
	Warm   int         `json:"warm"`
	Dir    string      `json:"dir"`
}

// serveResult is what it measured: for the throughput figures, the
// time per operation of the first run (cold) and of the runs after it;
// for events and idle their stats.
type serveResult struct {
	Figure string    `json:"figure"`
	Cold   float64   `json:"cold_ns"`
	Warm   []float64 `json:"warm_ns"`
	// CPU is, per warm run, the CPU time (user and system) the process
	// spent per operation from the run's start to the end of the jobs it
	// submitted; empty where the system does not tell.
	CPU     []float64     `json:"cpu_ns,omitempty"`
	Latency *latencyStats `json:"latency,omitempty"`
	Idle    *idleStats    `json:"idle,omitempty"`
	// Commits, for a submit figure on bolt: the store's group commits
	// over the child's runs, Creates and Saves together.
	Commits *commitStats `json:"commits,omitempty"`
}

// commitStats count what store/bolt committed in a child (Stats): its
// write transactions (one fsync each), the group commits among them and
// the Creates and Saves those carried.
type commitStats struct {
	Ops          int    `json:"ops"` // submits made, every run
	WriteTxs     uint64 `json:"write_txs"`
	GroupCommits uint64 `json:"group_commits"`
	GroupWrites  uint64 `json:"group_writes"`
}

// latencyStats are the event latencies of one child: from Hooks.Step to
// the event read by a client, pooled over every stream and step.
type latencyStats struct {
	Samples int     `json:"samples"`
	Median  float64 `json:"median_ns"`
	P99     float64 `json:"p99_ns"`
	Max     float64 `json:"max_ns"`
}

// idleStats are what idle streams cost one child.
type idleStats struct {
	Streams int   `json:"streams"`
	RSS     int64 `json:"rss_bytes"`  // VmRSS gained; -1 where unknown
	Heap    int64 `json:"heap_bytes"` // Go heap in use gained
}

// serveConfig is what a -serve run measures.
type serveConfig struct {
	Exe      string
	Rounds   int
	Warm     int
	Scale    float64
	Dir      string
	Progress io.Writer
}

// runServe measures every figure of -serve: Rounds rounds, each running
// every figure once in a fresh child, in order.
func runServe(ctx context.Context, cfg serveConfig) (*serveReport, error) {
	rep := &serveReport{Machine: machine(), Load: loadAverage(), Rounds: cfg.Rounds, Warm: cfg.Warm, Results: map[string][]serveResult{}}
	for _, f := range serveFigures() {
		rep.Figures = append(rep.Figures, f.sized(cfg.Scale))
	}
	start := time.Now()
	for round := range cfg.Rounds {
		for _, f := range rep.Figures {
			res, err := spawnServe(ctx, cfg.Exe, serveSpec{Figure: f, Warm: cfg.Warm, Dir: cfg.Dir})
			if err != nil {
				return nil, fmt.Errorf("-serve %s, round %d: %w", f.Name, round+1, err)
			}
			rep.Results[f.Name] = append(rep.Results[f.Name], res)
			if cfg.Progress != nil {
				var what string
				switch {
				case res.Latency != nil:
					what = fmt.Sprintf("median %s p99 %s", fmtDur(dur(res.Latency.Median)), fmtDur(dur(res.Latency.P99)))
				case res.Idle != nil:
					what = fmt.Sprintf("rss %s", fmtBytes(res.Idle.RSS))
				default:
					what = fmt.Sprintf("cold %s/op warm %s/op", fmtDur(dur(res.Cold)), fmtDur(dur(median(res.Warm))))
				}
				fmt.Fprintf(cfg.Progress, "serve round %d/%d  %-18s %s  (%s)\n", round+1, cfg.Rounds, f.Name, what, time.Since(start).Round(time.Second))
			}
		}
	}
	return rep, nil
}

// spawnServe runs exe as a child measuring sp and returns what it printed.
func spawnServe(ctx context.Context, exe string, sp serveSpec) (serveResult, error) {
	spec, err := json.Marshal(sp)
	if err != nil {
		return serveResult{}, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), serveChildEnv+"="+string(spec))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return serveResult{}, fmt.Errorf("child failed (%v): %s", err, quoteOutput(stderr.Bytes()))
	}
	line := bytes.TrimSpace(stdout.Bytes())
	var res serveResult
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if len(line) == 0 || bytes.ContainsRune(line, '\n') || dec.Decode(&res) != nil {
		return serveResult{}, fmt.Errorf("child printed %s, want one JSON line; its stderr: %s", quoteOutput(stdout.Bytes()), quoteOutput(stderr.Bytes()))
	}
	f := sp.Figure
	switch {
	case res.Figure != f.Name:
		return serveResult{}, fmt.Errorf("child measured %q, want %q", res.Figure, f.Name)
	case f.Kind == kindEvents && (res.Latency == nil || res.Latency.Samples < 1):
		return serveResult{}, fmt.Errorf("child measured no event latency: %+v", res.Latency)
	case f.Kind == kindIdle && res.Idle == nil:
		return serveResult{}, fmt.Errorf("child measured no idle streams")
	case f.Ops > 0 && (len(res.Warm) != sp.Warm || res.Cold <= 0 || slices.ContainsFunc(res.Warm, func(x float64) bool { return !(x > 0) })):
		return serveResult{}, fmt.Errorf("child printed cold %v and warm %v, want positive times and %d warm runs", res.Cold, res.Warm, sp.Warm)
	}
	return res, nil
}

// loadAverage returns the machine's load averages, or "" where unknown.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// fmtBytes writes n bytes in MB (10^6), or "unknown" when negative.
func fmtBytes(n int64) string {
	if n < 0 {
		return "unknown"
	}
	return sig3(float64(n)/1e6) + " MB"
}

// serveMain runs the -serve mode: cfg as the flags set it. Flags that
// pick or set up engines do not apply to it.
func serveMain(fs *flag.FlagSet, cfg serveConfig, format string, quiet bool, stdout, stderr io.Writer) error {
	var others []string
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains([]string{"serve", "rounds", "warm", "scale", "dir", "format", "q"}, f.Name) {
			others = append(others, "-"+f.Name)
		}
	})
	if len(others) > 0 {
		return fmt.Errorf("-serve measures the HTTP API alone: %s do not apply to it", strings.Join(others, ", "))
	}
	if cfg.Warm == 0 {
		cfg.Warm = 5
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the program to run as a child: %w", err)
	}
	cfg.Exe = exe
	if !quiet {
		cfg.Progress = stderr
	}
	rep, err := runServe(context.Background(), cfg)
	if err != nil {
		return err
	}
	if format == "markdown" {
		rep.markdown(stdout)
	} else {
		rep.text(stdout)
	}
	return nil
}
