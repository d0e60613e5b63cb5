package zk

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// TestBreakLeaseLeavesANewClaim: a watcher breaks a claim whose version
// it saw unchanged for a whole lease by deleting it at that version. A
// claim is named by its entry, and a claim never renewed is at version
// 0, as every new claim is: if the stuck claim goes (its owner's session
// expires) and a worker claims the entry again between the watcher's
// read of the claim and its delete, the delete must fail, not remove the
// new claim (whose action then runs again once its owner's renewal finds
// it gone). Here the watcher's breakLease is called with what it read of
// the old claim, after the entry was claimed again, for an at-least-once
// and an at-most-once action (whose break also reports it lost).
func TestBreakLeaseLeavesANewClaim(t *testing.T) {
	srv := zktest.Start(t)
	for _, once := range []bool{false, true} {
		t.Run(fmt.Sprintf("atMostOnce=%v", once), func(t *testing.T) {
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
			r, err := New(Options{WorkerOptions: runner.WorkerOptions{Name: "watcher", Registry: reg}, Store: st})
			if err != nil {
				t.Fatal(err)
			}
			// A job whose one action waits in the queue.
			leaf := ast.Act("step", nil)
			if once {
				leaf = leaf.AtMostOnce()
			}
			if err := r.Submit(ctx, "j", leaf); err != nil {
				t.Fatal(err)
			}
			names, err := r.c.children(ctx, r.c.l.queue())
			if err != nil || len(names) != 1 {
				t.Fatalf("queue %v, %v; want one entry", names, err)
			}
			name := names[0]
			entry, claim := r.c.l.entry(name), r.c.l.claim(name)
			data, _, err := r.c.get(ctx, entry)
			var ed entryData
			if err == nil {
				err = json.Unmarshal(data, &ed)
			}
			if err != nil || ed.Act == nil {
				t.Fatalf("entry %s: %s, %v", name, data, err)
			}
			a := *ed.Act
			claimAt := func(owner string, entryVer int32) {
				t.Helper()
				if _, _, err := r.c.multi(ctx, "claim", []any{
					r.c.createOp(claim, []byte(owner), zk.FlagEphemeral),
					&zk.SetDataRequest{Path: entry, Data: entryOf(a, owner), Version: entryVer},
				}); err != nil {
					t.Fatal(err)
				}
			}
			claimAt("stuck", 0)
			_, old, err := r.c.get(ctx, claim)
			if err != nil {
				t.Fatal(err)
			}
			// The stuck claim goes, and the entry is claimed again.
			if err := r.c.delete(ctx, claim, -1); err != nil {
				t.Fatal(err)
			}
			claimAt("other", 1)
			r.breakLease(ctx, name, "stuck", old.Czxid, old.Version, time.Minute)
			data, _, err = r.c.get(ctx, claim)
			if err != nil || string(data) != "other" {
				t.Errorf("breaking the stuck claim's lease took the claim made since by another worker: claim %q, %v", data, err)
			}
			if _, est, err := r.c.get(ctx, entry); err != nil || est.Version != 2 {
				t.Errorf("the entry, claimed again, is gone or changed: %v %v", est, err)
			}
			if n := r.Stats().LeasesBroken; n != 0 {
				t.Errorf("%d leases broken, want none", n)
			}
			if j, err := r.Status(ctx, "j"); err != nil || j.Status() != job.StatusRunning {
				t.Errorf("job j: %v %v; want it running, its action claimed by the other worker", j.Status(), err)
			}
		})
	}
}
