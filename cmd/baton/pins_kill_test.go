package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// workerSession is the ZooKeeper session timeout of 'baton worker'
// (runner/zk's default; the tests' servers allow up to 10 s).
const workerSession = 10 * time.Second

// TestZKPinsWorkerKilled: pins with worker processes (issue 18, Pins).
// Worker p1 alone pins 3 jobs (each a seq of 6 steps under
// {"scope": "job"}); then p2 and p3 start, and p1 is SIGKILLed while it
// runs them. MovesAfterGrace: once p1's session has expired and its grace
// (2 s) has passed, and not before, each job's remaining actions run on
// one other worker, and every job succeeds with every step once.
// RestartWithinGrace: p1 comes back under its name as soon as its old
// session is gone, within its grace (1 min): nothing moves, every step of
// every job runs on p1.
func TestZKPinsWorkerKilled(t *testing.T) {
	srv := zktest.Start(t)
	pinned := `{"version":2,"root":{"seq":[` + strings.Repeat(`{"act":"sleep","payload":"1s"},`, 5) +
		`{"act":"sleep","payload":"1s"}],"affinity":{"scope":"job"}}}`
	ids := []job.ID{"pin0", "pin1", "pin2"}

	// setup starts p1, has it pin the three jobs, starts p2 and p3, and
	// kills p1 once each job has run 2 steps on it. It returns the store,
	// the workers and when p1 was seen gone.
	setup := func(t *testing.T, root, grace string) (*zkrunner.Store, map[string]*proc, time.Time) {
		zkArgs := func(a ...string) []string { return append(a, "--zk", srv.ConnString(), "--root", root) }
		ws := map[string]*proc{}
		ws["p1"] = startWorkerProc(t, "p1", zkArgs("worker", "--name", "p1", "--capacity", "3", "--grace", grace, "--verbose"))
		wf := writeWorkflow(t, "pinned.json", pinned)
		for _, id := range ids {
			baton(t, zkArgs("submit", wf, "--id", string(id))...).want(t, exitOK)
		}
		eventually(t, zktest.Patience(t), "p1 running the first step of each job", func() (bool, string) {
			out := ws["p1"].stderr.String()
			for _, id := range ids {
				if startedOf(out, id) < 1 {
					return false, out
				}
			}
			return true, out
		})
		for _, name := range []string{"p2", "p3"} {
			ws[name] = startWorkerProc(t, name, zkArgs("worker", "--name", name, "--capacity", "3", "--grace", grace, "--verbose"))
		}
		st := openStore(t, srv.Addrs(), root)
		pins, err := st.Pins(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(pins) != len(ids) || slices.ContainsFunc(pins, func(p zkrunner.Pin) bool { return p.Worker != "p1" }) {
			t.Fatalf("pins %+v: want p1 holding one for each of %v", pins, ids)
		}
		eventually(t, zktest.Patience(t), "each job's second step running on p1", func() (bool, string) {
			out := ws["p1"].stderr.String()
			for _, id := range ids {
				if startedOf(out, id) < 2 {
					return false, out
				}
			}
			return true, out
		})
		return st, ws, ws["p1"].kill(t)
	}
	// startedElsewhere returns, per job, the runs of p2 and p3.
	startedElsewhere := func(t *testing.T, ws map[string]*proc) map[string][]handlerRun {
		out := map[string][]handlerRun{}
		for _, name := range []string{"p2", "p3"} {
			for _, r := range runsOf(t, name, ws[name], time.Time{}) {
				out[r.job] = append(out[r.job], r)
			}
		}
		return out
	}

	t.Run("MovesAfterGrace", func(t *testing.T) {
		const grace = 2 * time.Second
		st, ws, killed := setup(t, srv.Path("moves"), grace.String())
		finals := waitSettled(t, st, ids)
		elsewhere := startedElsewhere(t, ws)
		for _, id := range ids {
			j := finals[id]
			if j.Status() != job.StatusSucceeded {
				t.Errorf("job %s ended %s:\n%s", id, j.Status(), job.Describe(j))
				continue
			}
			var order []string
			for _, r := range stepsOnce(t, st, j) {
				order = append(order, r.Worker)
			}
			i := slices.IndexFunc(order, func(w string) bool { return w != "p1" })
			if i < 1 {
				t.Errorf("job %s ran on %v: want its first step at least on p1, then the rest elsewhere", id, order)
				continue
			}
			for _, w := range order[i:] {
				if w != order[i] || w == "p1" {
					t.Errorf("job %s ran on %v: after its pin moved, not on one other worker", id, order)
					break
				}
			}
			// Not before the session (at least two thirds of it: the
			// client pings every third) and the grace.
			first := time.Time{}
			for _, r := range elsewhere[string(id)] {
				if first.IsZero() || r.start.Before(first) {
					first = r.start
				}
				if r.worker != order[i] {
					t.Errorf("job %s: %s ran %s on %s, its pin being %s's", id, r.worker, r.action, order[i], order[i])
				}
			}
			if bound := killed.Add(grace + 2*workerSession/3); first.Before(bound) {
				t.Errorf("job %s moved to %s %v after p1 was killed, before two thirds of its session (%v) plus its grace (%v)",
					id, order[i], first.Sub(killed), workerSession, grace)
			}
			t.Logf("job %s: %d steps on p1, then %d on %s from %v after the kill (session %v + grace %v)",
				id, i, len(order)-i, order[i], first.Sub(killed).Round(time.Millisecond), workerSession, grace)
		}
		if pins, err := st.Pins(context.Background()); err != nil || len(pins) != 0 {
			t.Errorf("pins left after every pinned job ended: %+v, %v", pins, err)
		}
	})

	t.Run("RestartWithinGrace", func(t *testing.T) {
		root := srv.Path("stays")
		st, ws, killed := setup(t, root, "1m")
		// Its old session holds the name until it expires.
		zktest.WaitFor(t, "p1 down", func() error {
			infos, err := st.Workers(context.Background())
			if err != nil {
				return err
			}
			if i := slices.IndexFunc(infos, func(w zkrunner.WorkerInfo) bool { return w.Name == "p1" }); i < 0 || infos[i].Live {
				return fmt.Errorf("workers %+v", infos)
			}
			return nil
		})
		p1 := startWorkerProc(t, "p1", []string{"worker", "--zk", srv.ConnString(), "--root", root, "--name", "p1", "--capacity", "3", "--grace", "1m", "--verbose"})
		back := time.Now()
		finals := waitSettled(t, st, ids)
		for _, id := range ids {
			j := finals[id]
			if j.Status() != job.StatusSucceeded {
				t.Errorf("job %s ended %s:\n%s", id, j.Status(), job.Describe(j))
				continue
			}
			for _, r := range stepsOnce(t, st, j) {
				if r.Worker != "p1" {
					t.Errorf("job %s: %s ran on %s: its holder came back within its grace, yet it moved", id, r.ActionID, r.Worker)
				}
			}
		}
		for job, rs := range startedElsewhere(t, ws) {
			for _, r := range rs {
				t.Errorf("job %s: %s ran %s: its holder came back within its grace", job, r.worker, r.action)
			}
		}
		t.Logf("p1 killed, back under its name %v later (its session %v), within its grace (1m): %d runs after, every step of every job on p1",
			back.Sub(killed).Round(time.Millisecond), workerSession, len(runsOf(t, "p1", p1, time.Time{})))
	})
}

// startedOf counts the actions of job id a worker's --verbose log says it
// started.
func startedOf(log string, id job.ID) int {
	return len(linesWith(strings.Join(linesWith(log, `msg="action started"`), "\n"), " job="+string(id)+" "))
}
