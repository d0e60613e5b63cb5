package zk_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/store"
)

// TestRetention: with Config.Retention, the workers delete the jobs that
// settled longer ago than it (succeeded, failed or cancelled), with
// their history and the queue entries left of them; a running job stays.
// With a negative Retention, and with the default (a week), settled jobs
// stay.
func TestRetention(t *testing.T) {
	srv := zktest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reg := runner.NewRegistry()
	if err := reg.Register("noop", func(context.Context, job.Action) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register("fail", func(context.Context, job.Action) ([]byte, error) { return nil, errors.New("no") }); err != nil {
		t.Fatal(err)
	}
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	exists := func(p string) bool {
		ok, _, err := c.Exists(p)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	type rooted struct {
		root string
		st   *zkrunner.Store
		sub  *zkrunner.Runner
	}
	start := func(name string, keep time.Duration) rooted {
		root := srv.Path(name)
		st := openStore(t, srv, zkrunner.Config{Root: root, Retention: keep})
		sub, err := zkrunner.New(zkrunner.Options{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		return rooted{root, st, sub}
	}
	short := start("short", 2*time.Second)
	off := start("off", -1)
	dflt := start("default", 0)
	for _, rt := range []rooted{short, off, dflt} {
		if err := rt.sub.Submit(ctx, "ok", ast.Act("noop", 1)); err != nil {
			t.Fatal(err)
		}
		if err := rt.sub.Submit(ctx, "bad", ast.Act("fail", 1)); err != nil {
			t.Fatal(err)
		}
		if err := rt.sub.Submit(ctx, "waits", ast.Act("nohandler", 1)); err != nil {
			t.Fatal(err)
		}
		if err := rt.sub.Submit(ctx, "cancelled", ast.Act("nohandler", 2)); err != nil {
			t.Fatal(err)
		}
		if err := rt.sub.Cancel(ctx, "cancelled", "test"); err != nil {
			t.Fatal(err)
		}
		runRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: rt.st})
		for _, id := range []job.ID{"ok", "bad"} {
			j, err := rt.sub.Wait(ctx, id)
			if rt.root == short.root && errors.Is(err, store.ErrNotFound) {
				continue // settled, and swept already (a slow machine)
			}
			if err != nil || !j.Done() {
				t.Fatalf("%s: job %s: %v %v", rt.root, id, j.Status(), err)
			}
		}
	}
	// A queue entry left of a settled job (as an older baton left them).
	leftover := short.root + "/queue/a-10000-0000000000001-2-ok-orphan"
	if _, err := c.Create(leftover, []byte(`{"job":"ok","id":"orphan","action":"nohandler"}`), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	var left []string
	said := ""
	poll(t, time.Minute, "the settled jobs of the short root deleted", func() bool {
		left = left[:0]
		for _, id := range []string{"ok", "bad", "cancelled"} {
			if exists(short.root + "/jobs/" + id) {
				left = append(left, id)
			}
		}
		if exists(leftover) {
			left = append(left, "the leftover entry")
		}
		if now := strings.Join(left, ", "); now != said {
			t.Logf("still there: %s", now)
			said = now
		}
		return len(left) == 0
	})
	for _, id := range []job.ID{"ok", "bad"} {
		if _, err := short.st.Load(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("job %s after the sweep: %v, want not found", id, err)
		}
	}
	if j, err := short.st.Load(ctx, "waits"); err != nil || j.Status() != job.StatusRunning {
		t.Errorf("the running job: %v %v", j.Status(), err)
	}
	// The other roots keep theirs (their workers have swept by now, if they
	// sweep: every 100 ms to a minute, the first within one interval).
	for _, rt := range []rooted{off, dflt} {
		infos, err := rt.st.List(ctx, store.Query{})
		if err != nil || len(infos) != 4 {
			t.Errorf("%s: %d jobs (%v), want all 4", rt.root, len(infos), err)
		}
	}
}
