//go:build linux

package zk_test

// A runner bug shown with a worker process (process_test.go): it fails
// until the bug is fixed.

import (
	"context"
	"slices"
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

// TestStaleWorkerHandBackKeepsLiveClaim: a worker process is
// SIGSTOPped past its session timeout while it runs an action; the test's
// worker takes the action over (its own claim node, same path). The
// process is continued and at once stopped (SIGTERM): its drain cancels
// the stale handler, and Runner.perform hands the action back: handBack
// deletes the claim only if the entry is still at the version its own
// claim gave it, so the live worker's claim stays and the action does not
// run twice at once. (handBack once deleted the claim node at any
// version: the live worker's.)
func TestStaleWorkerHandBackKeepsLiveClaim(t *testing.T) {
	srv := zktest.Start(t)
	root := freshRoot(srv.Root())
	p := startWorkerProcess(t, srv, root, "proc", "") // its handler runs until its context ends
	subSt := openOn(t, srv.Addrs(), root, zkrunner.Config{})
	sub := submitter(t, subSt)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	const id = job.ID("handback")
	if err := sub.Submit(ctx, id, ast.Act("slow", nil)); err != nil {
		t.Fatal(err)
	}
	poll(t, 30*time.Second, "the worker process started slow", func() bool { return len(p.matching("started handback")) == 1 })

	var mu sync.Mutex
	entered, running := 0, 0
	overlap := false
	release := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	local := registry(t, map[string]runner.Handler{"slow": func(ctx context.Context, a job.Action) ([]byte, error) {
		mu.Lock()
		entered++
		running++
		overlap = overlap || running > 1
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		select {
		case <-release:
			return []byte(`"local"`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}})
	startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "local", Registry: local}, Store: openOn(t, srv.Addrs(), root, zkrunner.Config{})})
	p.signal(t, syscall.SIGSTOP)
	poll(t, 20*time.Second, "the local worker takes slow over", func() bool { mu.Lock(); defer mu.Unlock(); return entered == 1 })
	p.signal(t, syscall.SIGCONT)
	p.signal(t, syscall.SIGTERM)
	if code := p.waitExit(t, 20*time.Second); code != 0 {
		t.Errorf("the process exited with %d after SIGTERM", code)
	}
	if len(p.matching("action handed back", "job=handback")) != 1 {
		t.Fatalf("the stopped process did not hand the action back: the scenario did not happen")
	}
	// The process handed back before it exited: the live worker's claim
	// must still be there, and it must run the action once.
	ws, err := subSt.Workers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	holds := slices.ContainsFunc(ws, func(w zkrunner.WorkerInfo) bool { return w.Name == "local" && len(w.Running) == 1 })
	mu.Lock()
	n, both := entered, overlap
	mu.Unlock()
	if !holds || n != 1 || both {
		t.Errorf("after the stale process handed the action back: local holds its claim: %v; local entered slow %d times, twice at once: %v; want the claim kept and one run (workers: %+v)", holds, n, both, ws)
	}
	close(release)
	final := waitJob(t, sub, id, 30*time.Second)
	if final.Status() != job.StatusSucceeded {
		t.Fatalf("job ended %s", final.Status())
	}
	checkHistory(t, subSt, final)
}
