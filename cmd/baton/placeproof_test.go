package main

// Helpers of the placement proofs with worker processes (issue 18):
// SIGKILLed workers, the workers' logs read back as runs (the start and
// end of each handler), and the history check.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/store"
)

// kill sends SIGKILL to the worker process by its PID and waits until it
// has exited; its cleanup then expects no exit status. It returns when
// the process was seen gone.
func (p *proc) kill(t *testing.T) time.Time {
	t.Helper()
	p.killed.Store(true)
	// ESRCH: it exited by itself meanwhile (and was reaped); it is gone
	// either way.
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("SIGKILL to pid %d: %v", p.cmd.Process.Pid, err)
	}
	select {
	case <-p.done:
	case <-time.After(zktest.Patience(t)):
		t.Fatalf("pid %d did not exit after SIGKILL", p.cmd.Process.Pid)
	}
	return time.Now()
}

// openStore opens the root on addrs in the test process, closed when the
// test ends.
func openStore(t *testing.T, addrs []string, root string) *zkrunner.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Patience(t))
	defer cancel()
	st, err := zkrunner.Open(ctx, zkrunner.Config{Servers: addrs, Root: root, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// waitSettled waits until every job of ids has settled and returns them.
func waitSettled(t *testing.T, st *zkrunner.Store, ids []job.ID) map[job.ID]job.Job {
	t.Helper()
	out := map[job.ID]job.Job{}
	zktest.WaitFor(t, "every job settled", func() error {
		for _, id := range ids {
			if _, ok := out[id]; ok {
				continue
			}
			j, err := st.Load(context.Background(), id)
			if err != nil {
				return err
			}
			if !j.Status().Settled() {
				return fmt.Errorf("job %s is %s", id, j.Status())
			}
			out[id] = j
		}
		return nil
	})
	return out
}

// stepsOnce checks that the history of job j holds every step once:
// versions follow one another from the origin, and every result's action
// ID is applied in exactly one step. It returns the results applied, in
// order.
func stepsOnce(t *testing.T, st store.Store, j job.Job) []job.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Patience(t))
	defer cancel()
	h, err := store.LoadHistory(ctx, st, j.ID())
	if err != nil {
		t.Fatalf("history of job %s: %v", j.ID(), err)
	}
	v := h.Origin.Version()
	seen := map[string]uint64{}
	var rs []job.Result
	for _, s := range h.Steps {
		if s.Version != v+1 {
			t.Errorf("job %s: history has step v%d after v%d", j.ID(), s.Version, v)
		}
		v = s.Version
		for _, r := range s.Results {
			if prev, ok := seen[r.ActionID]; ok {
				t.Errorf("job %s: the result of %s was applied in step v%d and again in v%d", j.ID(), r.ActionID, prev, s.Version)
			}
			seen[r.ActionID] = s.Version
			rs = append(rs, r)
		}
	}
	if v != j.Version() {
		t.Errorf("job %s: history ends at v%d, the job is at v%d", j.ID(), v, j.Version())
	}
	return rs
}

// handlerRun is one handler's run in a worker process, read from its log.
type handlerRun struct {
	worker string // the worker's name
	pid    int
	job    string
	action string // path#attempt
	start  time.Time
	end    time.Time // the kill's time for a run its process died in
	killed bool      // its process was SIGKILLed while it ran
	// gone is when its process was seen gone after a SIGKILL, whenever
	// that was; zero if it was not killed.
	gone time.Time
}

// lostAtKill reports whether run r of an action may be a re-run of prev
// whose result a kill lost: prev was in flight at the kill, or its handler
// had ended and its process was killed before r started (before its
// result was saved, since r ran).
func lostAtKill(prev, r handlerRun) bool {
	return prev.killed || !prev.gone.IsZero() && prev.gone.After(prev.end) && prev.gone.Before(r.start)
}

// logAttr returns the value of key=VALUE in a slog text line ("" if none).
func logAttr(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		if j := strings.Index(v[1:], `"`); j >= 0 {
			return v[1 : j+1]
		}
	}
	if j := strings.IndexByte(v, ' '); j >= 0 {
		return v[:j]
	}
	return v
}

// runsOf reads the runs of a worker process from its --verbose log
// ("action started", then "action succeeded" or "action failed"). A run
// with no end ended at killedAt if the process was killed, else it is an
// error.
func runsOf(t *testing.T, name string, p *proc, killedAt time.Time) []handlerRun {
	t.Helper()
	var out []handlerRun
	open := map[string]int{}
	for _, l := range strings.Split(p.stderr.String(), "\n") {
		key := logAttr(l, "job") + " " + logAttr(l, "action")
		switch {
		case strings.Contains(l, `msg="action started"`):
			open[key] = len(out)
			out = append(out, handlerRun{worker: name, pid: p.cmd.Process.Pid, job: logAttr(l, "job"), action: logAttr(l, "action"), start: logTime(t, l), gone: killedAt})
		case strings.Contains(l, `msg="action succeeded"`), strings.Contains(l, `msg="action failed"`):
			i, ok := open[key]
			if !ok {
				t.Errorf("worker %s (pid %d): an end with no start: %s", name, p.cmd.Process.Pid, l)
				continue
			}
			out[i].end = logTime(t, l)
			delete(open, key)
		}
	}
	for _, i := range open {
		if killedAt.IsZero() {
			t.Errorf("worker %s (pid %d): %s %s started and never ended, and the process was not killed", name, out[i].pid, out[i].job, out[i].action)
			continue
		}
		out[i].end, out[i].killed = killedAt, true
	}
	return out
}

// mostAtOnce is the most runs of rs that overlap in time.
func mostAtOnce(rs []handlerRun) int {
	type ev struct {
		at time.Time
		d  int
	}
	var evs []ev
	for _, r := range rs {
		evs = append(evs, ev{r.start, 1}, ev{r.end, -1})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.d - b.d // an end before a start at the same instant
	})
	n, most := 0, 0
	for _, e := range evs {
		n += e.d
		most = max(most, n)
	}
	return most
}

// TestLostAtKill: a run again after one whose handler ended is a re-run
// a kill explains only if the process was killed between the end and the
// new run (the result not yet saved when it died). TestZKPlacementStress
// (seed 1795726778935925062) failed a run that ended 20:59:43.427 on a
// worker SIGKILLed right after, as if that worker had not been killed.
func TestLostAtKill(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 11, 26, 20, 59, s, 0, time.UTC) }
	for _, c := range []struct {
		prev handlerRun
		r    handlerRun
		want bool
	}{
		{handlerRun{start: at(1), end: at(3), killed: true, gone: at(3)}, handlerRun{start: at(9)}, true},
		{handlerRun{start: at(1), end: at(2), gone: at(3)}, handlerRun{start: at(9)}, true},
		{handlerRun{start: at(1), end: at(2)}, handlerRun{start: at(9)}, false},
		{handlerRun{start: at(1), end: at(2), gone: at(10)}, handlerRun{start: at(9)}, false},
	} {
		if got := lostAtKill(c.prev, c.r); got != c.want {
			t.Errorf("lostAtKill(%+v, %+v) = %v, want %v", c.prev, c.r, got, c.want)
		}
	}
}
