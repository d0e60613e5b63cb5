package runnertest

import (
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// race: a race of an action that runs until it is stopped and one that
// returns at once is won by the quick one; the runner stops the loser's
// handler (its context ends with runner.ErrStopped, or it never starts),
// the loser's late result is ignored, and the leaf after the race takes
// the winner's output. Replicas of an action run as a race of copies,
// each copy's action saying which copy it is, and the job succeeds.
func (s *suite) race(t *testing.T) {
	rec := newRecorder(t)
	w := newWatcher()
	must(t, rec.reg.Register("watch", w.handler))
	obs := newObserver()
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second, Hooks: obs.hooks()})
	ctx := ctxFor(t)
	root := ast.Seq(
		ast.Race(ast.Act("watch", "slow"), ast.Act("log", "fast")).Named("quick"),
		ast.Act("log", "after").WithInputs("quick"),
	)
	must(t, r.Submit(ctx, "race", root))
	j := waitDone(t, ctx, r, st, "race", "the quick child wins the race")
	wantStatus(t, j, job.StatusSucceeded)
	if n := nodeAt(t, j, "seq[0]"); n.Winner != "seq[0].race[1]" {
		t.Errorf("race won by %q, want seq[0].race[1]\n%s", n.Winner, job.Describe(j))
	}
	wantLogged(t, rec, "fast", "after")
	w.wantStoppedIfStarted(t, false, "seq[0].race[0]#1")

	late := job.Result{JobID: "race", ActionID: "seq[0].race[0]#1", Output: []byte(`"late"`)}
	must(t, r.Deliver(ctx, late))
	eventually(t, 10*time.Second, func() bool {
		return obs.ignored("race", late.ActionID, job.IgnoredStopped, job.IgnoredJobDone) == 1
	}, "the late result of the race's loser is ignored")
	checkHistory(t, ctx, st, j)

	// Replicas: three copies of a quick action; one of them wins.
	must(t, r.Submit(ctx, "replicas", ast.Seq(ast.Act("log", "copy").WithReplicas(3), ast.Act("log", "done"))))
	j = waitDone(t, ctx, r, st, "replicas", "one of the copies wins")
	wantStatus(t, j, job.StatusSucceeded)
	if n := nodeAt(t, j, "seq[0]"); n.Kind != ast.KindRace || n.Winner == "" {
		t.Errorf("replicas ran as %s won by %q, want a race won by a copy\n%s", n.Kind, n.Winner, job.Describe(j))
	}
	checkHistory(t, ctx, st, j)
}
