package inmem_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

// TestHistoryNamesTheWorker: a job run by a named runner on a bolt file
// has, in the history read back after the file is closed and opened
// again, the runner's name on each result: the failed attempt and the
// retry that succeeded alike.
func TestHistoryNamesTheWorker(t *testing.T) {
	path := filepath.Join(t.TempDir(), "baton.db")
	st, err := bolt.Open(path, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	reg := runner.NewRegistry()
	failed := false
	must(t, reg.Register("flaky", func(context.Context, job.Action) ([]byte, error) {
		if !failed {
			failed = true
			return nil, context.DeadlineExceeded
		}
		return []byte(`"ok"`), nil
	}))
	r, _, _ := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Name: "bolt-worker-1", Registry: reg, Workers: 1}, Store: st})
	ctx := testCtx(t)
	root := ast.Act("flaky", nil).WithRetry(ast.Retry{Attempts: 2, Initial: time.Millisecond})
	must(t, r.Submit(ctx, "named", root))
	if j, err := r.Wait(ctx, "named"); err != nil || j.Status() != job.StatusSucceeded {
		t.Fatalf("the job ended %v, %v", j.Status(), err)
	}
	r.Close()
	must(t, st.Close())

	st, err = bolt.Open(path, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err := store.LoadHistory(ctx, st, "named")
	if err != nil {
		t.Fatal(err)
	}
	var attempts int
	for _, step := range h.Steps {
		for _, res := range step.Results {
			if strings.Contains(res.ActionID, "@") {
				if res.Worker != "" {
					t.Errorf("step v%d: the timer's firing %s names worker %q, want none", step.Version, res.ActionID, res.Worker)
				}
				continue // a timer's firing (the retry's wait): no worker made it
			}
			attempts++
			if res.Worker != "bolt-worker-1" {
				t.Errorf("step v%d: %s names worker %q, want bolt-worker-1", step.Version, res.ActionID, res.Worker)
			}
		}
	}
	if attempts != 2 {
		t.Errorf("the history holds %d attempts, want 2 (a failure, then the retry's success)", attempts)
	}
}
