package metrics

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestDispatchTimes: a dispatch and a start pair in either order; a
// finished job's halves go; halves older than an hour go at the next
// purge; past maxTracked nothing new is tracked.
func TestDispatchTimes(t *testing.T) {
	var d dispatchTimes
	t0 := time.Unix(1000, 0)
	k := func(j, a string) actionKey { return actionKey{job: job.ID(j), id: a} }

	if _, ok := d.dispatched(k("j", "a#1"), t0); ok {
		t.Fatal("a dispatch alone paired")
	}
	if w, ok := d.started(k("j", "a#1"), t0.Add(3*time.Second)); !ok || w != 3*time.Second {
		t.Fatalf("dispatch then start: %v, %v; want 3s", w, ok)
	}
	if _, ok := d.started(k("j", "a#1"), t0.Add(4*time.Second)); ok {
		t.Fatal("a second start paired with a dispatch already paired")
	}
	// The start first: the engine told of the dispatch late.
	if w, ok := d.dispatched(k("j", "a#1"), t0.Add(5*time.Second)); !ok || w != 0 {
		t.Fatalf("start then dispatch: %v, %v; want 0", w, ok)
	}

	d.dispatched(k("j", "b#1"), t0)
	d.forget("j")
	if _, ok := d.started(k("j", "b#1"), t0.Add(time.Second)); ok {
		t.Fatal("a finished job's dispatch paired")
	}
	d.forget("j")

	d.dispatched(k("old", "a#1"), t0)
	later := t0.Add(maxHalfAge + 2*purgeEvery)
	d.dispatched(k("new", "a#1"), later) // purges
	if _, ok := d.halves[k("old", "a#1")]; ok || len(d.byJob["old"]) > 0 {
		t.Fatal("an hour-old dispatch was not purged")
	}

	var full dispatchTimes
	for i := range maxTracked {
		full.dispatched(k("big", fmt.Sprint(i)), t0)
	}
	full.dispatched(k("big", "one more"), t0)
	if _, ok := full.started(k("big", "one more"), t0); ok {
		t.Fatal("tracked past maxTracked")
	}
	if len(full.halves) > maxTracked || full.keys > 2*maxTracked {
		t.Fatalf("%d halves, %d keys", len(full.halves), full.keys)
	}
}

// TestLateNewsOfAFinishedJob: the engine tells of a job's creation (its
// commit and its dispatch) once the commit returns, by when a quick job
// may have run and finished (CI found it: the job counted running forever
// after, and its action's wait never timed). The late news must neither
// count the job running again nor lose the start its dispatch meets.
func TestLateNewsOfAFinishedJob(t *testing.T) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"})
	var r runningJobs
	tr, err := job.New("quick", ast.Act("a", nil), job.WithIncarnation(7))
	if err != nil {
		t.Fatal(err)
	}
	done, err := job.Restart(tr.Job, []job.Result{{JobID: "quick", ActionID: tr.Actions[0].ID}})
	if err != nil || !done.Job.Done() {
		t.Fatalf("restart: %v %v", done.Job, err)
	}
	r.set(done.Job, false, g) // JobDone
	r.set(tr.Job, true, g)    // the creation's Committed, late
	if got := testutil.ToFloat64(g); got != 0 {
		t.Errorf("running after the late creation: %v, want 0", got)
	}
	// The same ID made again is another job: it runs.
	again, err := job.New("quick", ast.Act("a", nil), job.WithIncarnation(8))
	if err != nil {
		t.Fatal(err)
	}
	r.set(again.Job, true, g)
	if got := testutil.ToFloat64(g); got != 1 {
		t.Errorf("running with the job made again: %v, want 1", got)
	}

	var d dispatchTimes
	t0 := time.Unix(1000, 0)
	k := actionKey{job: "quick", inc: 7, id: tr.Actions[0].ID}
	d.started(k, t0)
	d.forget("quick") // JobDone
	if w, ok := d.dispatched(k, t0.Add(time.Millisecond)); !ok || w != 0 {
		t.Errorf("the late dispatch did not meet its start: %v, %v", w, ok)
	}
}
