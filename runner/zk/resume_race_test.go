package zk_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// TestResumeOfAJobThatMovedOn: a resume loads a job, and before it
// dispatches the job's outstanding actions another worker applies one of
// them (its queue entry deleted in the same multi-op). The resume must
// not queue that action again: it would run twice, once after the job no
// longer waits for it (a worker starting while jobs run did this, 81
// extra runs in TestStressDag with a short delay before its resume).
func TestResumeOfAJobThatMovedOn(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path("resumerace")
	st := openStore(t, srv, zkrunner.Config{Root: root})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sub, err := zkrunner.New(zkrunner.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	const id = job.ID("moved")
	if err := sub.Submit(ctx, id, ast.Seq(ast.Act("first", nil), ast.Act("second", nil))); err != nil {
		t.Fatal(err)
	}
	stale, err := st.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if acts := stale.Outstanding(); len(acts) != 1 || acts[0].Name != "first" {
		t.Fatalf("outstanding %v, want the first action", acts)
	}
	// A worker applies the first action (its entry goes in the
	// transition's multi-op) and runs the second, which waits.
	var firsts atomic.Int32
	second, release := make(chan struct{}, 1), make(chan struct{})
	startRunner(t, zkrunner.Options{Store: st, WorkerOptions: runner.WorkerOptions{Name: "w1", Registry: registry(t, map[string]runner.Handler{
		"first": func(context.Context, job.Action) ([]byte, error) { firsts.Add(1); return nil, nil },
		"second": func(context.Context, job.Action) ([]byte, error) {
			second <- struct{}{}
			<-release
			return nil, nil
		},
	})}})
	select {
	case <-second:
	case <-ctx.Done():
		t.Fatal("the second action never ran")
	}
	// Now a resume that loaded the job before: it must not queue the
	// first action again.
	if _, err := zkrunner.RecoverLoaded(ctx, sub, stale); err != nil {
		t.Fatal(err)
	}
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	entries, _, err := c.Children(root + "/queue")
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	for _, e := range entries {
		if strings.Contains(e, "first") {
			t.Errorf("the resume queued the applied first action again: queue %v", entries)
		}
	}
	if j := waitJob(t, sub, id, time.Minute); j.Status() != job.StatusSucceeded {
		t.Fatalf("job %s", j.Status())
	}
	if n := firsts.Load(); n != 1 {
		t.Fatalf("the first action ran %d times, want 1", n)
	}
}
