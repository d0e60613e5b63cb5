//go:build linux

package zk_test

// Claim leases with a worker process (process_test.go): a worker whose
// session stays alive while its loop is wedged (SIGSTOP, shorter than the
// session timeout) loses its claim to the worker watching it.

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// TestStuckClaimLeaseBroken: a worker process (session timeout 20 s,
// claim lease 3 s) runs "slow" and is SIGSTOPped for 8 s: its session
// outlives the stop, so only the lease can free the claim. The test's
// worker, the only other live worker and so the claim's watcher, breaks
// the claim, runs the action and finishes the job while the process is
// still stopped. Continued, the process finds its claim gone at its next
// renewal, cancels its handler and abandons its result: the job's version
// and history are as they were. For an at-most-once leaf the watcher
// instead fails the action with kind lost, in the multi-op that breaks the
// claim, and never runs it.
func TestStuckClaimLeaseBroken(t *testing.T) {
	for _, once := range []bool{false, true} {
		name := "at-least-once"
		if once {
			name = "at-most-once"
		}
		t.Run(name, func(t *testing.T) { stuckClaim(t, once) })
	}
}

func stuckClaim(t *testing.T, atMostOnce bool) {
	const lease, session, stopFor = 3 * time.Second, 20 * time.Second, 8 * time.Second
	srv := zktest.Start(t, zktest.TickTime(time.Second)) // sessions up to 20 s
	root := freshRoot(srv.Root())
	p := startWorkerProcess(t, srv, root, "proc", "", "BATON_ZK_TEST_SESSION="+session.String(), "BATON_ZK_TEST_LEASE="+lease.String())
	subSt := openOn(t, srv.Addrs(), root, zkrunner.Config{})
	sub := submitter(t, subSt)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const id = job.ID("stuck")
	slow := ast.Act("slow", nil)
	if atMostOnce {
		slow = slow.AtMostOnce()
	}
	if err := sub.Submit(ctx, id, ast.Seq(slow, ast.Act("quick", nil))); err != nil {
		t.Fatal(err)
	}
	poll(t, 30*time.Second, "the worker process started slow", func() bool { return len(p.matching("started stuck seq[0]#1")) == 1 })

	var mu sync.Mutex
	var ranSlow []time.Time
	local := registry(t, map[string]runner.Handler{
		"slow": func(ctx context.Context, a job.Action) ([]byte, error) {
			mu.Lock()
			ranSlow = append(ranSlow, time.Now())
			mu.Unlock()
			return []byte(`"local"`), nil
		},
		"quick": func(ctx context.Context, a job.Action) ([]byte, error) { return []byte(`"quick"`), nil },
	})
	lw := startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "local", Registry: local}, ClaimLease: lease,
		Store: openOn(t, srv.Addrs(), root, zkrunner.Config{})})

	p.signal(t, syscall.SIGSTOP)
	stopped := time.Now()
	continued := false
	defer func() {
		if !continued {
			p.signal(t, syscall.SIGCONT)
		}
	}()
	final := waitJob(t, sub, id, 60*time.Second)
	done := time.Since(stopped)
	if lw.Stats().LeasesBroken != 1 {
		t.Errorf("the local worker broke %d leases, want 1", lw.Stats().LeasesBroken)
	}
	h := checkHistory(t, subSt, final)
	mu.Lock()
	ran := len(ranSlow)
	mu.Unlock()
	if atMostOnce {
		f, failed := final.Failure()
		if !failed || f.Kind != job.KindLost || f.Path != "seq[0]" {
			t.Errorf("job ended %s, failure %+v; want failed at seq[0] with kind lost:\n%s", final.Status(), f, job.Describe(final))
		}
		if ran != 0 {
			t.Errorf("the local worker ran the at-most-once action %d times, want never", ran)
		}
	} else {
		if final.Status() != job.StatusSucceeded {
			t.Fatalf("job ended %s:\n%s", final.Status(), job.Describe(final))
		}
		if r, n := resultOf(h, "seq[0]"); n != 1 || string(r.Output) != `"local"` || r.Worker != "local" {
			t.Errorf("slow applied %d times, last %+v; want once, from the local worker", n, r)
		}
		if ran != 1 {
			t.Errorf("the local worker ran slow %d times, want once", ran)
		}
	}
	if done >= stopFor {
		t.Logf("the job ended %v after the SIGSTOP, past the %v the process is stopped for (a loaded machine)", done.Round(time.Millisecond), stopFor)
	}
	sleepUntil(stopped.Add(stopFor))

	p.signal(t, syscall.SIGCONT)
	continued = true
	// Two things wait for the process when it continues: its lease's
	// renewal, which finds the claim broken, and the stop of the job's
	// actions, the job having ended meanwhile. Whichever reaches the
	// handler first cancels it, and no result of it is applied (checked
	// below on the job and its history): a renewal first logs the claim
	// lost and the result abandoned; a stop first logs the action stopped.
	poll(t, 30*time.Second, "the continued process cancels its handler and abandons its result", func() bool {
		lost := len(p.matching("claim lost while the action ran", "job=stuck")) == 1 && len(p.matching(`msg="result abandoned`, "job=stuck")) == 1
		stopped := len(p.matching(`msg="action stopped"`, "job=stuck")) == 1
		return lost || stopped
	})
	// An abandoned result says what became of the action: the job ended
	// meanwhile, so its entry is gone.
	for _, l := range p.matching(`msg="result abandoned`, "job=stuck") {
		if !strings.Contains(l, `action_now="its queue entry is gone`) {
			t.Errorf("the abandoned result's line does not say the action's entry is gone: %s", l)
		}
	}
	after, err := subSt.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if after.Version() != final.Version() {
		t.Errorf("the stale worker's result changed the job: v%d before, v%d after", final.Version(), after.Version())
	}
	if h2 := checkHistory(t, subSt, after); len(h2.Steps) != len(h.Steps) {
		t.Errorf("the stale worker's result changed the history: %d steps, then %d", len(h.Steps), len(h2.Steps))
	}
	p.signal(t, syscall.SIGTERM)
	if code := p.waitExit(t, 20*time.Second); code != 0 {
		t.Errorf("the continued process exited with %d after SIGTERM, want 0", code)
	}
	t.Logf("SIGSTOP (session %v, lease %v): the job ended %v later (%s); continued after %v, the process cancelled its handler",
		session, lease, done.Round(time.Millisecond), final.Status(), stopFor)
}

// sleepUntil sleeps until t: a scenario's length, not an assertion.
func sleepUntil(t time.Time) {
	if d := time.Until(t); d > 0 {
		time.Sleep(d)
	}
}
