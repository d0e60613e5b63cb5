package runnertest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// The scenarios of this file send signals and cancel nodes through a
// runner's own path (Runner.Signal, Runner.CancelNode): a runner carries
// them to the job as it carries its workers' results. What the reducer
// does with them is proved in package job; these check that a signal
// reaches its wait, is kept when it comes early, is applied once however
// often it is sent, and that what a runner cannot accept is refused to
// its sender with an error that says why.

// nodeNamed returns the node of j called name.
func nodeNamed(t *testing.T, j job.Job, name string) job.NodeInfo {
	t.Helper()
	var found *job.NodeInfo
	j.Walk(func(n job.NodeInfo) bool {
		if n.Name == name {
			found = &n
			return false
		}
		return true
	})
	if found == nil {
		t.Fatalf("job %s has no node called %q\n%s", j.ID(), name, job.Describe(j))
	}
	return *found
}

// waitNode waits until the node of job id called name has status want.
func waitNode(t *testing.T, ctx context.Context, st store.Store, id job.ID, name string, want job.Status) {
	t.Helper()
	var last job.Status
	eventually(t, scenarioTimeout, func() bool {
		j, err := st.Load(ctx, id)
		must(t, err)
		last = nodeNamed(t, j, name).Status
		return last == want
	}, "job "+string(id)+"'s node "+name+" is "+want.String()+" (last seen "+last.String()+")")
}

// waitKept waits until job id keeps n signals.
func waitKept(t *testing.T, ctx context.Context, st store.Store, id job.ID, n int) {
	t.Helper()
	eventually(t, scenarioTimeout, func() bool {
		j, err := st.Load(ctx, id)
		must(t, err)
		kept, _ := j.Signals()
		return len(kept) == n
	}, "job "+string(id)+" keeps "+strconv.Itoa(n)+" signals")
}

// signalWait: a signal sent to a running wait completes it with the
// signal's payload, and the job goes on.
func (s *suite) signalWait(t *testing.T) {
	rec := newRecorder(t)
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	ctx := ctxFor(t)
	must(t, r.Submit(ctx, "approve", ast.Seq(ast.Wait("approval").Named("answer"), ast.Act("log", "approved"))))
	waitNode(t, ctx, st, "approve", "answer", job.StatusRunning)
	must(t, r.Signal(ctx, "approve", "approval", "a1", []byte(`{"ok":true}`)))
	j := waitDone(t, ctx, r, st, "approve", "a wait released by a signal")
	wantStatus(t, j, job.StatusSucceeded)
	if out, _ := j.Output("answer"); string(out) != `{"ok":true}` {
		t.Errorf("the wait's output is %s, want the signal's payload", out)
	}
	wantLogged(t, rec, "approved")
	if _, taken := j.Signals(); len(taken) != 1 || taken[0].Name != "approval" || taken[0].ID != "a1" {
		t.Errorf("taken %+v, want approval/a1", taken)
	}
	checkHistory(t, ctx, st, j)
}

// signalEarly: a signal sent before its wait starts is kept, and the
// wait takes it the moment it starts.
func (s *suite) signalEarly(t *testing.T) {
	rec := newRecorder(t)
	g := newGate()
	must(t, rec.reg.Register("gate", g.handler))
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	ctx := ctxFor(t)
	must(t, r.Submit(ctx, "early", ast.Seq(ast.Act("gate", nil), ast.Wait("approval").Named("answer"))))
	waitFor(t, g.entered, "the gate's action to start")
	must(t, r.Signal(ctx, "early", "approval", "e1", []byte(`"yes"`)))
	waitKept(t, ctx, st, "early", 1)
	j, err := st.Load(ctx, "early")
	must(t, err)
	if kept, _ := j.Signals(); kept[0].Name != "approval" || kept[0].ID != "e1" || string(kept[0].Payload) != `"yes"` {
		t.Errorf("kept %+v, want approval/e1 with \"yes\"", kept[0])
	}
	close(g.release)
	j = waitDone(t, ctx, r, st, "early", "a wait that takes a kept signal")
	wantStatus(t, j, job.StatusSucceeded)
	if out, _ := j.Output("answer"); string(out) != `"yes"` {
		t.Errorf("the wait's output is %s, want the kept signal's payload", out)
	}
	if kept, taken := j.Signals(); len(kept) != 0 || len(taken) != 1 || taken[0].ID != "e1" {
		t.Errorf("kept %+v, taken %+v; want none kept and e1 taken", kept, taken)
	}
	checkHistory(t, ctx, st, j)
}

// signalDuplicate: a signal sent twice with one ID is applied once: two
// waits of its name, the second signal ID sent after the duplicate, and
// each wait takes a different signal, the first with the first payload.
func (s *suite) signalDuplicate(t *testing.T) {
	rec := newRecorder(t)
	g := newGate()
	must(t, rec.reg.Register("gate", g.handler))
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	ctx := ctxFor(t)
	root := ast.Seq(ast.Act("gate", nil), ast.Wait("go").Named("first"), ast.Wait("go").Named("second"))
	must(t, r.Submit(ctx, "dup", root))
	waitFor(t, g.entered, "the gate's action to start")
	must(t, r.Signal(ctx, "dup", "go", "s1", []byte(`1`)))
	waitKept(t, ctx, st, "dup", 1)
	if err := r.Signal(ctx, "dup", "go", "s1", []byte(`2`)); err != nil {
		t.Fatalf("a signal sent again: %v, want nil (it changes nothing)", err)
	}
	must(t, r.Signal(ctx, "dup", "go", "s2", []byte(`3`)))
	waitKept(t, ctx, st, "dup", 2)
	close(g.release)
	j := waitDone(t, ctx, r, st, "dup", "two waits, each taking a signal")
	wantStatus(t, j, job.StatusSucceeded)
	first, _ := j.Output("first")
	second, _ := j.Output("second")
	if string(first) != "1" || string(second) != "3" {
		t.Errorf("the waits took %s and %s, want 1 and 3 (the duplicate, 2, ignored)", first, second)
	}
	if kept, taken := j.Signals(); len(kept) != 0 || len(taken) != 2 {
		t.Errorf("kept %+v, taken %+v; want none kept, two taken", kept, taken)
	}
	if err := r.Signal(ctx, "dup", "go", "s3", []byte(`4`)); !errors.Is(err, runner.ErrFinished) {
		t.Errorf("a new signal to a finished job: err = %v, want runner.ErrFinished", err)
	}
	// The same signal again, the job finished: a retry whose first answer
	// was lost, answered as the first was; nothing changes.
	if err := r.Signal(ctx, "dup", "go", "s1", []byte(`5`)); err != nil {
		t.Errorf("a signal the finished job took, sent again: err = %v, want nil", err)
	}
	if again := waitDone(t, ctx, r, st, "dup", "the same job"); again.Version() != j.Version() {
		t.Errorf("the job moved from v%d to v%d on a signal sent again", j.Version(), again.Version())
	}
	checkHistory(t, ctx, st, j)
}

// signalRefused: what a runner cannot accept is refused to its sender,
// saying why: a job that has finished (runner.ErrFinished), one that
// does not exist (store.ErrNotFound), a payload over
// job.MaxSignalPayload (runner.ErrBadSignal, naming the limit), a name
// that is not a valid name, a payload that is not JSON, an empty ID, a
// name no wait of the job takes (kept, it would wait for ever: a misspelt
// name, say). None of them changes the job.
func (s *suite) signalRefused(t *testing.T) {
	rec := newRecorder(t)
	g := newGate()
	must(t, rec.reg.Register("gate", g.handler))
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	ctx := ctxFor(t)
	must(t, r.Submit(ctx, "done", ast.Act("log", "x")))
	waitDone(t, ctx, r, st, "done", "a one-action job")
	if err := r.Signal(ctx, "done", "approval", "late", nil); !errors.Is(err, runner.ErrFinished) || !strings.Contains(err.Error(), "done") {
		t.Errorf("a signal to a finished job: err = %v, want runner.ErrFinished naming the job", err)
	}
	if err := r.Signal(ctx, "nosuchjob", "approval", "x", nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a signal to a job that does not exist: err = %v, want store.ErrNotFound", err)
	}
	must(t, r.Submit(ctx, "open", ast.Seq(ast.Act("gate", nil), ast.Wait("approval"))))
	waitFor(t, g.entered, "the gate's action to start")
	before, err := st.Load(ctx, "open")
	must(t, err)
	big := []byte(`"` + strings.Repeat("x", job.MaxSignalPayload) + `"`)
	err = r.Signal(ctx, "open", "approval", "big", big)
	if !errors.Is(err, runner.ErrBadSignal) || !strings.Contains(err.Error(), strconv.Itoa(job.MaxSignalPayload)) {
		t.Errorf("a payload of %d bytes: err = %v, want runner.ErrBadSignal naming the limit %d", len(big), err, job.MaxSignalPayload)
	}
	for _, c := range []struct{ what, name, id, payload string }{
		{"a name that is not a valid name", "no good", "x", ""},
		{"an empty ID", "approval", "", ""},
		{"a payload that is not JSON", "approval", "x", "{nope"},
		{"a name no wait of the job takes (kept, it would wait for ever)", "aproval", "x", ""},
	} {
		err := r.Signal(ctx, "open", c.name, c.id, []byte(c.payload))
		if !errors.Is(err, runner.ErrBadSignal) || !strings.Contains(err.Error(), "open") {
			t.Errorf("%s: err = %v, want runner.ErrBadSignal naming the job", c.what, err)
		}
	}
	if err := r.Signal(ctx, "open", "aproval", "x", nil); err == nil || !strings.Contains(err.Error(), "its waits take approval") {
		t.Errorf("a name no wait takes: err = %v, want one naming the waits' signal, approval", err)
	}
	after, err := st.Load(ctx, "open")
	must(t, err)
	if after.Version() != before.Version() {
		t.Errorf("refused signals moved the job from v%d to v%d", before.Version(), after.Version())
	}
	close(g.release)
}

// cancelNode: a running node cancelled by name stops its actions (their
// contexts cancelled, cause runner.ErrStopped) and fails with kind
// cancelled, which the try around it rescues; the job goes on. A node
// that is not running is left as it is; a finished job is refused.
func (s *suite) cancelNode(t *testing.T) {
	rec := newRecorder(t)
	w := newWatcher()
	must(t, rec.reg.Register("watch", w.handler))
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	ctx := ctxFor(t)
	root := ast.Seq(
		ast.Try(ast.Act("watch", "a").Named("slow"), ast.Rescue(ast.Act("log", "rescued"))),
		ast.Act("log", "after").Named("after"),
	)
	must(t, r.Submit(ctx, "cn", root))
	a := waitFor(t, w.entered, "the slow action to start")
	if err := r.CancelNode(ctx, "cn", "after", "not running yet"); err != nil {
		t.Errorf("cancelling a node that is not running: %v, want nil (it changes nothing)", err)
	}
	must(t, r.CancelNode(ctx, "cn", "slow", "taking too long"))
	j := waitDone(t, ctx, r, st, "cn", "the cancelled node is rescued and the job goes on")
	wantStatus(t, j, job.StatusSucceeded)
	slow := nodeNamed(t, j, "slow")
	if slow.Status != job.StatusFailed || slow.Failure == nil || slow.Failure.Kind != job.KindCancelled || !strings.Contains(slow.Failure.Message, "taking too long") {
		t.Errorf("node slow: %s %+v, want failed, kind %s, with the reason", slow.Status, slow.Failure, job.KindCancelled)
	}
	wantLogged(t, rec, "rescued", "after")
	w.wantStopped(t, a.ID)
	checkHistory(t, ctx, st, j)
	if err := r.CancelNode(ctx, "cn", "slow", "again"); !errors.Is(err, runner.ErrFinished) {
		t.Errorf("cancelling a node of a finished job: err = %v, want runner.ErrFinished", err)
	}
	if err := r.CancelNode(ctx, "nosuchjob", "slow", "why"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cancelling a node of a job that does not exist: err = %v, want store.ErrNotFound", err)
	}
}

// signalAcrossRestart: a signal kept while its runner is stopped stays
// with the job, and the wait that a second runner on the store starts
// takes it; a signal sent again to the second runner changes nothing.
func (s *suite) signalAcrossRestart(t *testing.T) {
	rec := newRecorder(t)
	g := newGate()
	must(t, rec.reg.Register("gate", g.handler))
	st := s.newStore(t)
	ctx := ctxFor(t)
	r1 := s.launch(t, Config{Store: st, Registry: rec.reg, DrainTimeout: 50 * time.Millisecond})
	must(t, r1.Submit(ctx, "restart", ast.Seq(ast.Act("gate", nil), ast.Wait("approval").Named("answer"), ast.Act("log", "after"))))
	waitFor(t, g.entered, "the gate action to start")
	must(t, r1.Signal(ctx, "restart", "approval", "r1", []byte(`"kept"`)))
	waitKept(t, ctx, st, "restart", 1)
	if err := r1.stop(t); err != nil {
		t.Fatalf("first runner's Run: %v", err)
	}
	r2 := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	// The gate stays shut until the signal was sent again, so the job
	// is still running then (a finished job's signal is ErrFinished).
	if err := r2.Signal(ctx, "restart", "approval", "r1", []byte(`"again"`)); err != nil {
		t.Errorf("the same signal sent to the second runner: %v, want nil (it changes nothing)", err)
	}
	close(g.release)
	j := waitDone(t, ctx, r2, st, "restart", "the second runner's wait takes the kept signal")
	wantStatus(t, j, job.StatusSucceeded)
	if out, _ := j.Output("answer"); string(out) != `"kept"` {
		t.Errorf("the wait's output is %s, want the kept signal's payload", out)
	}
	wantLogged(t, rec, "after")
	checkHistory(t, ctx, st, j)
}
