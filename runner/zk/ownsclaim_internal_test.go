package zk

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// TestOwnsClaimIsTheTransitionsOwn: a commit whose multi-op's reply was
// lost, and whose retry failed, asks ownsClaim whether the claim its
// transition created exists in this session: then it was written, and
// the worker runs the actions. A claim of the same entry that this
// worker made from the queue in the same session (after its session
// expired and a new one listed the entry, unclaimed since) is not the
// transition's: that claim's own run is under way, and counting it as
// the commit's made the worker run the action twice (seen once in 20
// runs of TestLostCommitReplyAcrossSessionExpiry). The transition's
// claim leaves its entry at version 0; a claim from the queue moves it.
func TestOwnsClaimIsTheTransitionsOwn(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path(fmt.Sprintf("i%d", internalRoots.Add(1)))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := Open(ctx, Config{Servers: srv.Addrs(), Root: root, SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	reg := runner.NewRegistry()
	_ = reg.Register("step", func(context.Context, job.Action) ([]byte, error) { return nil, nil })
	r, err := New(Options{WorkerOptions: runner.WorkerOptions{Name: "w", Registry: reg}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	a := job.Action{JobID: "j", ID: "seq[1]#1", Name: "step"}
	now := time.Now().UnixMilli()
	name := entryName(a, now)
	rv := &reservation{acts: []job.Action{a}, own: []consumed{{entry: r.c.l.entry(name), ver: 0, claim: r.c.l.claim(name)}}}
	// What the transition's multi-op writes: the entry created claimed.
	if _, _, err := r.c.multi(ctx, "transition", r.queueOps(rv.acts, nil, rv, now)); err != nil {
		t.Fatal(err)
	}
	if !r.ownsClaim(ctx, rv) {
		t.Fatal("ownsClaim = false for the claim the transition created in this session")
	}
	// The claim goes (as with an expired session), and this session
	// claims the entry from the queue: the claim's multi-op of claim.
	c := rv.own[0]
	if err := r.c.delete(ctx, c.claim, -1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.c.multi(ctx, "claim", []any{
		r.c.createOp(c.claim, []byte("w"), zk.FlagEphemeral),
		&zk.SetDataRequest{Path: c.entry, Data: entryOf(a, "w"), Version: 0},
	}); err != nil {
		t.Fatal(err)
	}
	if r.ownsClaim(ctx, rv) {
		t.Error("ownsClaim = true for a claim this session made from the queue: the transition's claim is gone")
	}
}
