package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// blocking returns a registry with "noop" and "block" (which runs until
// stopped, and sends the cause of its stop on stopped).
func blocking(t *testing.T) (*runner.Registry, <-chan struct{}, <-chan error) {
	t.Helper()
	reg := runner.NewRegistry()
	started := make(chan struct{}, 16)
	stopped := make(chan error, 16)
	if err := reg.Register("noop", func(ctx context.Context, a job.Action) ([]byte, error) { return []byte(`"ok"`), nil }); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register("block", func(ctx context.Context, a job.Action) ([]byte, error) {
		started <- struct{}{}
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return nil, ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	return reg, started, stopped
}

// jobKeys returns the live state keys of job id.
func jobKeys(t *testing.T, ctx context.Context, st *kafkarunner.Store, id job.ID) []string {
	t.Helper()
	live, err := st.LiveKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range live {
		if k == string(id) || strings.HasPrefix(k, string(id)+"/") {
			out = append(out, k)
		}
	}
	return out
}

// TestDelete is issue 15's defect 13 (deletion): Runner.Delete goes to
// the restarter that owns the job, which tombstones every record of it:
// a finished job, a running one (whose action is stopped), and a job
// whose delete waited in the restarter topic while no restarter ran. The
// ID can then be used again.
func TestDelete(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	reg, started, stopped := blocking(t)
	st := openStore(t, cfg)
	client := start(t, kafkarunner.Options{Store: st, Role: kafkarunner.RoleClient})
	r := start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, DrainTimeout: time.Second}, Store: openStore(t, cfg)})

	if err := client.Submit(ctx, "done-1", ast.Seq(ast.Act("noop", 1), ast.Act("noop", 2))); err != nil {
		t.Fatal(err)
	}
	if j, err := client.Wait(ctx, "done-1"); err != nil || j.Status() != job.StatusSucceeded {
		t.Fatalf("done-1: %v %v", j.Status(), err)
	}
	if keys := jobKeys(t, ctx, st, "done-1"); len(keys) == 0 {
		t.Fatal("done-1 has no state records")
	}
	if err := client.Delete(ctx, "done-1"); err != nil {
		t.Fatalf("Delete of a finished job: %v", err)
	}
	if _, err := client.Status(ctx, "done-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Status of a deleted job: %v, want ErrNotFound", err)
	}
	if _, err := st.History(ctx, "done-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("History of a deleted job: %v, want ErrNotFound", err)
	}
	if keys := jobKeys(t, ctx, st, "done-1"); len(keys) != 0 {
		t.Errorf("live state keys of the deleted job: %q", keys)
	}
	if err := client.Delete(ctx, "done-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Delete of a deleted job: %v, want ErrNotFound", err)
	}

	// A running job: its action is stopped.
	if err := client.Submit(ctx, "run-1", ast.Act("block", nil)); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := client.Delete(ctx, "run-1"); err != nil {
		t.Fatalf("Delete of a running job: %v", err)
	}
	select {
	case cause := <-stopped:
		if !errors.Is(cause, runner.ErrStopped) {
			t.Errorf("the deleted job's action stopped with %v, want runner.ErrStopped", cause)
		}
	case <-ctx.Done():
		t.Fatal("the deleted job's action was not stopped")
	}
	if keys := jobKeys(t, ctx, st, "run-1"); len(keys) != 0 {
		t.Errorf("live state keys of the deleted running job: %q", keys)
	}

	// The ID again: a new job.
	if err := client.Submit(ctx, "done-1", ast.Act("noop", 3)); err != nil {
		t.Fatalf("Submit under a deleted job's ID: %v", err)
	}
	if j, err := client.Wait(ctx, "done-1"); err != nil || j.Status() != job.StatusSucceeded || j.Version() != 2 {
		t.Fatalf("done-1 made again: v%d %v %v", j.Version(), j.Status(), err)
	}

	// No restarter: the delete waits in the restarter topic.
	r.stop(t)
	deleted := make(chan error, 1)
	go func() { deleted <- client.Delete(ctx, "done-1") }()
	select {
	case err := <-deleted:
		t.Fatalf("Delete returned with no restarter running: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleRestarter})
	if err := <-deleted; err != nil {
		t.Fatalf("Delete that waited for a restarter: %v", err)
	}
	if _, err := client.Status(ctx, "done-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Status of a deleted job: %v, want ErrNotFound", err)
	}
}

// TestRetention is issue 15's defect 13 (retention): the restarter that
// owns a partition deletes its settled jobs once their clocks are older
// than Config.Retention, with tombstones; unfinished jobs stay.
func TestRetention(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.Retention = 300 * time.Millisecond
	reg, started, _ := blocking(t)
	st := openStore(t, cfg)
	client := start(t, kafkarunner.Options{Store: st, Role: kafkarunner.RoleClient})
	start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, DrainTimeout: time.Second}, Store: openStore(t, cfg)})

	if err := client.Submit(ctx, "keep", ast.Act("block", nil)); err != nil {
		t.Fatal(err)
	}
	<-started
	// A job cancelled (its clock is the cancel's time), and jobs that
	// succeed.
	ids := []job.ID{"old-cancelled"}
	if err := client.Submit(ctx, ids[0], ast.Act("block", nil)); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := client.Cancel(ctx, ids[0], "cancelled jobs go too"); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		id := job.ID(fmt.Sprintf("old-%02d", i))
		ids = append(ids, id)
		if err := client.Submit(ctx, id, ast.Act("noop", i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		for {
			_, err := client.Status(ctx, id)
			if errors.Is(err, store.ErrNotFound) {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("job %s is still stored: %v", id, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if keys := jobKeys(t, ctx, st, id); len(keys) != 0 {
			t.Errorf("live state keys of %s, deleted by retention: %q", id, keys)
		}
	}
	if j, err := client.Status(ctx, "keep"); err != nil || j.Done() {
		t.Errorf("the running job: %v %v, want it kept", j.Status(), err)
	}
}
