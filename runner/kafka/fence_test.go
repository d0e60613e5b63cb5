package kafka

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

func openTestStore(t *testing.T, prefix string, partitions int) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := Open(ctx, Config{Brokers: testBrokers, Prefix: prefix, Partitions: partitions, ActionPartitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func mustNew(t *testing.T, id job.ID, root ast.Node) job.Transition {
	t.Helper()
	tr, err := job.New(id, root, job.WithIncarnation(7))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func succeed(t *testing.T, j job.Job, actionID string, out string) job.Transition {
	t.Helper()
	tr, err := job.Restart(j, []job.Result{{JobID: j.ID(), ActionID: actionID, Output: []byte(out)}})
	if err != nil || !tr.Changed() {
		t.Fatalf("Restart with %s: %v (changed %v)", actionID, err, tr.Changed())
	}
	return tr
}

// TestFencing: a restarter that lost its partition without knowing it (a
// zombie) writes a step after the new owner's claim; the write "succeeds"
// for it, but counts for nobody: the new owner, a later reader and the
// history all see the new owner's step, even after a late copy of the old
// claim lands.
func TestFencing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prefix := testPrefix(t)
	a := openTestStore(t, prefix, 1)
	if _, _, err := a.claim(ctx, 0, 1, true, "a"); err != nil {
		t.Fatal(err)
	}
	tr := mustNew(t, "j", ast.Par(ast.Act("x", 1), ast.Act("y", 2)))
	if err := a.Create(ctx, tr.Job); err != nil {
		t.Fatal(err)
	}

	b := openTestStore(t, prefix, 1)
	_, ids, err := b.claim(ctx, 0, 2, true, "b")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []job.ID{"j"}) {
		t.Fatalf("the new owner finds unfinished jobs %v, want [j]", ids)
	}

	zombie := succeed(t, tr.Job, "par[0]#1", `"from the zombie"`)
	if err := a.Save(ctx, zombie.Job, zombie.Step); err != nil {
		t.Fatalf("the zombie's save: %v (it cannot know it is fenced)", err)
	}
	j, err := b.Load(ctx, "j")
	if err != nil || j.Version() != 1 {
		t.Fatalf("the new owner loads v%d (%v), want v1: the zombie's step must not count", j.Version(), err)
	}
	owner := succeed(t, j, "par[1]#1", `"from the owner"`)
	if err := b.Save(ctx, owner.Job, owner.Step); err != nil {
		t.Fatal(err)
	}

	// A late copy of the old owner's claim (a producer's retry that
	// lands after the new claim) outranks nothing.
	late := kafka.Message{Key: []byte(claimKey(0, a.parts[0].token)), Value: []byte(`{"v":1}`), Headers: []kafka.Header{
		{Key: hdrPartition, Value: []byte("0")}, tokenHeader(a.parts[0].token), {Key: hdrEpoch, Value: []byte(epoch{0, 1, 0}.String())}}}
	if err := a.w.WriteMessages(ctx, late); err != nil {
		t.Fatal(err)
	}

	c := openTestStore(t, prefix, 1) // a reader: owns nothing
	got, err := c.Load(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := job.Encode(owner.Job)
	if enc, _ := job.Encode(got); string(enc) != string(want) {
		t.Errorf("a reader loads\n%s\nwant the owner's\n%s", job.Describe(got), job.Describe(owner.Job))
	}
	h, err := c.History(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Steps) != 1 || h.Steps[0].Results[0].ActionID != "par[1]#1" {
		t.Errorf("history %+v, want the owner's one step", h.Steps)
	}
	if n := c.stats.fenced.Load(); n == 0 {
		t.Errorf("the reader counted no fenced record")
	}
	// A write by a store that owns nothing is refused.
	if err := c.Save(ctx, succeed(t, got, "par[0]#1", `"x"`).Job, succeed(t, got, "par[0]#1", `"x"`).Step); !errors.Is(err, ErrNotOwner) {
		t.Errorf("save by a store that owns nothing: %v, want ErrNotOwner", err)
	}
}

// TestSuspects: the actions that may not have been dispatched are those of
// the job's latest step until it is marked dispatched, and a new owner
// learns which from the state topic.
func TestSuspects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prefix := testPrefix(t)
	a := openTestStore(t, prefix, 1)
	if _, _, err := a.claim(ctx, 0, 1, true, "a"); err != nil {
		t.Fatal(err)
	}
	tr := mustNew(t, "s", ast.Seq(ast.Par(ast.Act("x", 1), ast.Act("y", 2)), ast.Act("z", 3)))
	if err := store.Commit(ctx, a, tr); err != nil {
		t.Fatal(err)
	}
	if ids, all, _ := a.suspects("s"); !all || ids != nil {
		t.Errorf("after create: suspects %v all %v, want all (no job before it)", ids, all)
	}
	a.markDispatched("s", 1)
	if ids, all, _ := a.suspects("s"); all || len(ids) != 0 {
		t.Errorf("after the mark: suspects %v all %v, want none", ids, all)
	}
	v2 := succeed(t, tr.Job, "seq[0].par[0]#1", "1")
	v3 := succeed(t, v2.Job, "seq[0].par[1]#1", "2")
	for _, x := range []job.Transition{v2, v3} {
		if err := store.Commit(ctx, a, x); err != nil {
			t.Fatal(err)
		}
	}
	if ids, all, _ := a.suspects("s"); all || !maps.Equal(ids, map[string]bool{"seq[1]#1": true}) {
		t.Errorf("after v3: suspects %v all %v, want seq[1]#1 (the step's new action)", ids, all)
	}
	b := openTestStore(t, prefix, 1)
	if _, _, err := b.claim(ctx, 0, 2, true, "b"); err != nil {
		t.Fatal(err)
	}
	if ids, all, _ := b.suspects("s"); all || !maps.Equal(ids, map[string]bool{"seq[1]#1": true}) {
		t.Errorf("the new owner's suspects %v all %v, want seq[1]#1", ids, all)
	}
	b.markDispatched("s", 3)
	b.bg.Wait()
	c := openTestStore(t, prefix, 1)
	if _, _, err := c.claim(ctx, 0, 3, true, "c"); err != nil {
		t.Fatal(err)
	}
	if ids, all, _ := c.suspects("s"); all || len(ids) != 0 {
		t.Errorf("once marked: the next owner's suspects %v all %v, want none", ids, all)
	}
}

// TestReclaimAfterFailedWrite: a failed write makes the partition's cache
// untrusted until it is claimed again.
func TestReclaimAfterFailedWrite(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := openTestStore(t, testPrefix(t), 1)
	if _, _, err := a.claim(ctx, 0, 1, true, "a"); err != nil {
		t.Fatal(err)
	}
	tr := mustNew(t, "r", ast.Act("x", 1))
	if err := a.Create(ctx, tr.Job); err != nil {
		t.Fatal(err)
	}
	v2 := succeed(t, tr.Job, "root#1", "1")
	dead, stop := context.WithCancel(ctx)
	stop()
	if err := a.Save(dead, v2.Job, v2.Step); err == nil {
		t.Fatal("a save with an ended context succeeded")
	}
	// A context that ends before the write changes nothing: the cache is
	// still trusted.
	if _, err := a.Load(ctx, "r"); err != nil {
		t.Fatalf("load after a save that never started: %v", err)
	}
	p := a.parts[0]
	p.mu.lock(ctx)
	a.failed(p, p.token)
	p.mu.unlock()
	if _, err := a.Load(ctx, "r"); !errors.Is(err, ErrReclaim) {
		t.Fatalf("load from a partition whose write failed: %v, want ErrReclaim", err)
	}
	if !a.dirty(0) {
		t.Fatal("the partition is not dirty")
	}
	if _, _, err := a.claim(ctx, 0, 1, true, "a"); err != nil {
		t.Fatal(err)
	}
	if j, err := a.Load(ctx, "r"); err != nil || j.Version() != 1 {
		t.Fatalf("after the claim: v%d, %v", j.Version(), err)
	}
}
