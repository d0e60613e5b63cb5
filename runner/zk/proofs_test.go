package zk_test

// Failure proofs of the ZooKeeper runner: many workers on one dag, two
// appliers racing on one transition, a leader killed under running jobs,
// a server down for half a minute.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// runLog records the runs of actions across workers: how often each leaf
// ran, which ran at the same moment as itself, and who ran what.
type runLog struct {
	mu       sync.Mutex
	running  map[string]string // leaf key (job/path) -> the worker running it
	runs     map[string]int
	done     map[string]bool // ran to the end at least once
	byWorker map[string]int
	bad      []string
}

func newRunLog() *runLog {
	return &runLog{running: map[string]string{}, runs: map[string]int{}, done: map[string]bool{}, byWorker: map[string]int{}}
}

func leafKey(a job.Action) string { return string(a.JobID) + "/" + a.Path() }

// enter records that worker starts a: entering a leaf that runs anywhere
// is a failure, and so is entering one before its dependencies (keys)
// ran to the end.
func (l *runLog) enter(worker string, a job.Action, deps ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := leafKey(a)
	if w, ok := l.running[k]; ok {
		l.bad = append(l.bad, fmt.Sprintf("%s entered by %s while %s runs it", k, worker, w))
	}
	for _, d := range deps {
		if !l.done[d] {
			l.bad = append(l.bad, fmt.Sprintf("%s started by %s before its dependency %s ran", k, worker, d))
		}
	}
	l.running[k] = worker
	l.runs[k]++
	l.byWorker[worker]++
}

func (l *runLog) leave(a job.Action) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.running, leafKey(a))
	l.done[leafKey(a)] = true
}

func (l *runLog) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.runs {
		n += c
	}
	return n
}

// extra returns the runs beyond the first of every leaf, and the leaves
// that ran more than once.
func (l *runLog) extra() (int, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	var keys []string
	for k, c := range l.runs {
		if c > 1 {
			n += c - 1
			keys = append(keys, fmt.Sprintf("%s x%d", k, c))
		}
	}
	slices.Sort(keys)
	return n, keys
}

func (l *runLog) violations() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.bad)
}

// TestStressDag (zk-plan's stress test, ported): ten workers, each a
// Runner on its own connection, run one job of a dag of 100 actions where
// every action after the first ten is after ten random earlier ones
// (fixed seed). No action runs twice at the same moment, none starts
// before its dependencies ran, every action runs, the job succeeds, and
// its history holds each result once.
func TestStressDag(t *testing.T) {
	srv := zktest.Start(t)
	root := freshRoot(srv.Root())
	const n, fanIn, nWorkers = 100, 10, 10
	rng := rand.New(rand.NewPCG(20240601, 7))
	deps := make([][]int, n)
	children := make([]ast.Node, n)
	for i := range n {
		c := ast.Act("work", map[string]int{"i": i}).Named(fmt.Sprintf("a%d", i))
		if i >= 10 {
			deps[i] = rng.Perm(i)[:fanIn]
			var after []string
			for _, d := range deps[i] {
				after = append(after, fmt.Sprintf("a%d", d))
			}
			c = c.WithAfter(after...)
		}
		children[i] = c
	}
	wf := ast.Dag(children...)
	if err := ast.Validate(wf); err != nil {
		t.Fatal(err)
	}
	const id = job.ID("stress")

	// The leaf key of child i: its path in the dag. Learnt from the
	// actions as they run (payload i -> path).
	var pathMu sync.Mutex
	pathOf := map[int]string{}
	rl := newRunLog()
	for w := range nWorkers {
		name := fmt.Sprintf("w%d", w)
		jitter := rand.New(rand.NewPCG(uint64(w), 1))
		var jmu sync.Mutex
		reg := registry(t, map[string]runner.Handler{"work": func(ctx context.Context, a job.Action) ([]byte, error) {
			var p struct{ I int }
			if err := json.Unmarshal(a.Payload, &p); err != nil {
				return nil, err
			}
			pathMu.Lock()
			pathOf[p.I] = leafKey(a)
			var dk []string
			for _, d := range deps[p.I] {
				dk = append(dk, pathOf[d]) // "" if d never ran: reported by enter
			}
			pathMu.Unlock()
			rl.enter(name, a, dk...)
			jmu.Lock()
			d := time.Duration(2+jitter.IntN(8)) * time.Millisecond
			jmu.Unlock()
			time.Sleep(d) // the action's work
			rl.leave(a)
			return fmt.Appendf(nil, `{"i":%d,"by":%q}`, p.I, name), nil
		}})
		st := openOn(t, srv.Addrs(), root, zkrunner.Config{})
		startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: name, Registry: reg, Workers: 4}, Store: st})
	}
	subSt := openOn(t, srv.Addrs(), root, zkrunner.Config{})
	sub := submitter(t, subSt)
	begin := time.Now()
	if err := sub.Submit(context.Background(), id, wf); err != nil {
		t.Fatal(err)
	}
	final := waitJob(t, sub, id, 50*time.Second)
	took := time.Since(begin)
	if final.Status() != job.StatusSucceeded {
		t.Fatalf("job ended %s:\n%s", final.Status(), job.Describe(final))
	}
	for _, v := range rl.violations() {
		t.Error(v)
	}
	pathMu.Lock()
	for i := range n {
		k, ok := pathOf[i]
		if !ok {
			t.Errorf("a%d never ran", i)
			continue
		}
		if rl.runs[k] < 1 {
			t.Errorf("a%d (%s) never ran", i, k)
		}
	}
	pathMu.Unlock()
	h := checkHistory(t, subSt, final)
	results := 0
	for _, s := range h.Steps {
		results += len(s.Results)
	}
	if results != n {
		t.Errorf("the history applied %d results, want %d (one per action)", results, n)
	}
	extra, which := rl.extra()
	workers := 0
	for _, c := range rl.byWorker {
		if c > 0 {
			workers++
		}
	}
	if workers < 2 {
		t.Errorf("only %d worker ran actions (%v): the workers did not share the job", workers, rl.byWorker)
	}
	t.Logf("100-action dag (fan-in 10) on %d workers in %v: %d runs, %d extra %v, %d steps, runs by worker %v",
		nWorkers, took.Round(time.Millisecond), rl.total(), extra, which, len(h.Steps), rl.byWorker)
}

// TestRacingAppliers: two runners, on two connections, apply the same
// action's result (with different outputs) to the same version of a job
// at the same moment, for 100 rounds. Exactly one result of each round
// is applied, in exactly one step; the other is ignored as a duplicate.
func TestRacingAppliers(t *testing.T) {
	srv := zktest.Start(t)
	root := freshRoot(srv.Root())
	const rounds = 100
	logs := &logBuf{}
	var ignored atomic.Int64
	var reasonsMu sync.Mutex
	reasons := map[string]int{}
	hooks := &runner.Hooks{Ignored: func(_ job.ID, ig job.Ignored) {
		ignored.Add(1)
		reasonsMu.Lock()
		reasons[ig.Reason.String()]++
		reasonsMu.Unlock()
	}}
	var rs [2]*zkrunner.Runner
	var sts [2]*zkrunner.Store
	for i := range rs {
		sts[i] = openOn(t, srv.Addrs(), root, zkrunner.Config{})
		r, err := zkrunner.New(zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: fmt.Sprintf("applier%d", i), Logger: logs.logger(), Hooks: hooks}, Store: sts[i]})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		rs[i] = r
	}
	var leaves []ast.Node
	for i := range rounds {
		leaves = append(leaves, ast.Act("x", i))
	}
	const id = job.ID("race")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	if err := rs[0].Submit(ctx, id, ast.Par(leaves...)); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	for round := range rounds {
		j, err := rs[round%2].Status(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		out := j.Outstanding()
		if len(out) != rounds-round {
			t.Fatalf("round %d: %d actions outstanding, want %d", round, len(out), rounds-round)
		}
		a := out[0]
		res := [2]job.Result{a.Succeed([]byte(`"applier0"`)), a.Succeed([]byte(`"applier1"`))}
		var errs [2]error
		var ready, wg sync.WaitGroup
		start := make(chan struct{})
		for i := range rs {
			ready.Add(1)
			wg.Go(func() {
				ready.Done()
				<-start
				errs[i] = rs[i].Deliver(ctx, res[i])
			})
		}
		ready.Wait()
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: applier%d: %v", round, i, err)
			}
		}
		after, err := rs[0].Status(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if after.Version() != j.Version()+1 {
			t.Fatalf("round %d: the job went from v%d to v%d: want exactly one transition", round, j.Version(), after.Version())
		}
		if got := ignored.Load(); got != int64(round+1) {
			t.Fatalf("round %d: %d results ignored so far, want %d (one per round)", round, got, round+1)
		}
	}
	took := time.Since(begin)
	final, err := rs[0].Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if final.Status() != job.StatusSucceeded || final.Version() != 1+rounds {
		t.Fatalf("job is v%d %s, want v%d succeeded", final.Version(), final.Status(), 1+rounds)
	}
	h := checkHistory(t, sts[1], final)
	wins := map[string]int{}
	for _, s := range h.Steps {
		if len(s.Results) != 1 {
			t.Errorf("step v%d applied %d results, want 1", s.Version, len(s.Results))
			continue
		}
		wins[string(s.Results[0].Output)]++
	}
	if wins[`"applier0"`]+wins[`"applier1"`] != rounds {
		t.Errorf("winning outputs %v: want %d from the two appliers", wins, rounds)
	}
	// Every loser is a duplicate, but the last round's, whose winner
	// finished the job: it is ignored as "job done".
	reasonsMu.Lock()
	if reasons[job.IgnoredDuplicate.String()] != rounds-1 || reasons[job.IgnoredJobDone.String()] != 1 {
		t.Errorf("results ignored for %v; want %d duplicates and 1 job done", reasons, rounds-1)
	}
	reasonsMu.Unlock()
	conflicts := logs.count("commit conflict")
	// Each applier commits from its cached copy first: the loser's commit
	// (racing, or from a copy one round old) is refused by the record's
	// compare-and-swap, and it reloads.
	t.Logf("%d rounds in %v: %d transitions, %d results ignored %v, wins %v; %d commits refused by the compare-and-swap (commit conflict, reload)",
		rounds, took.Round(time.Millisecond), len(h.Steps), ignored.Load(), reasons, wins, conflicts)
	if conflicts == 0 {
		t.Errorf("no commit was refused by the compare-and-swap in %d rounds: the race was not exercised", rounds)
	}
}

// seqJob is a job of k steps of action "step", each with its number.
func seqJob(k int) ast.Node {
	var leaves []ast.Node
	for i := range k {
		leaves = append(leaves, ast.Act("step", i))
	}
	return ast.Seq(leaves...)
}

// stepHandler records its runs in rl and takes d.
func stepHandler(rl *runLog, worker string, d time.Duration) runner.Handler {
	return func(ctx context.Context, a job.Action) ([]byte, error) {
		rl.enter(worker, a)
		defer rl.leave(a)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return fmt.Appendf(nil, "%q", worker), nil
	}
}

// checkJobs checks that every job succeeded with k steps applied once,
// that every leaf ran, and returns the steps of all.
func checkJobs(t *testing.T, r *zkrunner.Runner, st *zkrunner.Store, ids []job.ID, k int, rl *runLog, timeout time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(timeout)
	steps := 0
	for _, id := range ids {
		final := waitJob(t, r, id, max(time.Until(deadline), time.Second))
		if final.Status() != job.StatusSucceeded {
			t.Errorf("job %s ended %s:\n%s", id, final.Status(), job.Describe(final))
			continue
		}
		h := checkHistory(t, st, final)
		if len(h.Steps) != k {
			t.Errorf("job %s: %d steps, want %d (one per action)", id, len(h.Steps), k)
		}
		steps += len(h.Steps)
		for i := range k {
			if _, n := resultOf(h, fmt.Sprintf("seq[%d]", i)); n != 1 {
				t.Errorf("job %s: the history applied %d results for seq[%d], want 1", id, n, i)
			}
		}
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if len(rl.runs) != len(ids)*k {
		t.Errorf("%d leaves ran, want %d", len(rl.runs), len(ids)*k)
	}
	return steps
}

// dumpOnFailure shows, if t failed, the claims the live workers hold,
// each with whether a handler runs it (rl), and the warnings and errors of
// logs (at most the last 80).
func dumpOnFailure(t *testing.T, st *zkrunner.Store, rl *runLog, logs ...*logBuf) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ws, err := st.Workers(ctx)
		if err != nil {
			t.Logf("workers: %v", err)
		}
		for _, w := range ws {
			for _, c := range w.Running {
				path, _, _ := job.SplitActionID(c.Action)
				rl.mu.Lock()
				_, runs := rl.running[string(c.Job)+"/"+path]
				rl.mu.Unlock()
				if runs {
					t.Logf("%s holds the claim on %s/%s and runs it", w.Name, c.Job, c.Action)
				} else {
					t.Logf("%s holds the claim on %s/%s but no handler runs it: an orphaned claim (TestBugLostClaimReplyOrphansAction)", w.Name, c.Job, c.Action)
				}
			}
		}
		for _, l := range logs {
			var bad []string
			for _, line := range strings.Split(l.String(), "\n") {
				if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") || strings.Contains(line, "op=claim") {
					bad = append(bad, line)
				}
			}
			t.Logf("warnings and errors (%d, the last 80):\n%s", len(bad), strings.Join(bad[max(0, len(bad)-80):], "\n"))
		}
	})
}

// TestFailoverLeaderKilled: four workers on a three-node ensemble run 50
// jobs of three actions; the leader is killed (SIGKILL) while they run.
// The ensemble elects another, the clients move to the live nodes, and
// every job completes with each step applied exactly once.
//
// Until the bug TestBugLostClaimReplyOrphansAction shows is fixed, this
// test fails in about half the runs: a claim the dying leader applied but
// did not answer is retried, finds its own claim node, and is given up;
// the job waits forever ("an orphaned claim" in the failure output).
func TestFailoverLeaderKilled(t *testing.T) {
	reconnects(t)
	ens := zktest.StartEnsemble(t, 3) // skips under -short
	root := freshRoot(ens.Root())
	const nJobs, k = 50, 3
	logs := &logBuf{}
	rl := newRunLog()
	for w := range 4 {
		name := fmt.Sprintf("w%d", w)
		st := openOn(t, ens.Addrs(), root, zkrunner.Config{SessionTimeout: 8 * time.Second, Logger: logs.logger()})
		startRunner(t, zkrunner.Options{
			WorkerOptions: runner.WorkerOptions{Name: name, Workers: 4, Logger: logs.logger(), Registry: registry(t, map[string]runner.Handler{"step": stepHandler(rl, name, 40*time.Millisecond)})},
			Store:         st,
		})
	}
	subSt := openOn(t, ens.Addrs(), root, zkrunner.Config{SessionTimeout: 8 * time.Second})
	sub := submitter(t, subSt)
	dumpOnFailure(t, subSt, rl, logs)
	var ids []job.ID
	for i := range nJobs {
		id := job.ID(fmt.Sprintf("f%02d", i))
		if err := sub.Submit(context.Background(), id, seqJob(k)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	poll(t, 30*time.Second, "30 actions run before the kill", func() bool { return rl.total() >= 30 })
	leader := ens.Leader()
	if leader < 0 {
		t.Fatal("no leader")
	}
	before := rl.total()
	ens.Node(leader).Kill()
	killed := time.Now()
	next, err := ens.WaitQuorum(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if next == leader {
		t.Fatalf("node %d leads again after it was killed", next+1)
	}
	elected := time.Since(killed)
	steps := checkJobs(t, sub, subSt, ids, k, rl, 30*time.Second)
	extra, which := rl.extra()
	t.Logf("leader node %d killed after %d of %d actions; node %d elected in %v; all %d jobs done %v after the kill: %d steps, %d runs, %d extra %v; %d 'unreachable' log lines",
		leader+1, before, nJobs*k, next+1, elected.Round(time.Millisecond), nJobs, time.Since(killed).Round(time.Millisecond),
		steps, rl.total(), extra, which, logs.count("zookeeper unreachable"))
	for _, v := range rl.violations() {
		t.Log("overlap (a rerun after a lost session may overlap):", v)
	}
}

// TestServerDown30s: the standalone server is stopped for 30 s while
// three workers run 20 jobs, then restarted on the same port and data
// directory. The workers log the outage, keep retrying, and every job
// completes with each step applied once. It takes about 45 s.
func TestServerDown30s(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: this test stops ZooKeeper for 30 s (about 45 s in all)")
	}
	reconnects(t)
	srv := zktest.Start(t)
	root := freshRoot(srv.Root())
	const nJobs, k, outage = 20, 5, 30 * time.Second
	rl := newRunLog()
	var logs [3]*logBuf
	for w := range logs {
		logs[w] = &logBuf{}
		name := fmt.Sprintf("w%d", w)
		st := openOn(t, srv.Addrs(), root, zkrunner.Config{SessionTimeout: 4 * time.Second, Logger: logs[w].logger()})
		startRunner(t, zkrunner.Options{
			WorkerOptions: runner.WorkerOptions{Name: name, Workers: 8, Logger: logs[w].logger(), Registry: registry(t, map[string]runner.Handler{"step": stepHandler(rl, name, 300*time.Millisecond)})},
			Store:         st,
		})
	}
	subSt := openOn(t, srv.Addrs(), root, zkrunner.Config{})
	sub := submitter(t, subSt)
	dumpOnFailure(t, subSt, rl, logs[:]...)
	var ids []job.ID
	for i := range nJobs {
		id := job.ID(fmt.Sprintf("o%02d", i))
		if err := sub.Submit(context.Background(), id, seqJob(k)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	poll(t, 30*time.Second, "25 actions run before the outage", func() bool { return rl.total() >= 25 })
	before := rl.total()
	begin := time.Now()
	srv.Stop()
	time.Sleep(outage) // the outage itself
	srv.Restart()
	down := time.Since(begin)
	steps := checkJobs(t, sub, subSt, ids, k, rl, 45*time.Second)
	after := time.Since(begin) - down
	for w, l := range logs {
		if l.count("zookeeper unreachable") == 0 {
			t.Errorf("worker w%d did not log the outage (\"zookeeper unreachable\"); its log:\n%s", w, l.String())
		}
		if l.count("zookeeper reachable again") == 0 {
			t.Errorf("worker w%d did not log the end of the outage (\"zookeeper reachable again\")", w)
		}
	}
	var back, abandoned, expired int
	for _, l := range logs {
		for _, line := range l.lines("zookeeper reachable again") {
			back++
			t.Log(strings.TrimSpace(line[strings.Index(line, "msg="):]))
		}
		abandoned += l.count("result abandoned")
		expired += l.count("session expired")
	}
	extra, which := rl.extra()
	t.Logf("server down %v (%d of %d actions run before); all %d jobs done %v after the restart: %d steps, %d runs, %d extra %v; %d reconnections, %d 'session expired', %d results abandoned",
		down.Round(time.Millisecond), before, nJobs*k, nJobs, after.Round(time.Millisecond), steps, rl.total(), extra, which, back, expired, abandoned)
}
