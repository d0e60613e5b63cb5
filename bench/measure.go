package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/store"
)

// engine runs a scenario once and measures it. Run does its own setup and
// teardown outside the measured part (see meter).
type engine struct {
	Name string
	Run  func(ctx context.Context, sc scenario, rep int) (sample, error)
}

// sample is one measured run.
type sample struct {
	Wall    time.Duration
	Mallocs uint64 // runtime.MemStats.Mallocs during the run
	Bytes   uint64 // runtime.MemStats.TotalAlloc during the run
	Steps   int64  // saved job states (creations included), for baton
	Store   *storeStats
}

// storeStats are the durable store's counters over one run.
type storeStats struct {
	BytesWritten int64 // bytes of records put
	PageBytes    int64 // bytes of pages the store's commits wrote
	WriteTxns    int64 // each one an fsync
	Snapshots    int64
	Steps        int64
}

func (s storeStats) minus(o storeStats) storeStats {
	return storeStats{
		BytesWritten: s.BytesWritten - o.BytesWritten,
		PageBytes:    s.PageBytes - o.PageBytes,
		WriteTxns:    s.WriteTxns - o.WriteTxns,
		Snapshots:    s.Snapshots - o.Snapshots,
		Steps:        s.Steps - o.Steps,
	}
}

// meter measures wall time and allocations between start and stop.
type meter struct {
	ms    runtime.MemStats
	start time.Time
}

// startMeter collects garbage left by earlier runs, so that runs start
// alike, and starts measuring.
func startMeter() *meter {
	runtime.GC()
	m := &meter{}
	runtime.ReadMemStats(&m.ms)
	m.start = time.Now()
	return m
}

func (m *meter) stop() sample {
	wall := time.Since(m.start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return sample{Wall: wall, Mallocs: ms.Mallocs - m.ms.Mallocs, Bytes: ms.TotalAlloc - m.ms.TotalAlloc}
}

// storeMaker makes a fresh store for one run. stats may be nil; done
// closes the store and removes what it left.
type storeMaker func(sc scenario, rep int) (st store.Store, stats func() storeStats, done func() error, err error)

// batonEngine returns an engine running scenarios on runner/inmem over the
// stores that mk makes.
func batonEngine(name string, workers int, mk storeMaker) engine {
	return engine{Name: name, Run: func(ctx context.Context, sc scenario, rep int) (smp sample, err error) {
		st, stats, done, err := mk(sc, rep)
		if err != nil {
			return sample{}, err
		}
		defer func() { err = errors.Join(err, done()) }()
		return runBaton(ctx, sc, rep, st, stats, workers)
	}}
}

// runBaton starts a runner on st, warms it up with a one-action job, then
// measures the scenario from the first Submit to the last job's end.
func runBaton(ctx context.Context, sc scenario, rep int, st store.Store, stats func() storeStats, workers int) (sample, error) {
	reg := runner.NewRegistry()
	if err := reg.Register(noopName, noop); err != nil {
		return sample{}, err
	}
	var c runner.Counters
	r, err := inmem.New(inmem.Options{Store: st, Registry: reg, Workers: workers, Hooks: c.Hooks(nil)})
	if err != nil {
		return sample{}, err
	}
	// The warm-up job is submitted before Run starts: a job submitted while
	// Run resumes the store's jobs may have its first actions dispatched
	// twice (allowed by at-least-once delivery, but it would skew counts).
	warm := job.ID(fmt.Sprintf("warmup-%s-r%d", sc.Name, rep))
	if err := r.Submit(ctx, warm, ast.Act(noopName, nil)); err != nil {
		return sample{}, fmt.Errorf("warm-up: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- r.Run(runCtx) }()
	defer func() { _ = r.Close(); <-runErr }()
	if err := wait(ctx, r, warm); err != nil {
		return sample{}, fmt.Errorf("warm-up: %w", err)
	}
	c0 := c.Snapshot()
	var s0 storeStats
	if stats != nil {
		s0 = stats()
	}
	wf := sc.Workflow()
	ids := sc.JobIDs(rep)

	m := startMeter()
	errs := make([]error, len(ids))
	if len(ids) == 1 {
		errs[0] = submitWait(ctx, r, ids[0], wf)
	} else {
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() { errs[i] = submitWait(ctx, r, id, wf) })
		}
		wg.Wait()
	}
	smp := m.stop()

	if err := errors.Join(errs...); err != nil {
		return sample{}, err
	}
	c1 := c.Snapshot()
	if got := c1.ActionsSucceeded - c0.ActionsSucceeded; got != int64(sc.Actions()) {
		return sample{}, fmt.Errorf("%d actions succeeded, want %d", got, sc.Actions())
	}
	smp.Steps = c1.Steps - c0.Steps
	if stats != nil {
		s := stats().minus(s0)
		smp.Store = &s
	}
	return smp, nil
}

// submitWait submits a job, waits for it, and checks that it succeeded.
func submitWait(ctx context.Context, r *inmem.Runner, id job.ID, wf ast.Node) error {
	if err := r.Submit(ctx, id, wf); err != nil {
		return err
	}
	return wait(ctx, r, id)
}

// wait waits for a job and checks that it succeeded.
func wait(ctx context.Context, r *inmem.Runner, id job.ID) error {
	j, err := r.Wait(ctx, id)
	if err != nil {
		return err
	}
	if j.Status() != job.StatusSucceeded {
		return fmt.Errorf("job %s: %s, want succeeded", id, j.Status())
	}
	return nil
}

// result is every sample of one (scenario, engine).
type result struct {
	Scenario scenario
	Engine   string
	Samples  []sample
	Err      error
}

// measure runs sc on e reps times, stopping early (after at least one run)
// once budget is spent.
func measure(ctx context.Context, sc scenario, e engine, reps int, budget time.Duration, progress func(string)) result {
	res := result{Scenario: sc, Engine: e.Name}
	var spent time.Duration
	for rep := range reps {
		if rep > 0 && budget > 0 && spent >= budget {
			break
		}
		t0 := time.Now()
		s, err := e.Run(ctx, sc, rep)
		spent += time.Since(t0)
		if err != nil {
			res.Err = fmt.Errorf("scenario %s on %s, run %d: %w", sc.Name, e.Name, rep+1, err)
			return res
		}
		res.Samples = append(res.Samples, s)
		if progress != nil {
			progress(fmt.Sprintf("%s %-6s run %d/%d: %s", sc.Name, e.Name, rep+1, reps, fmtDur(s.Wall)))
		}
	}
	return res
}

// Best returns the shortest wall time.
func (r result) Best() time.Duration {
	return slices.MinFunc(r.Samples, func(a, b sample) int { return cmp.Compare(a.Wall, b.Wall) }).Wall
}

// Median returns the median wall time (the mean of the middle two for an
// even count).
func (r result) Median() time.Duration {
	ws := make([]time.Duration, len(r.Samples))
	for i, s := range r.Samples {
		ws[i] = s.Wall
	}
	slices.Sort(ws)
	n := len(ws)
	if n%2 == 1 {
		return ws[n/2]
	}
	return (ws[n/2-1] + ws[n/2]) / 2
}

// PerAction returns the best wall time divided by the actions run.
func (r result) PerAction() time.Duration {
	return r.Best() / time.Duration(r.Scenario.Actions())
}

// Allocs returns the fewest allocations and bytes of any run, per action.
func (r result) Allocs() (allocs, bytes float64) {
	m := slices.MinFunc(r.Samples, func(a, b sample) int { return cmp.Compare(a.Mallocs, b.Mallocs) })
	b := slices.MinFunc(r.Samples, func(a, b sample) int { return cmp.Compare(a.Bytes, b.Bytes) })
	n := float64(r.Scenario.Actions())
	return float64(m.Mallocs) / n, float64(b.Bytes) / n
}

// Steps returns the mean number of saved job states per run.
func (r result) Steps() float64 {
	var t int64
	for _, s := range r.Samples {
		t += s.Steps
	}
	return float64(t) / float64(len(r.Samples))
}

// StoreTotals returns the store counters summed over all runs, and false
// if the engine has no store counters.
func (r result) StoreTotals() (storeStats, bool) {
	var t storeStats
	ok := false
	for _, s := range r.Samples {
		if s.Store == nil {
			continue
		}
		ok = true
		t.BytesWritten += s.Store.BytesWritten
		t.PageBytes += s.Store.PageBytes
		t.WriteTxns += s.Store.WriteTxns
		t.Snapshots += s.Store.Snapshots
		t.Steps += s.Store.Steps
	}
	return t, ok
}
