package kafka_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/runnertest"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// counter is a registry whose "noop" handler counts its runs by action
// key.
type counter struct {
	reg  *runner.Registry
	mu   sync.Mutex
	runs map[string]int
}

func newCounter(t testing.TB) *counter {
	c := &counter{reg: runner.NewRegistry(), runs: map[string]int{}}
	if err := c.reg.Register("noop", func(ctx context.Context, a job.Action) ([]byte, error) {
		c.mu.Lock()
		c.runs[a.Key()]++
		c.mu.Unlock()
		return []byte(`"ok"`), nil
	}); err != nil {
		t.Fatal(err)
	}
	return c
}

// running is a runner run until stopped or the test ends.
type running struct {
	*kafkarunner.Runner
	done chan error
}

func start(t testing.TB, o kafkarunner.Options) *running {
	t.Helper()
	var tally *runnertest.PlacementTally
	o.Hooks, tally = runnertest.TallyPlacement(o.Hooks)
	r, err := kafkarunner.New(o)
	if err != nil {
		t.Fatal(err)
	}
	rr := &running{Runner: r, done: make(chan error, 1)}
	go func() { rr.done <- r.Run(context.Background()) }()
	t.Cleanup(func() {
		rr.stop(t)
		checkPlacement(tally, t, o.Name, r.Stats())
	})
	return rr
}

// stop closes the runner and checks that Run returns, and returns nil.
func (r *running) stop(t testing.TB) {
	t.Helper()
	_ = r.Close()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		r.done <- nil
	case <-time.After(20 * time.Second):
		t.Errorf("Run did not return 20s after Close")
	}
}

// fanJob is the workflow the crash tests run: a par of three, then one
// more, in a sequence.
func fanJob() ast.Node {
	return ast.Seq(ast.Par(ast.Act("noop", "a"), ast.Act("noop", "b"), ast.Act("noop", "c")), ast.Act("noop", "d"))
}

// checkHistory checks that job j's history, read from st, has every
// step once (versions follow one another, every action's result applied
// in one step) and replays to j byte for byte.
func checkHistory(t testing.TB, ctx context.Context, st *kafkarunner.Store, j job.Job) {
	t.Helper()
	h, err := st.History(ctx, j.ID())
	if err != nil {
		t.Errorf("history of %s: %v", j.ID(), err)
		return
	}
	v := h.Origin.Version()
	seen := map[string]uint64{}
	for _, s := range h.Steps {
		if s.Version != v+1 {
			t.Errorf("job %s: step v%d after v%d", j.ID(), s.Version, v)
		}
		v = s.Version
		for _, r := range s.Results {
			if prev, ok := seen[r.ActionID]; ok {
				t.Errorf("job %s: %s applied in step v%d and again in v%d", j.ID(), r.ActionID, prev, s.Version)
			}
			seen[r.ActionID] = s.Version
		}
	}
	latest, err := h.Latest()
	if err != nil {
		t.Errorf("job %s: replay: %v", j.ID(), err)
		return
	}
	a, _ := job.Encode(latest)
	b, _ := job.Encode(j)
	if !bytes.Equal(a, b) {
		t.Errorf("job %s: the history replays to v%d %s, not v%d %s", j.ID(), latest.Version(), latest.Status(), j.Version(), j.Status())
	}
}

// submitAll submits n fan jobs through client, in parallel, and returns
// their IDs and a channel that gets the submits' errors, closed when all
// returned.
func submitAll(ctx context.Context, client *running, n int, prefix string) ([]job.ID, <-chan error) {
	return submitAllWith(ctx, client, n, prefix, fanJob)
}

// pausedFanJob is fanJob with a pause before the last action.
func pausedFanJob() ast.Node {
	return ast.Seq(ast.Par(ast.Act("noop", "a"), ast.Act("pause", nil), ast.Act("noop", "c")), ast.Act("noop", "d"))
}

// submitAllWith is submitAll of the workflows mk makes.
func submitAllWith(ctx context.Context, client *running, n int, prefix string, mk func() ast.Node) ([]job.ID, <-chan error) {
	ids := make([]job.ID, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range ids {
		ids[i] = job.ID(fmt.Sprintf("%s-%03d", prefix, i))
		wg.Go(func() {
			if err := client.Submit(ctx, ids[i], mk()); err != nil {
				errs <- fmt.Errorf("submit %s: %w", ids[i], err)
			}
		})
	}
	go func() { wg.Wait(); close(errs) }()
	return ids, errs
}

// finishAll waits for every job and checks each succeeded, ran every
// action at least once, and has an exact history.
func finishAll(t *testing.T, ctx context.Context, client *running, st *kafkarunner.Store, c *counter, ids []job.ID) (extra int) {
	t.Helper()
	for _, id := range ids {
		j, err := client.Wait(ctx, id)
		if err != nil {
			stored, lerr := st.Load(context.Background(), id)
			t.Fatalf("job %s did not finish: %v; stored: %v %v", id, err, stored, lerr)
		}
		if j.Status() != job.StatusSucceeded {
			t.Errorf("job %s: %s\n%s", id, j.Status(), job.Describe(j))
		}
		checkHistory(t, ctx, st, j)
		c.mu.Lock()
		for _, p := range []string{"seq[0].par[0]", "seq[0].par[1]", "seq[0].par[2]", "seq[1]"} {
			n, counted := c.runs[string(id)+"/"+p+"#1"]
			if !counted && p == "seq[0].par[1]" && j.Status() == job.StatusSucceeded {
				continue // pausedFanJob's pause, not counted
			}
			if n == 0 {
				t.Errorf("job %s: %s never ran, yet the job succeeded", id, p)
			}
			extra += max(n-1, 0)
		}
		c.mu.Unlock()
	}
	return extra
}

// errDied is what every request and commit of a runner fails with once
// the process it stands for died (dier).
var errDied = errors.New("injected crash: the process died here")

// dier is a fault hook (InjectFaults) that kills its process at the first
// fault point at says yes to: that request or commit fails, and so does
// every one after it, as a dead process makes none. at may be called from
// several goroutines at once.
type dier struct {
	at   func(p kafkarunner.FaultPoint, topic string, tr *job.Transition) bool
	dead atomic.Bool
	once sync.Once
	died chan struct{} // closed once the process died
}

func (d *dier) hook(p kafkarunner.FaultPoint, topic string, tr *job.Transition) error {
	if d.dead.Load() {
		return errDied
	}
	if d.at(p, topic, tr) {
		d.dead.Store(true)
		d.once.Do(func() { close(d.died) })
		return errDied
	}
	return nil
}

// TestCrashPoints kills a runner at each crash point of the package doc
// while 20 jobs run, in a process of its own (its own Store, whose fault
// hook kills it), and starts another in its place: every job completes,
// each job's history holds every step once, every action ran (some
// twice: at least once).
//
// The restarter points (before and after a state write, between the
// actions and the head, after a batch is applied) kill a restarter while
// a worker process goes on; the worker points (ran, delivered) kill a
// worker while a restarter process goes on. Results cross processes
// through the restarter topic.
func TestCrashPoints(t *testing.T) {
	type at = func(p kafkarunner.FaultPoint, topic string, tr *job.Transition) bool
	for _, tc := range []struct {
		point  string
		worker bool
		// at makes the point's hook: state, restarter and action are the
		// state topic, the restarter topic and the action topics' prefix.
		at func(state, restarter, action string) at
	}{
		// Before its 7th step is written (W1): the step is lost.
		{"commit", false, func(_, _, _ string) at {
			var n atomic.Int64
			return func(p kafkarunner.FaultPoint, _ string, tr *job.Transition) bool {
				return p == kafkarunner.FaultCommit && !tr.Created() && n.Add(1) == 7
			}
		}},
		// Once its 7th step is written (W1), before its actions are
		// produced.
		{"saved", false, func(_, _, _ string) at {
			var n atomic.Int64
			return func(p kafkarunner.FaultPoint, _ string, tr *job.Transition) bool {
				return p == kafkarunner.FaultCommitted && !tr.Created() && n.Add(1) == 7
			}
		}},
		// At the first state write (a head, W4, or another job's step)
		// after its 7th produce of actions (W3).
		{"dispatched", false, func(state, _, action string) at {
			var n atomic.Int64
			return func(p kafkarunner.FaultPoint, topic string, _ *job.Transition) bool {
				if p != kafkarunner.FaultRequest {
					return false
				}
				if strings.HasPrefix(topic, action) {
					n.Add(1)
					return false
				}
				return topic == state && n.Load() >= 7
			}
		}},
		// At its first request on the restarter topic (a fetch or the
		// offset commit, C) once its 7th step was written: a batch is
		// applied, its offset maybe not committed.
		{"applied", false, func(_, restarter, _ string) at {
			var n atomic.Int64
			return func(p kafkarunner.FaultPoint, topic string, tr *job.Transition) bool {
				if p == kafkarunner.FaultCommitted && !tr.Created() {
					n.Add(1)
				}
				return p == kafkarunner.FaultRequest && topic == restarter && n.Load() >= 7
			}
		}},
		// Before it produces its 7th result: an action ran, its result is
		// not delivered.
		{"ran", true, func(_, restarter, _ string) at {
			var n atomic.Int64
			return func(p kafkarunner.FaultPoint, topic string, _ *job.Transition) bool {
				return p == kafkarunner.FaultRequest && topic == restarter && n.Add(1) == 7
			}
		}},
		// At its first request on an action topic (a fetch or the offset
		// commit) after its 7th result was produced: the result is
		// delivered, its offset maybe not committed.
		{"delivered", true, func(_, restarter, action string) at {
			var n atomic.Int64
			return func(p kafkarunner.FaultPoint, topic string, _ *job.Transition) bool {
				if p != kafkarunner.FaultRequest {
					return false
				}
				if topic == restarter {
					n.Add(1)
					return false
				}
				return strings.HasPrefix(topic, action) && n.Load() > 7
			}
		}},
	} {
		t.Run(tc.point, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cfg := testConfig(t)
			c := newCounter(t)
			d := &dier{at: tc.at(cfg.Prefix+".state", cfg.Prefix+".restarter", cfg.Prefix+".action."), died: make(chan struct{})}
			victimRole, survivorRole := kafkarunner.RoleRestarter, kafkarunner.RoleWorker
			if tc.worker {
				victimRole, survivorRole = kafkarunner.RoleWorker, kafkarunner.RoleRestarter
			}
			start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: c.reg, DrainTimeout: time.Second}, Store: openStore(t, cfg), Role: survivorRole})
			victim := start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: c.reg, DrainTimeout: -1}, Store: openStore(t, kafkarunner.InjectFaults(cfg, d.hook)), Role: victimRole})
			clientStore := openStore(t, cfg)
			client := start(t, kafkarunner.Options{Store: clientStore, Role: kafkarunner.RoleClient})

			ids, errs := submitAll(ctx, client, 20, "crash")
			select {
			case <-d.died:
			case <-time.After(time.Minute):
				t.Fatalf("the crash point %s was not reached", tc.point)
			}
			victim.stop(t)
			start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: c.reg, DrainTimeout: time.Second}, Store: openStore(t, cfg), Role: victimRole})
			for err := range errs {
				t.Error(err)
			}
			extra := finishAll(t, ctx, client, clientStore, c, ids)
			t.Logf("crash at %s: %d extra runs of actions (at least once)", tc.point, extra)
		})
	}
}
