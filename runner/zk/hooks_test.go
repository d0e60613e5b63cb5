package zk_test

import (
	"context"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"

	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/runnertest"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// checkPlacement says where the hook's counts differ from the runner's Stats,
// which count the same events: once Run returned, every event counted
// in one was told to the other. Every runner startRunner starts is
// checked so when its test ends: the scenarios that spill, move pins,
// quarantine, break leases or find garbled nodes prove that the hook
// tells each.
func checkPlacement(p *runnertest.PlacementTally, t testing.TB, name string, s zkrunner.Stats) {
	t.Helper()
	for _, c := range []struct {
		kind  runner.PlacementKind
		stats int64
	}{
		{runner.PlacementClaimed, s.Claims}, {runner.PlacementClaimLost, s.ClaimsLost},
		{runner.PlacementClaimedInTransition, s.ClaimedInTransition}, {runner.PlacementSpilled, s.Spills},
		{runner.PlacementPinAllocated, s.PinsAllocated}, {runner.PlacementPinMoved, s.PinMoves},
		{runner.PlacementLeaseRenewed, s.LeaseRenewals}, {runner.PlacementLeaseBroken, s.LeasesBroken},
		{runner.PlacementQuarantined, s.Quarantines}, {runner.PlacementUnreadable, s.Unreadable},
	} {
		if got := p.Count(c.kind); got != c.stats {
			t.Errorf("runner %s: the Placement hook told %d %v events, its Stats count %d", name, got, c.kind, c.stats)
		} else if got > 0 && testing.Verbose() {
			t.Logf("runner %s: %d %v events, told and counted", name, got, c.kind)
		}
	}
}

// TestPlacementHookDrain: a worker running an action is told when it is
// drained (PlacementDraining) and when it is undrained before it left
// (PlacementUndrained), once each.
func TestPlacementHookDrain(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	sub := submitter(t, st)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	events := make(chan runner.PlacementKind, 100)
	reg := registry(t, map[string]runner.Handler{"block": func(ctx context.Context, a job.Action) ([]byte, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, nil
	}})
	hooks := &runner.Hooks{Placement: func(e runner.PlacementEvent) {
		if e.Kind == runner.PlacementDraining || e.Kind == runner.PlacementUndrained {
			events <- e.Kind
		}
	}}
	startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "w1", Registry: reg, Hooks: hooks}, Store: openOn(t, srv.Addrs(), st.Root(), zkrunner.Config{})})
	ctx := context.Background()
	if err := sub.Submit(ctx, "b", ast.Act("block", nil)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(zktest.Patience(t)):
		t.Fatal("w1 never started the action")
	}
	want := func(k runner.PlacementKind) {
		t.Helper()
		select {
		case got := <-events:
			if got != k {
				t.Fatalf("told %v, want %v", got, k)
			}
		case <-time.After(zktest.Patience(t)):
			t.Fatalf("never told %v", k)
		}
	}
	// Force: no other worker runs block.
	if _, err := st.Drain(ctx, "w1", zkrunner.DrainOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	want(runner.PlacementDraining)
	if _, err := st.Undrain(ctx, "w1"); err != nil {
		t.Fatal(err)
	}
	want(runner.PlacementUndrained)
	close(release)
	select {
	case k := <-events:
		t.Fatalf("told %v more", k)
	case <-time.After(100 * time.Millisecond):
	}
}
