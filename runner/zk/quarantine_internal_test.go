package zk

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
)

// TestQuarantineRaceForLastSlot: two workers (of two that handle the
// name: the share is one) both read the quarantines at one version and
// both try to take the one slot. One multi-op wins; the other fails
// whole (the count's version moved: no node of its own is left), and,
// counting again, the loser is refused by the policy.
func TestQuarantineRaceForLastSlot(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path(fmt.Sprintf("i%d", internalRoots.Add(1)))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mk := func(name string) *Runner {
		st, err := Open(ctx, Config{Servers: srv.Addrs(), Root: root, SessionTimeout: 4 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		reg := runner.NewRegistry()
		_ = reg.Register("act", func(context.Context, job.Action) ([]byte, error) { return nil, nil })
		r, err := New(Options{WorkerOptions: runner.WorkerOptions{Name: name, Registry: reg}, Store: st})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := mk("a"), mk("b")
	ra, err := a.readQuarantines(ctx, "act")
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.readQuarantines(ctx, "act")
	if err != nil {
		t.Fatal(err)
	}
	if ra != rb || ra.others != 0 {
		t.Fatalf("reads %+v and %+v: want the same, with nobody quarantined", ra, rb)
	}
	if _, err := a.writeQuarantine(ctx, "act", ra, time.Minute, 1); err != nil {
		t.Fatalf("the first quarantine: %v", err)
	}
	failed, err := b.writeQuarantine(ctx, "act", rb, time.Minute, 1)
	if failed != 0 || !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("the second quarantine at the same version: op %d failed with %v; want op 0 (the count) with a bad version", failed, err)
	}
	if ok, err := b.c.exists(ctx, b.c.l.quarantine("act", "b")); err != nil || ok {
		t.Fatalf("b's quarantine node exists: %v (%v); the failed multi-op must leave nothing", ok, err)
	}

	// b counts again: the share (one of two workers) is taken.
	now := time.Now()
	q := placement.DefaultQuarantine()
	tally := placement.Tally{Failures: q.After - 1}
	nt, s := b.startQuarantine(ctx, "act", q, tally, placement.Failed, placement.Peers{Handlers: 2, LastSuccess: now}, now)
	if s.Start {
		t.Fatalf("b quarantined itself beside a (%s); want refused", s.Reason)
	}
	if nt.Failures != q.After || nt.Strikes != 0 {
		t.Errorf("b's tally after the refusal: %+v; want %d failures, no strike", nt, q.After)
	}
	kids, err := b.c.children(ctx, b.c.l.quarantineAction("act"))
	if err != nil || len(kids) != 1 || kids[0] != "a" {
		t.Errorf("quarantined for act: %v (%v); want only a", kids, err)
	}
	data, _, err := b.c.get(ctx, b.c.l.quarantineAction("act"))
	if err != nil || string(data) != "1" {
		t.Errorf("the count: %q (%v); want 1", data, err)
	}
}
