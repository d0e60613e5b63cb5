package runnertest

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// The scenarios of this file run maps and loops, trees that grow as they
// run: a map's copies and a loop's iterations are actions like any other
// to a runner, which moves them and their results without knowing where
// they came from. What the reducer decides is proved in package job;
// these check that every copy reaches a handler once with its element and
// index, that a map's limit holds however many workers a runner has, that
// a map with need stops the copies it no longer needs (their late results
// ignored), that a loop runs until its leaf says so, and that both carry
// on across a runner's restart and stop when their node is cancelled.

// echo is the handler of the leaves whose output a map maps: it returns
// its payload.
func echo(_ context.Context, a job.Action) ([]byte, error) { return a.Payload, nil }

// elements returns a JSON array of n strings, "e0" to "e<n-1>".
func elements(n int) json.RawMessage {
	b := []byte{'['}
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, "e"+strconv.Itoa(i))
	}
	return append(b, ']')
}

// copyLeaf is a map's template: a leaf of action that lists the inputs
// item and index.
func copyLeaf(action string) ast.Node {
	return ast.Act(action, nil).WithInputs(ast.InputItem, ast.InputIndex)
}

// itemIndex reads the inputs item (a string) and index of the copy that
// the handler called with ctx runs.
func itemIndex(ctx context.Context) (string, int, error) {
	item, err := runner.InputAs[string](ctx, ast.InputItem)
	if err != nil {
		return "", 0, err
	}
	index, err := runner.InputAs[int](ctx, ast.InputIndex)
	return item, index, err
}

// copies is the handler of a map's template leaf (copyLeaf): it records
// the element each index came with and how many of its calls run at
// once, and returns "done <item>". Each call stays running for hold (or
// until its context ends), so that the calls a runner lets run at once
// overlap.
type copies struct {
	hold    time.Duration
	mu      sync.Mutex
	items   map[int][]string // the elements each index came with, a call each
	running int
	most    int // the most calls running at once
}

func newCopies(hold time.Duration) *copies {
	return &copies{hold: hold, items: map[int][]string{}}
}

func (c *copies) handler(ctx context.Context, a job.Action) ([]byte, error) {
	item, index, err := itemIndex(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.running++
	c.most = max(c.most, c.running)
	c.items[index] = append(c.items[index], item)
	c.mu.Unlock()
	select {
	case <-time.After(c.hold):
	case <-ctx.Done():
	}
	c.mu.Lock()
	c.running--
	c.mu.Unlock()
	return json.Marshal("done " + item)
}

// wantOnceEach checks that the copies of a map over elements(n) ran once
// each, with their own element.
func (c *copies) wantOnceEach(t *testing.T, n int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range n {
		if got := c.items[i]; len(got) != 1 || got[0] != "e"+strconv.Itoa(i) {
			t.Errorf("copy %d ran with elements %q, want once with e%d", i, got, i)
		}
	}
	if len(c.items) != n {
		t.Errorf("copies ran for %d indexes, want %d", len(c.items), n)
	}
}

// doneList is the output of a map of copies over elements(n).
func doneList(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "done e" + strconv.Itoa(i)
	}
	return out
}

// wantJSON checks that out is the JSON of want (as JSON: spacing and
// key order aside).
func wantJSON(t *testing.T, what string, out []byte, want any) {
	t.Helper()
	w, err := json.Marshal(want)
	must(t, err)
	var x, y any
	if json.Unmarshal(out, &x) == nil && json.Unmarshal(w, &y) == nil {
		xs, _ := json.Marshal(x)
		ys, _ := json.Marshal(y)
		if string(xs) == string(ys) {
			return
		}
	}
	t.Errorf("%s is %s, want %s", what, clip(string(out)), clip(string(w)))
}

// clip shortens s for a message.
func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// runMapJob runs root as job id on a runner of its own and returns the
// finished job and its store.
func (s *suite) runMapJob(t *testing.T, rec *recorder, id job.ID, root ast.Node, hooks *runner.Hooks) (context.Context, Runner, store.Store, job.Job) {
	t.Helper()
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second, Hooks: hooks})
	ctx := ctxFor(t)
	must(t, r.Submit(ctx, id, root))
	j := waitDone(t, ctx, r, st, id, "the map or loop settles")
	return ctx, r, st, j
}

// mapLimit: a map of 1,000 copies with limit 10 runs every copy once,
// with its own element and index, never more than 10 at once, and its
// output is the array of the copies' outputs in index order.
func (s *suite) mapLimit(t *testing.T) {
	const n, limit = 1000, 10
	rec := newRecorder(t)
	must(t, rec.reg.Register("echo", echo))
	c := newCopies(200 * time.Microsecond)
	must(t, rec.reg.Register("copy", c.handler))
	root := ast.Seq(
		ast.Act("echo", elements(n)).Named("list"),
		ast.Map("list", copyLeaf("copy")).WithLimit(limit).Named("each"),
	)
	ctx, _, st, j := s.runMapJob(t, rec, "maplimit", root, nil)
	wantStatus(t, j, job.StatusSucceeded)
	c.wantOnceEach(t, n)
	c.mu.Lock()
	most := c.most
	c.mu.Unlock()
	if most > limit {
		t.Errorf("%d of the map's copies ran at once, want at most its limit %d", most, limit)
	}
	t.Logf("at most %d of the map's copies ran at once (limit %d)", most, limit)
	each := nodeNamed(t, j, "each")
	if each.Copies != n {
		t.Errorf("the map has %d copies, want %d", each.Copies, n)
	}
	wantJSON(t, "the map's output", each.Output, doneList(n))
	if settled, total := j.Progress(); settled != total {
		t.Errorf("progress %d/%d of a finished job", settled, total)
	}
	checkHistory(t, ctx, st, j)
}

// mapNeed: a map of 10 copies that needs 3 succeeds once 3 have; the
// copies still running are stopped (their handlers' contexts end with
// runner.ErrStopped, or they never start), their late results are
// ignored, and the map's output has the 3 outputs.
func (s *suite) mapNeed(t *testing.T) {
	const n, need = 10, 3
	rec := newRecorder(t)
	must(t, rec.reg.Register("echo", echo))
	w := newWatcher()
	c := newCopies(0)
	// The first need copies return at once, the others run until they
	// are stopped.
	must(t, rec.reg.Register("copy", func(ctx context.Context, a job.Action) ([]byte, error) {
		_, index, err := itemIndex(ctx)
		if err != nil {
			return nil, err
		}
		if index >= need {
			return w.handler(ctx, a)
		}
		return c.handler(ctx, a)
	}))
	obs := newObserver()
	root := ast.Seq(
		ast.Act("echo", elements(n)).Named("list"),
		ast.Map("list", copyLeaf("copy")).WithNeed(need).Named("each"),
		ast.Act("log", "after"),
	)
	ctx, r, st, j := s.runMapJob(t, rec, "mapneed", root, obs.hooks())
	wantStatus(t, j, job.StatusSucceeded)
	c.wantOnceEach(t, need)
	wantLogged(t, rec, "after")
	each := nodeNamed(t, j, "each")
	var stopped []string
	succeeded := 0
	j.Walk(func(nd job.NodeInfo) bool {
		if nd.Kind == ast.KindAct && nd.Action == "copy" {
			if nd.Status == job.StatusSucceeded {
				succeeded++
			} else if nd.Attempt > 0 {
				stopped = append(stopped, job.ActionID(nd.Path, nd.Attempt))
			}
		}
		return true
	})
	if succeeded != need {
		t.Errorf("%d copies succeeded, want %d\n%s", succeeded, need, job.Describe(j))
	}
	w.wantStoppedIfStarted(t, false, stopped...)
	var outs []string
	if err := json.Unmarshal(each.Output, &outs); err != nil {
		t.Errorf("the map's output %s: %v", clip(string(each.Output)), err)
	}
	done := 0
	for _, o := range outs {
		if strings.HasPrefix(o, "done e") {
			done++
		}
	}
	if done != need {
		t.Errorf("the map's output %s holds %d copies' outputs, want the %d that succeeded", clip(string(each.Output)), done, need)
	}
	if len(stopped) > 0 {
		late := job.Result{JobID: "mapneed", ActionID: stopped[0], Output: []byte(`"late"`)}
		must(t, r.Deliver(ctx, late))
		eventually(t, 10*time.Second, func() bool {
			return obs.ignored("mapneed", late.ActionID, job.IgnoredStopped, job.IgnoredJobDone) >= 1
		}, "the late result of a stopped copy is ignored")
		after, err := st.Load(ctx, "mapneed")
		must(t, err)
		if after.Version() != j.Version() {
			t.Errorf("a late result of a stopped copy changed the job: v%d, then v%d", j.Version(), after.Version())
		}
	} else {
		t.Logf("no copy past the %d needed was dispatched before the map succeeded", need)
	}
	checkHistory(t, ctx, st, j)
}

// mapEmpty: a map over an empty array succeeds as it starts, with an
// empty array as its output, and the job goes on.
func (s *suite) mapEmpty(t *testing.T) {
	rec := newRecorder(t)
	must(t, rec.reg.Register("echo", echo))
	c := newCopies(0)
	must(t, rec.reg.Register("copy", c.handler))
	root := ast.Seq(
		ast.Act("echo", json.RawMessage(`[]`)).Named("list"),
		ast.Map("list", copyLeaf("copy")).Named("each"),
		ast.Act("log", "after"),
	)
	ctx, _, st, j := s.runMapJob(t, rec, "mapempty", root, nil)
	wantStatus(t, j, job.StatusSucceeded)
	c.wantOnceEach(t, 0)
	wantLogged(t, rec, "after")
	wantJSON(t, "the output of a map over nothing", nodeNamed(t, j, "each").Output, []string{})
	checkHistory(t, ctx, st, j)
}

// mapNotArray: a map over an output that is not an array fails as it
// starts, kind not_an_array, and runs no copy.
func (s *suite) mapNotArray(t *testing.T) {
	rec := newRecorder(t)
	must(t, rec.reg.Register("echo", echo))
	c := newCopies(0)
	must(t, rec.reg.Register("copy", c.handler))
	root := ast.Seq(
		ast.Act("echo", json.RawMessage(`{"not":"a list"}`)).Named("list"),
		ast.Map("list", copyLeaf("copy")).Named("each"),
		ast.Act("log", "never"),
	)
	ctx, _, st, j := s.runMapJob(t, rec, "mapnotarray", root, nil)
	wantStatus(t, j, job.StatusFailed)
	if f, ok := j.Failure(); !ok || f.Kind != job.KindNotAnArray {
		t.Errorf("job failure %+v (ok %v), want kind %s\n%s", f, ok, job.KindNotAnArray, job.Describe(j))
	}
	if each := nodeNamed(t, j, "each"); each.Status != job.StatusFailed || each.Failure == nil || each.Failure.Kind != job.KindNotAnArray {
		t.Errorf("the map: %s %+v, want failed, kind %s", each.Status, each.Failure, job.KindNotAnArray)
	}
	c.wantOnceEach(t, 0)
	wantLogged(t, rec)
	checkHistory(t, ctx, st, j)
}

// poller is the handler of a loop's body leaf: it counts its calls per
// job and returns "done" on the call its payload numbers (a number),
// "more" before. With block set, its call number block waits until its
// context ends, unless open is set.
type poller struct {
	mu      sync.Mutex
	calls   map[job.ID]int
	block   int
	open    bool
	blocked chan job.Action
}

func newPoller(block int) *poller {
	return &poller{calls: map[job.ID]int{}, block: block, blocked: make(chan job.Action, 1)}
}

func (p *poller) handler(ctx context.Context, a job.Action) ([]byte, error) {
	var at int
	if err := json.Unmarshal(a.Payload, &at); err != nil {
		return nil, runner.Final(err)
	}
	p.mu.Lock()
	p.calls[a.JobID]++
	k, wait := p.calls[a.JobID], p.calls[a.JobID] == p.block && !p.open
	p.mu.Unlock()
	if wait {
		p.blocked <- a
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if k == at {
		return []byte(`"done"`), nil
	}
	return []byte(`"more"`), nil
}

func (p *poller) count(id job.ID) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[id]
}

// iterations returns how many iterations the loop of j called name ran
// (job.NodeInfo.Iteration is the last one's, from 0).
func iterations(t *testing.T, j job.Job, name string) int {
	t.Helper()
	return nodeNamed(t, j, name).Iteration + 1
}

// loop: a loop whose body leaf says "done" on its 5th call runs 5
// iterations, and its output is the last one's.
func (s *suite) loop(t *testing.T) {
	rec := newRecorder(t)
	p := newPoller(0)
	must(t, rec.reg.Register("poll", p.handler))
	root := ast.Seq(
		ast.Loop(ast.Act("poll", 5).Named("poll"), "poll", "done", 10).Named("again"),
		ast.Act("log", "after"),
	)
	ctx, _, st, j := s.runMapJob(t, rec, "loop", root, nil)
	wantStatus(t, j, job.StatusSucceeded)
	if n := p.count("loop"); n != 5 {
		t.Errorf("the body ran %d times, want 5", n)
	}
	if n := iterations(t, j, "again"); n != 5 {
		t.Errorf("%d iterations ran, want 5\n%s", n, job.Describe(j))
	}
	wantJSON(t, "the loop's output", nodeNamed(t, j, "again").Output, "done")
	wantLogged(t, rec, "after")
	if ids := resultIDs(t, ctx, st, "loop"); ids != nil {
		want := []string{"seq[0].loop[0]#1", "seq[0].loop[1]#1", "seq[0].loop[2]#1", "seq[0].loop[3]#1", "seq[0].loop[4]#1", "seq[1]#1"}
		if strings.Join(ids, " ") != strings.Join(want, " ") {
			t.Errorf("history %v, want %v", ids, want)
		}
	}
	checkHistory(t, ctx, st, j)
}

// loopLimit: a loop of at most 3 iterations whose leaf never says "done"
// fails, kind loop_limit, after 3.
func (s *suite) loopLimit(t *testing.T) {
	rec := newRecorder(t)
	p := newPoller(0)
	must(t, rec.reg.Register("poll", p.handler))
	root := ast.Seq(
		ast.Loop(ast.Act("poll", 0).Named("poll"), "poll", "done", 3).Named("again"),
		ast.Act("log", "never"),
	)
	ctx, _, st, j := s.runMapJob(t, rec, "looplimit", root, nil)
	wantStatus(t, j, job.StatusFailed)
	if f, ok := j.Failure(); !ok || f.Kind != job.KindLoopLimit {
		t.Errorf("job failure %+v (ok %v), want kind %s\n%s", f, ok, job.KindLoopLimit, job.Describe(j))
	}
	if n := p.count("looplimit"); n != 3 {
		t.Errorf("the body ran %d times, want 3", n)
	}
	wantLogged(t, rec)
	checkHistory(t, ctx, st, j)
}

// mapLoopAcrossRestart: a runner stopped while a map's copies (limit 2)
// and a loop's third iteration run hands them back; a second runner on
// the store runs every copy to its end and the loop on to its "done",
// and the outputs are whole: each element's copy ran, at most twice
// for the two interrupted, and the loop ended on the body's call that
// said so.
func (s *suite) mapLoopAcrossRestart(t *testing.T) {
	const n = 4
	rec := newRecorder(t)
	must(t, rec.reg.Register("echo", echo))
	g := newGate()
	must(t, rec.reg.Register("gate", func(ctx context.Context, a job.Action) ([]byte, error) {
		item, _, err := itemIndex(ctx)
		if err != nil {
			return nil, err
		}
		if _, err := g.handler(ctx, a); err != nil {
			return nil, err
		}
		return json.Marshal("done " + item)
	}))
	p := newPoller(3)
	must(t, rec.reg.Register("poll", p.handler))
	st := s.newStore(t)
	ctx := ctxFor(t)
	root := ast.Seq(
		ast.Act("echo", elements(n)).Named("list"),
		ast.Par(
			ast.Map("list", copyLeaf("gate")).WithLimit(2).Named("each"),
			ast.Loop(ast.Act("poll", 5).Named("poll"), "poll", "done", 10).Named("again"),
		),
	)
	r1 := s.launch(t, Config{Store: st, Registry: rec.reg, DrainTimeout: 50 * time.Millisecond})
	must(t, r1.Submit(ctx, "restart", root))
	waitFor(t, g.entered, "a copy of the map to start")
	waitFor(t, g.entered, "a second copy of the map to start")
	waitFor(t, p.blocked, "the loop's third iteration to start")
	if err := r1.stop(t); err != nil {
		t.Fatalf("first runner's Run: %v", err)
	}
	j, err := st.Load(ctx, "restart")
	must(t, err)
	if j.Done() {
		t.Fatalf("the job finished with its first runner stopped mid-map:\n%s", job.Describe(j))
	}
	if g.count() != 2 {
		t.Errorf("%d copies started under limit 2 before the stop, want 2", g.count())
	}
	g.mu.Lock()
	g.open = true
	g.mu.Unlock()
	p.mu.Lock()
	p.open = true
	p.mu.Unlock()
	r2 := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	j = waitDone(t, ctx, r2, st, "restart", "the second runner finishes the map and the loop")
	wantStatus(t, j, job.StatusSucceeded)
	wantJSON(t, "the map's output", nodeNamed(t, j, "each").Output, doneList(n))
	wantJSON(t, "the loop's output", nodeNamed(t, j, "again").Output, "done")
	// Two copies interrupted and run again, two run once.
	if calls := g.count(); calls != n+2 {
		t.Errorf("the map's handler ran %d times, want %d (%d copies, 2 of them run again after the stop)", calls, n+2, n)
	}
	// Calls 1 and 2 said "more", call 3 was interrupted and ran again as
	// call 4 ("more"), call 5 said "done": 4 iterations.
	if calls := p.count("restart"); calls != 5 {
		t.Errorf("the loop's body ran %d times, want 5", calls)
	}
	if it := iterations(t, j, "again"); it != 4 {
		t.Errorf("%d iterations ran, want 4 (the third run twice)\n%s", it, job.Describe(j))
	}
	checkHistory(t, ctx, st, j)
}

// cancelMapNode: a running map cancelled by name stops its copies (their
// contexts end with runner.ErrStopped), starts no more of them, and fails
// with kind cancelled, which the try around it rescues.
func (s *suite) cancelMapNode(t *testing.T) {
	rec := newRecorder(t)
	must(t, rec.reg.Register("echo", echo))
	w := newWatcher()
	must(t, rec.reg.Register("watch", w.handler))
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	ctx := ctxFor(t)
	root := ast.Seq(
		ast.Act("echo", elements(5)).Named("list"),
		ast.Try(ast.Map("list", copyLeaf("watch")).WithLimit(2).Named("each"), ast.Rescue(ast.Act("log", "rescued"))),
		ast.Act("log", "after"),
	)
	must(t, r.Submit(ctx, "cmap", root))
	a := waitFor(t, w.entered, "a copy of the map to start")
	b := waitFor(t, w.entered, "a second copy of the map to start")
	must(t, r.CancelNode(ctx, "cmap", "each", "enough"))
	j := waitDone(t, ctx, r, st, "cmap", "the cancelled map is rescued and the job goes on")
	wantStatus(t, j, job.StatusSucceeded)
	each := nodeNamed(t, j, "each")
	if each.Status != job.StatusFailed || each.Failure == nil || each.Failure.Kind != job.KindCancelled || !strings.Contains(each.Failure.Message, "enough") {
		t.Errorf("the map: %s %+v, want failed, kind %s, with the reason", each.Status, each.Failure, job.KindCancelled)
	}
	wantLogged(t, rec, "rescued", "after")
	w.wantStopped(t, a.ID, b.ID)
	w.mu.Lock()
	started := len(w.started)
	w.mu.Unlock()
	if started != 2 {
		t.Errorf("%d copies started, want the 2 running when the map was cancelled", started)
	}
	checkHistory(t, ctx, st, j)
	if err := r.CancelNode(ctx, "cmap", "each", "again"); !errors.Is(err, runner.ErrFinished) {
		t.Errorf("cancelling a map of a finished job: err = %v, want runner.ErrFinished", err)
	}
}
