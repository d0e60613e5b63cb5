package zk_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/runnertest"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/store"
)

// TestConformance runs runner/runnertest against a real ZooKeeper. The
// crash scenarios crash the runner at its one multi-op commit, the one
// production runs (crashAt): a runner that is to crash gets a session of
// its own, which its Close ends, taking its claims and its worker node
// with it as a killed process's end does.
func TestConformance(t *testing.T) {
	srv := zktest.Start(t)
	var mu sync.Mutex
	stores := map[*testing.T]*zkrunner.Store{}
	newStore := func(t *testing.T) store.Store {
		s := openStore(t, srv, zkrunner.Config{SessionTimeout: 2 * time.Second})
		mu.Lock()
		stores[t] = s
		mu.Unlock()
		return s
	}
	runnertest.Run(t, newStore, func(t *testing.T, cfg runnertest.Config) runnertest.Runner {
		mu.Lock()
		zs := stores[t]
		mu.Unlock()
		if zs == nil {
			t.Fatal("the runner's store was not made by this test's newStore")
		}
		if s, ok := cfg.Store.(*zkrunner.Store); !ok || s != zs {
			t.Logf("the suite handed a wrapper of the store (%T): this runner works on the store itself", cfg.Store)
		}
		o := zkrunner.Options{
			WorkerOptions: runner.WorkerOptions{Name: cfg.Name, Registry: cfg.Registry, DrainTimeout: cfg.DrainTimeout, Hooks: cfg.Hooks, Workers: 8},
			Store:         zs,
			NoResume:      cfg.NoResume,
		}
		if cfg.Crash == nil {
			r, err := zkrunner.New(o)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		own := openStore(t, srv, zkrunner.Config{Root: zs.Root(), SessionTimeout: 2 * time.Second})
		zkrunner.InjectFaults(own, crashAt(cfg.Crash))
		o.Store = own
		r, err := zkrunner.New(o)
		if err != nil {
			t.Fatal(err)
		}
		return crashing{r, own}
	}, runnertest.InjectsCrashes())
}

var _ runnertest.Runner = (*zkrunner.Runner)(nil)

// crashAt is the fault hook that makes the runner die of c at its commit:
// every request fails once it died, and the commit of a step asks c
// before its multi-op is sent and once it was applied.
func crashAt(c *runnertest.Crash) func(zkrunner.FaultPoint, *job.Transition) error {
	return func(p zkrunner.FaultPoint, tr *job.Transition) error {
		switch {
		case p == zkrunner.FaultRequest || tr.Created():
			return c.Alive()
		case p == zkrunner.FaultCommit:
			return c.Commit(tr.Job, tr.Step)
		default:
			return c.Committed(tr.Job, tr.Step)
		}
	}
}

// crashing is a runner that dies of an injected crash: Close closes its
// session too.
type crashing struct {
	*zkrunner.Runner
	st *zkrunner.Store
}

func (c crashing) Close() error {
	err := c.Runner.Close()
	return errors.Join(err, c.st.Close())
}

// runRunner runs a runner on st until the test ends.
func runRunner(t *testing.T, o zkrunner.Options) *zkrunner.Runner {
	t.Helper()
	r, err := zkrunner.New(o)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()
	t.Cleanup(func() {
		_ = r.Close()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return r
}

// TestPriorityOrder: with one slot, a worker takes the actions of a par
// highest priority first (then in name order), as the entry names say.
func TestPriorityOrder(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	var order []string
	reg := runner.NewRegistry()
	if err := reg.Register("note", func(ctx context.Context, a job.Action) ([]byte, error) {
		mu.Lock()
		order = append(order, string(a.Payload))
		mu.Unlock()
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	sub, err := zkrunner.New(zkrunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	// Submitted before any worker runs, so that all five wait together.
	root := ast.Par(
		ast.Act("note", "low").WithPriority(-5),
		ast.Act("note", "zero"),
		ast.Act("note", "top").WithPriority(1000),
		ast.Act("note", "high").WithPriority(7),
		ast.Act("note", "bottom").WithPriority(-1000),
	)
	if err := sub.Submit(ctx, "prio", root); err != nil {
		t.Fatal(err)
	}
	runRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: 1}, Store: st})
	j, err := sub.Wait(ctx, "prio")
	if err != nil {
		t.Fatal(err)
	}
	if j.Status() != job.StatusSucceeded {
		t.Fatalf("%s\n%s", j.Status(), job.Describe(j))
	}
	want := []string{`"top"`, `"high"`, `"zero"`, `"low"`, `"bottom"`}
	if !slices.Equal(order, want) {
		t.Errorf("ran %v, want %v", order, want)
	}
}

// TestDigestACL: with credentials, baton's nodes carry a digest ACL: a
// client without them can neither read a job nor write into the queue,
// and a store without them cannot open the root; with them, all works.
func TestDigestACL(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path("acl")
	st := openStore(t, srv, zkrunner.Config{Root: root, Auth: "baton:s3cret"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reg := runner.NewRegistry()
	if err := reg.Register("noop", func(context.Context, job.Action) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	r := runRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
	if err := r.Submit(ctx, "secret", ast.Act("noop", 1)); err != nil {
		t.Fatal(err)
	}
	if j, err := r.Wait(ctx, "secret"); err != nil || j.Status() != job.StatusSucceeded {
		t.Fatalf("with credentials: %v %v", j.Status(), err)
	}
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	if _, _, err := c.Get(root + "/jobs/secret"); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("reading a job without credentials: %v, want ErrNoAuth", err)
	}
	if _, err := c.Create(root+"/queue/a-x", nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("writing into the queue without credentials: %v, want ErrNoAuth", err)
	}
	if err := c.Delete(root+"/jobs/secret", -1); err == nil {
		t.Errorf("deleting a job without credentials succeeded")
	}
	_, err := zkrunner.Open(ctx, zkrunner.Config{Servers: srv.Addrs(), Root: root, Auth: "baton:wrong"})
	if err == nil {
		t.Fatal("a store with the wrong password opened the root")
	}
	t.Logf("wrong password: %v", err)
}

// TestResumeReportsLostWithoutRun: a runner that only resumes (no Run, as
// baton resume --zk) reports an at-most-once action with no queue entry
// lost, and the job goes on.
func TestResumeReportsLostWithoutRun(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path("lost")
	st := openStore(t, srv, zkrunner.Config{Root: root})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := zkrunner.New(zkrunner.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Submit(ctx, "once", ast.Act("log", "x").AtMostOnce()); err != nil {
		t.Fatal(err)
	}
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	entries, _, err := c.Children(root + "/queue")
	if err != nil || len(entries) != 1 {
		t.Fatalf("queue %v %v", entries, err)
	}
	if err := c.Delete(root+"/queue/"+entries[0], -1); err != nil {
		t.Fatal(err)
	}
	if err := r.Resume(ctx, "once"); err != nil {
		t.Fatal(err)
	}
	j, err := st.Load(ctx, "once")
	if err != nil {
		t.Fatal(err)
	}
	var kind string
	j.Walk(func(n job.NodeInfo) bool {
		if n.Failure != nil {
			kind = n.Failure.Kind
		}
		return true
	})
	if j.Status() != job.StatusFailed || kind != job.KindLost {
		t.Errorf("after Resume: %s, failure kind %q; want failed, lost\n%s", j.Status(), kind, job.Describe(j))
	}
}
