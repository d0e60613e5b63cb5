package zk_test

// Proofs of placement on the claim side (issue 18, part C): capacity and
// limits, fairness between jobs, the strategies, soft affinity, pins and
// replicas, with in-process workers on one root, each on a connection
// (a session) of its own.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/store"
)

// placeLog records where and when actions ran, and the most each worker
// (and the cluster) ran at once.
type placeLog struct {
	mu       sync.Mutex
	running  map[string]int            // worker -> running now
	byName   map[string]map[string]int // worker -> action name -> running now
	most     map[string]int            // worker -> the most it ran at once
	mostName map[string]map[string]int // worker -> name -> the most at once
	total    int
	allBusy  int // the most running at once over all workers
	starts   []placeStart
	// full, when not nil, is closed once fill actions run at once; until
	// then every handler waits for it (at most 30 s) before its sleep, so
	// that a loaded machine's slow claims cannot keep the slots from
	// filling (a test of whether they can all be busy at once).
	full   chan struct{}
	fill   int
	filled bool
}

type placeStart struct {
	worker string
	job    job.ID
	path   string
	name   string
	at     time.Time
	// holderBusy: the key's holder (placeLog.holder) ran its capacity
	// when this action started elsewhere.
	running map[string]int
}

func newPlaceLog() *placeLog {
	return &placeLog{running: map[string]int{}, byName: map[string]map[string]int{}, most: map[string]int{}, mostName: map[string]map[string]int{}}
}

func (p *placeLog) enter(worker string, a job.Action) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[worker]++
	p.total++
	if p.byName[worker] == nil {
		p.byName[worker], p.mostName[worker] = map[string]int{}, map[string]int{}
	}
	p.byName[worker][a.Name]++
	p.most[worker] = max(p.most[worker], p.running[worker])
	p.mostName[worker][a.Name] = max(p.mostName[worker][a.Name], p.byName[worker][a.Name])
	p.allBusy = max(p.allBusy, p.total)
	if p.full != nil && !p.filled && p.total >= p.fill {
		p.filled = true
		close(p.full)
	}
	run := make(map[string]int, len(p.running))
	for w, n := range p.running {
		run[w] = n
	}
	p.starts = append(p.starts, placeStart{worker: worker, job: a.JobID, path: a.Path(), name: a.Name, at: time.Now(), running: run})
}

func (p *placeLog) leave(worker string, a job.Action) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[worker]--
	p.byName[worker][a.Name]--
	p.total--
}

func (p *placeLog) snapshot() []placeStart {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.starts)
}

// handler records its runs in p as worker's and sleeps d (or until its
// context ends; a stop is not a failure here).
func (p *placeLog) handler(worker string, d time.Duration) runner.Handler {
	return func(ctx context.Context, a job.Action) ([]byte, error) {
		p.enter(worker, a)
		defer p.leave(worker, a)
		if p.full != nil {
			wait := time.NewTimer(30 * time.Second)
			select {
			case <-p.full:
			case <-ctx.Done():
			case <-wait.C:
			}
			wait.Stop()
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return nil, nil
	}
}

// cluster starts workers on one root, each on its own connection.
type cluster struct {
	t    *testing.T
	srv  *zktest.Server
	st   *zkrunner.Store // the submitter's
	sub  *zkrunner.Runner
	log  *placeLog
	runs map[string]*started
}

func newCluster(t *testing.T) *cluster {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	return &cluster{t: t, srv: srv, st: st, sub: submitter(t, st), log: newPlaceLog(), runs: map[string]*started{}}
}

// start runs a worker named name with capacity workers and handlers
// "work" (d long) and those in extra.
func (c *cluster) start(name string, workers int, d time.Duration, o zkrunner.Options) *started {
	c.t.Helper()
	hs := map[string]runner.Handler{"work": c.log.handler(name, d), "slow": c.log.handler(name, d)}
	o.WorkerOptions = runner.WorkerOptions{Name: name, Workers: workers, Registry: registry(c.t, hs), DrainTimeout: 2 * time.Second}
	o.Store = openOn(c.t, c.srv.Addrs(), c.st.Root(), zkrunner.Config{})
	s := startRunner(c.t, o)
	c.runs[name] = s
	poll(c.t, 20*time.Second, name+" registered and live", func() bool {
		ws, err := c.st.Workers(context.Background())
		return err == nil && slices.ContainsFunc(ws, func(w zkrunner.WorkerInfo) bool { return w.Name == name && w.Live })
	})
	return s
}

func (c *cluster) submit(id job.ID, n ast.Node) {
	c.t.Helper()
	err := c.sub.Submit(context.Background(), id, n)
	if errors.Is(err, store.ErrExists) {
		// Created, and the reply lost to a loaded machine's connection:
		// the retry found it (runner/zk's Submit says so; not placement's).
		c.t.Logf("submit %s: %v", id, err)
		return
	}
	if err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) wait(ids ...job.ID) {
	c.t.Helper()
	for _, id := range ids {
		if j := waitJob(c.t, c.sub, id, time.Minute); j.Status() != job.StatusSucceeded {
			c.t.Fatalf("job %s: %s\n%s", id, j.Status(), job.Describe(j))
		}
	}
}

func acts(name string, n int) []ast.Node {
	out := make([]ast.Node, n)
	for i := range out {
		out[i] = ast.Act(name, i)
	}
	return out
}

// TestPlacementCapacity: 3 workers of capacities 1, 2 and 3 and 60
// actions: no worker ever runs more than its capacity, all 6 slots are
// busy at once, and a limit (slow=1 on the worker of capacity 3) is
// honoured beside it.
func TestPlacementCapacity(t *testing.T) {
	c := newCluster(t)
	c.log.full, c.log.fill = make(chan struct{}), 6
	c.start("c1", 1, 150*time.Millisecond, zkrunner.Options{})
	c.start("c2", 2, 150*time.Millisecond, zkrunner.Options{})
	c.start("c3", 3, 150*time.Millisecond, zkrunner.Options{Limits: map[string]int{"slow": 1}})
	c.submit("cap", ast.Par(append(acts("work", 50), acts("slow", 10)...)...))
	c.wait("cap")
	// Transitions that make several slow actions at once claim them for
	// their worker within its limit too (slots.reserve).
	for i := range 3 {
		c.submit(job.ID(fmt.Sprintf("fan%d", i)), ast.Seq(ast.Act("work", nil), ast.Par(acts("slow", 4)...)))
	}
	c.wait("fan0", "fan1", "fan2")
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	for w, capacity := range map[string]int{"c1": 1, "c2": 2, "c3": 3} {
		if c.log.most[w] > capacity {
			t.Errorf("%s ran %d at once, over its capacity %d", w, c.log.most[w], capacity)
		}
	}
	if got := c.log.mostName["c3"]["slow"]; got > 1 {
		t.Errorf("c3 ran %d slow actions at once, over its limit 1", got)
	}
	if c.log.allBusy != 6 {
		t.Errorf("at most %d actions ran at once; want all 6 slots busy at some time", c.log.allBusy)
	}
	if len(c.log.starts) != 60+3*5 {
		t.Errorf("%d actions started, want 75", len(c.log.starts))
	}
}

// TestPlacementFairness: within a priority, a worker takes entries
// round-robin over jobs: job B's first action starts while job A, queued
// before it, still has most of its 1,000 actions queued.
func TestPlacementFairness(t *testing.T) {
	c := newCluster(t)
	const n = 1000
	c.submit("A", ast.Par(acts("work", n)...))
	c.start("f1", 2, 20*time.Millisecond, zkrunner.Options{})
	poll(t, 20*time.Second, "A runs", func() bool { return len(c.log.snapshot()) > 0 })
	c.submit("B", ast.Act("slow", nil))
	poll(t, 30*time.Second, "B runs", func() bool {
		return slices.ContainsFunc(c.log.snapshot(), func(s placeStart) bool { return s.job == "B" })
	})
	ss := c.log.snapshot()
	b := slices.IndexFunc(ss, func(s placeStart) bool { return s.job == "B" })
	started := 0
	for _, s := range ss[:b] {
		if s.job == "A" {
			started++
		}
	}
	t.Logf("B's first action started after %d of A's %d", started, n)
	if started > n/2 {
		t.Errorf("B's first action started after %d of A's %d actions: want it while A still has most queued", started, n)
	}
	_ = c.sub.Cancel(context.Background(), "A", "done with it") // the rest need not run
}

// TestPlacementStrategy: 4 workers of capacity 4 and 8 long actions:
// spread gives each 2 (plus or minus 1); pack puts at least 6 on two
// workers.
func TestPlacementStrategy(t *testing.T) {
	for _, s := range []placement.Strategy{placement.Spread, placement.Pack} {
		t.Run(s.String(), func(t *testing.T) {
			c := newCluster(t)
			if _, err := c.st.UpdateSettings(context.Background(), func(ps *placement.Settings) error { ps.Strategy = s; return nil }); err != nil {
				t.Fatal(err)
			}
			names := []string{"s1", "s2", "s3", "s4"}
			for _, n := range names {
				c.start(n, 4, time.Hour, zkrunner.Options{})
			}
			// One at a time, each once the loads published show the ones
			// before it: the strategy orders workers by published loads
			// (at most one write a second each), so actions that arrive
			// together are placed approximately (placement's doc).
			for i := range 8 {
				c.submit(job.ID(fmt.Sprintf("long%d", i)), ast.Act("work", i))
				poll(t, 30*time.Second, fmt.Sprintf("%d actions run and published", i+1), func() bool {
					ws, err := c.st.Workers(context.Background())
					n := 0
					for _, w := range ws {
						n += w.Load.Running
					}
					return err == nil && n == i+1 && len(c.log.snapshot()) == i+1
				})
				time.Sleep(100 * time.Millisecond) // the workers' watches see it (about 20 ms)
			}
			per := map[string]int{}
			for _, st := range c.log.snapshot() {
				per[st.worker]++
			}
			counts := make([]int, 0, 4)
			for _, n := range names {
				counts = append(counts, per[n])
			}
			t.Logf("%s: %v", s, per)
			slices.Sort(counts)
			switch s {
			case placement.Spread:
				if counts[0] < 1 || counts[3] > 3 {
					t.Errorf("spread placed %v: want 2 each, plus or minus 1", per)
				}
			case placement.Pack:
				if counts[2]+counts[3] < 6 {
					t.Errorf("pack placed %v: want at least 6 on two workers", per)
				}
			}
			for i := range 8 {
				if err := c.sub.Cancel(context.Background(), job.ID(fmt.Sprintf("long%d", i)), "done"); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// holderOf is the first live worker in key's preference list, among
// workers of equal capacity named names.
func holderOf(key string, names []string, capacity int) []string {
	ws := make([]placement.Worker, len(names))
	for i, n := range names {
		ws[i] = placement.Worker{Name: n, Capacity: capacity}
	}
	var out []string
	for _, w := range placement.Rank(placement.KeyHash(key), ws) {
		out = append(out, w.Name)
	}
	return out
}

// TestPlacementSoftAffinity: 20 keys of 10 actions on 4 workers run each
// key's actions on its holder while it has room; an action that runs
// elsewhere (a spill) started no sooner than the key's wait after it was
// queued, and only while its holder was busy; the workers count their
// spills. Then the holder of some keys stops: their next actions go at
// once to the next worker in each key's preference list.
func TestPlacementSoftAffinity(t *testing.T) {
	c := newCluster(t)
	names := []string{"k1", "k2", "k3", "k4"}
	for _, n := range names {
		c.start(n, 2, 150*time.Millisecond, zkrunner.Options{})
	}
	const wait = 1500 * time.Millisecond
	var ids []job.ID
	keys := map[job.ID]string{}
	submitted := map[job.ID]time.Time{}
	for k := range 20 {
		id := job.ID(fmt.Sprintf("key%02d", k))
		key := fmt.Sprintf("dataset-%d", k)
		keys[id] = key
		submitted[id] = time.Now()
		c.submit(id, ast.Par(acts("work", 10)...).WithAffinity(ast.Affinity{Key: key, Wait: wait}))
		ids = append(ids, id)
	}
	c.wait(ids...)
	onHolder, spills := 0, 0
	ownKeys := map[string]int{} // worker -> actions of the keys it holds that it ran
	for _, s := range c.log.snapshot() {
		holder := holderOf(keys[s.job], names, 2)[0]
		if s.worker == holder {
			onHolder++
			ownKeys[holder]++
			continue
		}
		spills++
		if since := s.at.Sub(submitted[s.job]); since < wait {
			t.Errorf("%s %s spilled to %s %v after it was queued, before the key's wait %v", s.job, s.path, s.worker, since, wait)
		}
	}
	var counted int64
	for _, n := range names {
		counted += c.runs[n].Stats().Spills
	}
	t.Logf("%d actions on their key's holder, %d spilled (counted %d)", onHolder, spills, counted)
	// How many spill depends on the machine's speed (a holder busy past
	// the wait); every holder runs its own keys' actions while it has
	// room.
	for _, n := range names {
		if holds := slices.ContainsFunc(slices.Collect(maps.Values(keys)), func(k string) bool { return holderOf(k, names, 2)[0] == n }); holds && ownKeys[n] == 0 {
			t.Errorf("%s holds keys but ran none of their actions", n)
		}
	}
	if int64(spills) != counted {
		t.Errorf("%d actions ran off their holder, the workers counted %d spills", spills, counted)
	}

	// The holder of key00 stops: its keys go at once to the next in
	// their lists (no wait: the actions are few).
	gone := holderOf(keys["key00"], names, 2)[0]
	if err := c.runs[gone].stop(); err != nil {
		t.Fatal(err)
	}
	live := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == gone })
	poll(t, 20*time.Second, gone+" seen down", func() bool {
		ws, _ := c.st.Workers(context.Background())
		return slices.ContainsFunc(ws, func(w zkrunner.WorkerInfo) bool { return w.Name == gone && !w.Live })
	})
	before := len(c.log.snapshot())
	var moved []job.ID
	for _, id := range ids {
		if holderOf(keys[id], names, 2)[0] != gone {
			continue
		}
		nid := id + "-again"
		keys[nid] = keys[id]
		c.submit(nid, ast.Act("work", nil).WithAffinity(ast.Affinity{Key: keys[id], Wait: time.Hour}))
		moved = append(moved, nid)
	}
	c.wait(moved...)
	for _, s := range c.log.snapshot()[before:] {
		want := holderOf(keys[s.job], live, 2)[0]
		if s.worker != want {
			t.Errorf("%s ran on %s after %s stopped; want the next live worker in its list, %s", s.job, s.worker, gone, want)
		}
	}
}

// pinLog follows a pinned job: the workers its actions ran on, in order.
func workersOf(ss []placeStart, id job.ID) []string {
	var out []string
	for _, s := range ss {
		if s.job == id {
			out = append(out, s.worker)
		}
	}
	return out
}

// TestPlacementPins: a pinned job's actions all run on one worker; when
// that worker stops, the pin waits out its grace, then moves once: the
// job's remaining actions run on one other worker, and it succeeds; the
// job's final transition deletes its pin and index entry. A worker back
// under its name within its grace keeps its pins: nothing moves.
func TestPlacementPins(t *testing.T) {
	pinned := func(steps int) ast.Node {
		return ast.Seq(acts("work", steps)...).WithAffinity(ast.Affinity{Scope: ast.ScopeJob})
	}
	t.Run("MovesAfterGrace", func(t *testing.T) {
		c := newCluster(t)
		const grace = 1500 * time.Millisecond
		names := []string{"p1", "p2", "p3"}
		for _, n := range names {
			c.start(n, 2, 300*time.Millisecond, zkrunner.Options{Grace: grace})
		}
		ids := []job.ID{"pin0", "pin1", "pin2"}
		for _, id := range ids {
			c.submit(id, pinned(8))
		}
		poll(t, 30*time.Second, "each job ran 2 steps", func() bool {
			ss := c.log.snapshot()
			for _, id := range ids {
				if len(workersOf(ss, id)) < 2 {
					return false
				}
			}
			return true
		})
		holder := workersOf(c.log.snapshot(), "pin0")[0]
		if err := c.runs[holder].stop(); err != nil {
			t.Fatal(err)
		}
		stopped := time.Now()
		c.wait(ids...)
		ss := c.log.snapshot()
		for _, id := range ids {
			ws := workersOf(ss, id)
			h := ws[0]
			i := slices.IndexFunc(ws, func(w string) bool { return w != h })
			if h != holder {
				if i >= 0 {
					t.Errorf("%s ran on %v: its holder %s never stopped, yet it moved", id, ws, h)
				}
				continue
			}
			if i < 0 {
				t.Errorf("%s ran only on %s, which stopped", id, h)
				continue
			}
			for _, w := range ws[i:] {
				if w != ws[i] {
					t.Errorf("%s ran on %v: after its move, not on one worker", id, ws)
				}
			}
			for _, s := range ss {
				if s.job == id && s.worker == ws[i] && s.at.Sub(stopped) < grace {
					t.Errorf("%s moved to %s %v after its holder stopped, within its grace %v", id, ws[i], s.at.Sub(stopped), grace)
					break
				}
			}
		}
		var moves int64
		for _, n := range names {
			if n != holder {
				moves += c.runs[n].Stats().PinMoves
			}
		}
		if moves < 1 {
			t.Errorf("pin moves counted %d, want at least 1", moves)
		}
		pins, err := c.st.Pins(context.Background())
		if err != nil || len(pins) != 0 {
			t.Errorf("pins left after every pinned job ended: %+v, %v", pins, err)
		}
		zc := zktest.Connect(t, c.srv.Addrs(), 4*time.Second)
		for _, n := range names {
			kids, _, err := zc.Children(c.st.Root() + "/workers/" + n + "/pins")
			if err != nil || len(kids) != 0 {
				t.Errorf("%s's pins index holds %v after the jobs ended (%v)", n, kids, err)
			}
		}
	})
	t.Run("RestartWithinGrace", func(t *testing.T) {
		c := newCluster(t)
		names := []string{"q1", "q2", "q3"}
		for _, n := range names {
			c.start(n, 2, 300*time.Millisecond, zkrunner.Options{Grace: time.Hour})
		}
		c.submit("stay", pinned(6))
		poll(t, 30*time.Second, "2 steps ran", func() bool { return len(workersOf(c.log.snapshot(), "stay")) >= 2 })
		holder := workersOf(c.log.snapshot(), "stay")[0]
		if err := c.runs[holder].stop(); err != nil {
			t.Fatal(err)
		}
		c.start(holder, 2, 300*time.Millisecond, zkrunner.Options{Grace: time.Hour})
		c.wait("stay")
		for _, w := range workersOf(c.log.snapshot(), "stay") {
			if w != holder {
				t.Fatalf("stay ran on %v: its holder came back within its grace, yet it moved", workersOf(c.log.snapshot(), "stay"))
			}
		}
	})
}

// TestPlacementReplicas: 3 replicas on 3 workers run on 3 distinct
// workers; with one worker, they still all run.
func TestPlacementReplicas(t *testing.T) {
	c := newCluster(t)
	for _, n := range []string{"r1", "r2", "r3"} {
		c.start(n, 4, 300*time.Millisecond, zkrunner.Options{})
	}
	c.submit("rep", ast.Act("work", nil).WithReplicas(3))
	c.wait("rep")
	ws := workersOf(c.log.snapshot(), "rep")
	slices.Sort(ws)
	if len(slices.Compact(slices.Clone(ws))) != 3 {
		t.Errorf("3 replicas ran on %v: want 3 distinct workers", ws)
	}

	one := newCluster(t)
	one.start("alone", 4, 100*time.Millisecond, zkrunner.Options{})
	one.submit("rep1", ast.Seq(ast.Act("work", nil).WithReplicas(3)))
	one.wait("rep1")
	if ws := workersOf(one.log.snapshot(), "rep1"); len(ws) == 0 || strings.Join(slices.Compact(ws), ",") != "alone" {
		t.Errorf("replicas with one worker ran on %v", ws)
	}
}

// TestOldestReasons: Store.Oldest gives each waiting entry its action
// name, route token and what placement decides for it on the registry as
// read: a full worker passes, and says so.
func TestOldestReasons(t *testing.T) {
	c := newCluster(t)
	c.start("o1", 1, time.Hour, zkrunner.Options{})
	c.submit("busy", ast.Act("work", nil))
	poll(t, 20*time.Second, "o1 runs busy", func() bool { return len(c.log.snapshot()) == 1 })
	poll(t, 20*time.Second, "o1's load published", func() bool {
		ws, err := c.st.Workers(context.Background())
		return err == nil && len(ws) == 1 && ws[0].Load.Running == 1
	})
	c.submit("next", ast.Act("slow", nil).WithAffinity(ast.Affinity{Key: "k1"}))
	var qs []zkrunner.QueueEntry
	poll(t, 20*time.Second, "next queued", func() bool {
		var err error
		qs, err = c.st.Oldest(context.Background(), 5)
		return err == nil && len(qs) == 2
	})
	var next zkrunner.QueueEntry
	for _, q := range qs {
		if q.Job == "next" {
			next = q
		}
	}
	if next.Name != "slow" || !strings.HasPrefix(next.Route, "k") || next.Worker != "" {
		t.Fatalf("Oldest gave %+v for next: want action slow, a soft route, waiting", next)
	}
	if !strings.Contains(next.Reason, "o1 is full") {
		t.Errorf("next's reason is %q: want o1 full", next.Reason)
	}
	_ = c.sub.Cancel(context.Background(), "busy", "done")
}

// TestOlderEntryNames: an entry named as an older baton named them
// (a-RANK-TIME-LEN-JOB-ACTION: no route, no action name) is still
// claimed and run, its action's name read from its data, within the
// name's limit.
func TestOlderEntryNames(t *testing.T) {
	c := newCluster(t)
	zc := zktest.Connect(t, c.srv.Addrs(), 4*time.Second)
	c.submit("old", ast.Par(acts("slow", 3)...))
	q := c.st.Root() + "/queue"
	names, _, err := zc.Children(q)
	if err != nil || len(names) != 3 {
		t.Fatalf("queue %v, %v: want 3 entries", names, err)
	}
	for _, n := range names {
		data, _, err := zc.Get(q + "/" + n)
		if err != nil {
			t.Fatal(err)
		}
		// a-RANK-TIME-ROUTE-NLEN-NAME-LEN-JOB-ACTION -> a-RANK-TIME-LEN-JOB-ACTION
		old := n[:len("a-10000-1732600000000-")] + n[strings.Index(n, "-3-old-")+1:]
		if _, err := zc.Multi(&zk.DeleteRequest{Path: q + "/" + n, Version: -1}, &zk.CreateRequest{Path: q + "/" + old, Data: data, Acl: zk.WorldACL(zk.PermAll)}); err != nil {
			t.Fatalf("rename %s to %s: %v", n, old, err)
		}
	}
	c.start("o1", 3, 300*time.Millisecond, zkrunner.Options{Limits: map[string]int{"slow": 1}})
	c.wait("old")
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	if len(c.log.starts) != 3 || c.log.mostName["o1"]["slow"] != 1 {
		t.Errorf("%d actions ran, at most %d slow at once: want 3, one at a time (the limit)", len(c.log.starts), c.log.mostName["o1"]["slow"])
	}
}

// TestReplicaClaimedInTransition: the worker whose transition makes a
// race's replica copies claims one of them in that transition when it
// has a free slot and runs no copy of the group, even when the spread
// strategy ranks idle workers ahead of it: the copy then starts with no
// queue round trip, as a single action does, and the others go to the
// other workers from the queue. (Before, the copies all waited in the
// queue for the strategy's delay whenever the submitter was busier than
// its peers' published loads.)
func TestReplicaClaimedInTransition(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	release := make(chan struct{})
	defer close(release)
	held := make(chan struct{}, 1)
	wait := func(ctx context.Context, _ job.Action) ([]byte, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	for _, name := range []string{"idle1", "idle2"} {
		startRunner(t, zkrunner.Options{Store: openOn(t, srv.Addrs(), st.Root(), zkrunner.Config{}),
			WorkerOptions: runner.WorkerOptions{Name: name, Workers: 4, Registry: registry(t, map[string]runner.Handler{"copy": wait})}})
	}
	poll(t, 20*time.Second, "idle1 and idle2 live", func() bool {
		ws, err := st.Workers(context.Background())
		return err == nil && len(ws) == 2 && ws[0].Live && ws[1].Live
	})
	var mu sync.Mutex
	count := map[string]int{} // action name -> claims in transitions, as sub's hook tells them
	hooks := &runner.Hooks{Placement: func(e runner.PlacementEvent) {
		if e.Kind == runner.PlacementClaimedInTransition {
			mu.Lock()
			count[e.Action]++
			mu.Unlock()
		}
	}}
	sub := startRunner(t, zkrunner.Options{Store: openOn(t, srv.Addrs(), st.Root(), zkrunner.Config{}),
		WorkerOptions: runner.WorkerOptions{Name: "sub", Workers: 4, Hooks: hooks, Registry: registry(t, map[string]runner.Handler{
			"hold": func(ctx context.Context, _ job.Action) ([]byte, error) {
				held <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil, nil
			},
			"copy": func(context.Context, job.Action) ([]byte, error) { return nil, nil },
		})}})
	ctx := context.Background()
	// sub runs one action: by its exact load (1 of 4) against the idle
	// workers' published 0 of 4, spread ranks it last for every copy.
	if err := sub.Submit(ctx, "busy", ast.Act("hold", nil)); err != nil {
		t.Fatal(err)
	}
	<-held
	if err := sub.Submit(ctx, "rep", ast.Act("copy", nil).WithReplicas(3)); err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, sub.Runner, "rep", time.Minute); j.Status() != job.StatusSucceeded {
		t.Fatalf("job rep: %s\n%s", j.Status(), job.Describe(j))
	}
	mu.Lock()
	defer mu.Unlock()
	if count["copy"] != 1 {
		t.Errorf("sub claimed %d copies in the transition that made them; want 1 (one copy, with no queue round trip)", count["copy"])
	}
}
