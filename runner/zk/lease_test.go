package zk_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// TestLeaseRenewalWrites: short actions cost no renewal write; a long
// action's claim is renewed every third of the lease, so the live worker
// watching it never breaks it, however long it runs.
func TestLeaseRenewalWrites(t *testing.T) {
	const lease = 3 * time.Second
	srv := zktest.Start(t)
	root := freshRoot(srv.Root())
	var w *started
	long := make(chan struct{}, 1)
	reg := registry(t, map[string]runner.Handler{
		"short": func(ctx context.Context, a job.Action) ([]byte, error) { return nil, nil },
		"long": func(ctx context.Context, a job.Action) ([]byte, error) {
			long <- struct{}{}
			// Past a whole lease and more: four renewals.
			for w.Stats().LeaseRenewals < 4 {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(20 * time.Millisecond):
				}
			}
			return nil, nil
		},
	})
	w = startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "w", Registry: reg}, ClaimLease: lease, Store: openOn(t, srv.Addrs(), root, zkrunner.Config{})})
	watcher := startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "watcher", Registry: registry(t, map[string]runner.Handler{
		"other": func(ctx context.Context, a job.Action) ([]byte, error) { return nil, nil },
	})}, ClaimLease: lease, Store: openOn(t, srv.Addrs(), root, zkrunner.Config{})})
	sub := submitter(t, openOn(t, srv.Addrs(), root, zkrunner.Config{}))
	ctx := context.Background()

	if err := sub.Submit(ctx, "short", ast.Seq(ast.Act("short", 1), ast.Act("short", 2), ast.Act("short", 3))); err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, sub, "short", 30*time.Second); j.Status() != job.StatusSucceeded {
		t.Fatalf("short ended %s", j.Status())
	}
	if n := w.Stats().LeaseRenewals; n != 0 {
		t.Errorf("short actions: %d renewal writes, want none", n)
	}

	if err := sub.Submit(ctx, "long", ast.Act("long", nil)); err != nil {
		t.Fatal(err)
	}
	<-long
	if j := waitJob(t, sub, "long", 60*time.Second); j.Status() != job.StatusSucceeded {
		t.Fatalf("long ended %s:\n%s", j.Status(), job.Describe(j))
	}
	if n := watcher.Stats().LeasesBroken; n != 0 {
		t.Errorf("the watcher broke %d leases of a worker that renewed them", n)
	}
	t.Logf("renewals: %d (lease %v)", w.Stats().LeaseRenewals, lease)
}

// TestClaimLeaseChecked: a lease shorter than New accepts is refused,
// naming the option.
func TestClaimLeaseChecked(t *testing.T) {
	st := openStore(t, zktest.Start(t), zkrunner.Config{})
	_, err := zkrunner.New(zkrunner.Options{Store: st, ClaimLease: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "ClaimLease") {
		t.Errorf("ClaimLease 1ms: %v, want an error naming ClaimLease", err)
	}
}
