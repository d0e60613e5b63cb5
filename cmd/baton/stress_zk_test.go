package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// stressWorker is one process of a worker name in TestZKPlacementStress.
type stressWorker struct {
	name     string
	capacity int
	p        *proc
	draining bool      // drained by the test, and not undrained since
	killedAt time.Time // when it was seen gone after SIGKILL
}

// TestZKPlacementStress: zk-plan's stress test, grown (issue 18). Ten
// 'baton worker --verbose' processes of capacities 1 to 3 run 10 jobs of
// 10 dependent actions (a seq of pars of 4, 3 and 3 sleeps of 1 to 2.5
// s), while every second the test drains a worker, undrains one, or
// SIGKILLs one (each once in every three seconds, in a random order;
// a killed worker is restarted at once under a new name, or under its own
// once its session is gone), until every job has settled. A drained
// worker exits 0 and is replaced under a new name. From the workers'
// logs (each handler's start and end; a run in a killed process ends at
// the kill): no worker name ever runs more than its capacity at once; no
// action runs twice at once, and one runs again only after its earlier
// run's process was killed (logged); every job succeeds with every step
// once. The randomness is seeded: BATON_STRESS_SEED=N replays a run's
// choices (not its timing).
func TestZKPlacementStress(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("BATON_STRESS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("BATON_STRESS_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (BATON_STRESS_SEED=%d replays the choices)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	srv := zktest.Start(t)
	root := srv.Path("stress")
	zkArgs := func(a ...string) []string { return append(a, "--zk", srv.ConnString(), "--root", root) }

	var all []*stressWorker // every process, in start order
	capacity := map[string]int{}
	start := func(name string, c int) *stressWorker {
		capacity[name] = c
		w := &stressWorker{name: name, capacity: c}
		w.p = startWorkerProc(t, name, zkArgs("worker", "--name", name, "--capacity", strconv.Itoa(c), "--verbose"))
		all = append(all, w)
		return w
	}
	for i := range 10 {
		start(fmt.Sprintf("w%d", i), 1+rng.IntN(3))
	}
	fresh := 0
	newName := func() string {
		fresh++
		return fmt.Sprintf("n%d", fresh)
	}

	// 10 jobs of 10 actions: seq[par of 4, par of 3, par of 3].
	sleep := func() string { return fmt.Sprintf(`{"act":"sleep","payload":"%dms"}`, 1000+rng.IntN(1500)) }
	par := func(n int) string {
		var s []string
		for range n {
			s = append(s, sleep())
		}
		return `{"par":[` + strings.Join(s, ",") + `]}`
	}
	var ids []job.ID
	for i := range 10 {
		id := job.ID(fmt.Sprintf("s%d", i))
		wf := writeWorkflow(t, string(id)+".json", `{"version":1,"root":{"seq":[`+par(4)+","+par(3)+","+par(3)+`]}}`)
		baton(t, zkArgs("submit", wf, "--id", string(id))...).want(t, exitOK)
		ids = append(ids, id)
	}
	st := openStore(t, srv.Addrs(), root)

	alive := func() []*stressWorker {
		var out []*stressWorker
		for _, w := range all {
			select {
			case <-w.p.done:
			default:
				out = append(out, w)
			}
		}
		return out
	}
	settled := func() bool {
		for _, id := range ids {
			j, err := st.Load(context.Background(), id)
			if err != nil || !j.Status().Settled() {
				return false
			}
		}
		return true
	}
	var pending []*stressWorker // killed, to come back under their names
	var ops, round []string
	begin := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for !settled() {
		if time.Since(begin) > zktest.Patience(t) {
			t.Fatalf("not every job settled within %v of disruptions (seed %d); did: %s", zktest.Patience(t), seed, strings.Join(ops, ", "))
		}
		<-tick.C
		// Drained workers have left: each exited 0 by itself; a new
		// name takes its place.
		for _, w := range all {
			select {
			case <-w.p.done:
			default:
				continue
			}
			if !w.draining || !w.killedAt.IsZero() {
				continue
			}
			w.draining = false // replaced once
			if code := w.p.stop(t); code != exitOK {
				t.Errorf("drained %s exited %d\n%s", w.name, code, w.p.stderr.String())
			}
			contains(t, w.name+" stderr", w.p.stderr.String(), "baton worker "+w.name+": drained: ")
			n := start(newName(), 1+rng.IntN(3))
			ops = append(ops, fmt.Sprintf("%s drained, %s(%d) started", w.name, n.name, n.capacity))
		}
		// Killed workers come back under their names once their
		// sessions are gone.
		if len(pending) > 0 {
			infos, err := st.Workers(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			pending = slices.DeleteFunc(pending, func(w *stressWorker) bool {
				i := slices.IndexFunc(infos, func(wi zkrunner.WorkerInfo) bool { return wi.Name == w.name })
				if i >= 0 && infos[i].Live {
					return false
				}
				n := start(w.name, w.capacity)
				n.draining = i >= 0 && infos[i].State.String() == "draining" // it drains at once, and leaves
				ops = append(ops, "restart "+w.name)
				return true
			})
		}
		live := alive()
		var draining, available []*stressWorker
		for _, w := range live {
			if w.draining {
				draining = append(draining, w)
			} else {
				available = append(available, w)
			}
		}
		// Each round of three seconds makes the three disruptions in a
		// random order; one that cannot be made now (no worker drains,
		// one worker is left) gives way to one that can.
		if len(round) == 0 {
			round = []string{"drain", "undrain", "kill"}
			rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		op := round[0]
		round = round[1:]
		can := map[string]bool{"drain": len(available) > 1, "undrain": len(draining) > 0, "kill": len(live) > 1}
		for _, alt := range []string{"kill", "drain"} {
			if !can[op] {
				op = alt
			}
		}
		if !can[op] {
			continue
		}
		switch op {
		case "drain":
			w := available[rng.IntN(len(available))]
			r := baton(t, zkArgs("drain", w.name)...)
			switch {
			case r.code == exitOK:
				w.draining = true
				ops = append(ops, "drain "+w.name)
			case strings.Contains(r.stderr, "only available worker"):
				ops = append(ops, "drain "+w.name+" refused")
			default:
				t.Fatalf("baton drain %s: exit %d\n%s%s", w.name, r.code, r.stdout, r.stderr)
			}
		case "undrain":
			w := draining[rng.IntN(len(draining))]
			r := baton(t, zkArgs("undrain", w.name)...)
			switch {
			case r.code == exitOK:
				w.draining = false
				ops = append(ops, "undrain "+w.name)
			case strings.Contains(r.stderr, "no worker "):
				ops = append(ops, "undrain "+w.name+": gone already") // it deregistered meanwhile
			default:
				t.Fatalf("baton undrain %s: exit %d\n%s%s", w.name, r.code, r.stdout, r.stderr)
			}
		case "kill":
			w := live[rng.IntN(len(live))]
			w.killedAt = w.p.kill(t)
			if rng.IntN(2) == 0 {
				pending = append(pending, w)
				ops = append(ops, "kill "+w.name+" (back under its name)")
			} else {
				n := start(newName(), 1+rng.IntN(3))
				ops = append(ops, fmt.Sprintf("kill %s, %s(%d) started", w.name, n.name, n.capacity))
			}
		}
	}
	took := time.Since(begin)
	// SIGTERM: each finishes what it runs and logs its ends.
	for _, w := range alive() {
		if code := w.p.stop(t); code != exitOK {
			t.Errorf("%s exited %d after SIGTERM\n%s", w.name, code, w.p.stderr.String())
		}
	}

	byName := map[string][]handlerRun{}
	byAction := map[string][]handlerRun{}
	errorsLogged := 0
	for _, w := range all {
		// Said, not failed: what went wrong on the way that the runners
		// mended (a request cut by a kill, a conflict).
		for _, l := range linesWith(w.p.stderr.String(), "level=ERROR") {
			errorsLogged++
			t.Logf("%s (pid %d) logged: %s", w.name, w.p.cmd.Process.Pid, l)
		}
		for _, r := range runsOf(t, w.name, w.p, w.killedAt) {
			byName[w.name] = append(byName[w.name], r)
			byAction[r.job+" "+r.action] = append(byAction[r.job+" "+r.action], r)
		}
	}
	for name, rs := range byName {
		if most := mostAtOnce(rs); most > capacity[name] {
			t.Errorf("worker %s ran %d actions at once, its capacity being %d", name, most, capacity[name])
		}
	}
	reruns := 0
	for key, rs := range byAction {
		slices.SortFunc(rs, func(a, b handlerRun) int { return a.start.Compare(b.start) })
		for i := 1; i < len(rs); i++ {
			prev, r := rs[i-1], rs[i]
			switch {
			case r.start.Before(prev.end):
				t.Errorf("%s ran twice at once: on %s (pid %d) from %v to %v, and on %s (pid %d) from %v",
					key, prev.worker, prev.pid, prev.start.Format("15:04:05.000"), prev.end.Format("15:04:05.000"), r.worker, r.pid, r.start.Format("15:04:05.000"))
			case !lostAtKill(prev, r):
				t.Errorf("%s ran again on %s (pid %d) after it ended on %s (pid %d), which was not killed before it", key, r.worker, r.pid, prev.worker, prev.pid)
			default:
				reruns++
				t.Logf("re-run after a kill: %s on %s (pid %d) from %s; the killed attempt on %s (pid %d) from %s",
					key, r.worker, r.pid, r.start.Format("15:04:05.000"), prev.worker, prev.pid, prev.start.Format("15:04:05.000"))
			}
		}
	}
	finals := waitSettled(t, st, ids)
	for _, id := range ids {
		j := finals[id]
		if j.Status() != job.StatusSucceeded {
			t.Errorf("job %s ended %s:\n%s", id, j.Status(), job.Describe(j))
			continue
		}
		if rs := stepsOnce(t, st, j); len(rs) != 10 {
			t.Errorf("job %s: %d results applied, want its 10 actions once each", id, len(rs))
		}
	}
	most := map[string]int{}
	for name, rs := range byName {
		most[name] = mostAtOnce(rs)
	}
	t.Logf("seed %d: %d jobs of 10 actions settled in %v under %d disruptions on %d processes (%d names), %d re-runs after kills, %d errors logged; most at once per worker (capacity): %s",
		seed, len(ids), took.Round(time.Millisecond), len(ops), len(all), len(capacity), reruns, errorsLogged, describeMost(most, capacity))
	t.Logf("disruptions: %s", strings.Join(ops, ", "))
}

// describeMost lists name=most/capacity, sorted by name.
func describeMost(most, capacity map[string]int) string {
	var out []string
	for name, c := range capacity {
		out = append(out, fmt.Sprintf("%s=%d/%d", name, most[name], c))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}
