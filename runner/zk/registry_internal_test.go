package zk

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
)

var internalRoots atomic.Int64

// openInternal opens a store on a root of its own on srv, closed when t
// ends.
func openInternal(t *testing.T, srv *zktest.Server, log *slog.Logger) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := Open(ctx, Config{Servers: srv.Addrs(), Root: srv.Path(fmt.Sprintf("i%d", internalRoots.Add(1))), SessionTimeout: 2 * time.Second, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// syncBuffer is a log sink several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// worker returns the worker named in v, or fails.
func viewWorker(v placement.View, name string) (placement.Worker, error) {
	for _, w := range v.Workers {
		if w.Name == name {
			return w, nil
		}
	}
	return placement.Worker{}, fmt.Errorf("no worker %s in the view (%d workers)", name, len(v.Workers))
}

// TestRegistryView: the registry follows registrations, live nodes,
// settings and quarantines written by others, by their watches; a
// garbled registration makes its worker unreadable (StateNone), logged
// and counted once; a quarantine's end is signalled without any node
// changing.
func TestRegistryView(t *testing.T) {
	srv := zktest.Start(t)
	var logs syncBuffer
	st := openInternal(t, srv, slog.New(slog.NewTextHandler(&logs, nil)))
	l := st.c.l
	other := zktest.Connect(t, srv.Addrs(), 2*time.Second)
	acl := zk.WorldACL(zk.PermAll)
	mustCreate := func(c *zk.Conn, p, data string, flags int32) {
		t.Helper()
		if _, err := c.Create(p, []byte(data), flags, acl); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}

	g := newRegistry(st.c, runner.RealClock(), nil, true)
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Patience(t))
	defer cancel()
	if err := g.start(ctx); err != nil {
		t.Fatal(err)
	}
	defer g.stop()
	v := g.view("w1", time.Now())
	if len(v.Workers) != 0 || v.Settings != DefaultSettings() {
		t.Fatalf("empty root: view %+v, want no workers and the default settings", v)
	}

	// A registration, then its live node from another session.
	mustCreate(other, l.worker("w1"), `{"state":"available","capacity":2,"limits":{"a":1},"grace_ms":3000,"actions":["b","a"]}`, 0)
	mustCreate(other, l.live("w1"), `{"host":"h","pid":7,"load":{"running":1,"names":{"a":{"running":1,"succeeded":4,"failed":1}}}}`, zk.FlagEphemeral)
	zktest.WaitFor(t, "w1 live in the view", func() error {
		w, err := viewWorker(g.view("x", time.Now()), "w1")
		switch {
		case err != nil:
			return err
		case !w.Live || w.State != placement.StateAvailable || w.Capacity != 2 || w.Limits["a"] != 1 || w.Grace != 3*time.Second:
			return fmt.Errorf("w1 is %+v", w)
		case fmt.Sprint(w.Actions) != "[a b]" || w.Load.Running != 1 || w.Load.Names["a"].Succeeded != 4:
			return fmt.Errorf("w1 is %+v", w)
		}
		return nil
	})
	if got := g.live(); fmt.Sprint(got) != "[w1]" {
		t.Fatalf("live() = %v, want [w1]", got)
	}

	// Drained to draining by CAS: the view follows.
	if _, err := other.Set(l.worker("w1"), []byte(`{"state":"draining","capacity":2,"grace_ms":3000,"actions":["a"]}`), 0); err != nil {
		t.Fatal(err)
	}
	zktest.WaitFor(t, "w1 draining", func() error {
		if w, _ := viewWorker(g.view("x", time.Now()), "w1"); w.State != placement.StateDraining {
			return fmt.Errorf("w1 is %v", w.State)
		}
		return nil
	})

	// Its session ends: down since this process saw it.
	before := time.Now()
	if err := other.Delete(l.live("w1"), -1); err != nil {
		t.Fatal(err)
	}
	zktest.WaitFor(t, "w1 down", func() error {
		w, _ := viewWorker(g.view("x", time.Now()), "w1")
		if w.Live || w.DownSince.Before(before) {
			return fmt.Errorf("w1 live %v, down since %v (deleted at %v)", w.Live, w.DownSince, before)
		}
		return nil
	})
	if got := g.live(); len(got) != 0 {
		t.Fatalf("live() = %v, want none", got)
	}

	// A garbled registration: unreadable, logged and counted once.
	mustCreate(other, l.worker("w2"), `{"state":"availab`, 0)
	zktest.WaitFor(t, "w2 unreadable", func() error {
		w, err := viewWorker(g.view("x", time.Now()), "w2")
		if err != nil {
			return err
		}
		if w.State != placement.StateNone {
			return fmt.Errorf("w2 is %v", w.State)
		}
		return nil
	})
	// Other changes do not log or count it again.
	mustCreate(other, l.live("w2"), ``, zk.FlagEphemeral)
	zktest.WaitFor(t, "w2 live", func() error {
		if w, _ := viewWorker(g.view("x", time.Now()), "w2"); !w.Live {
			return fmt.Errorf("w2 not live")
		}
		return nil
	})
	if n := g.unreadable.Load(); n != 1 {
		t.Fatalf("unreadable = %d, want 1", n)
	}
	if n := strings.Count(logs.String(), "registration does not parse"); n != 1 {
		t.Fatalf("logged %d times, want once:\n%s", n, logs.String())
	}
	if w, _ := viewWorker(g.view("x", time.Now()), "w2"); w.Capacity != 0 || w.Status(time.Now()) != placement.StateNone {
		t.Fatalf("unreadable w2 = %+v", w)
	}

	// Settings, then garbled settings: the last good ones stay.
	mustCreate(other, l.placement(), `{"strategy":"pack","wait_ms":1500}`, 0)
	zktest.WaitFor(t, "pack", func() error {
		if s := g.view("x", time.Now()).Settings; s.Strategy != placement.Pack || s.Wait != 1500*time.Millisecond {
			return fmt.Errorf("settings %+v", s)
		}
		return nil
	})
	if _, err := other.Set(l.placement(), []byte(`{"strategy":"fill"}`), -1); err != nil {
		t.Fatal(err)
	}
	zktest.WaitFor(t, "the garbled settings counted", func() error {
		if n := g.unreadable.Load(); n != 2 {
			return fmt.Errorf("unreadable = %d", n)
		}
		return nil
	})
	if s := g.view("x", time.Now()).Settings; s.Strategy != placement.Pack {
		t.Fatalf("settings after a garbled write: %+v", s)
	}

	// Quarantines: one long, one that ends soon and is signalled.
	mustCreate(other, l.quarantines(), ``, 0)
	mustCreate(other, l.quarantineAction("a"), `1`, 0)
	mustCreate(other, l.quarantine("a", "w1"), `{"until_ms_left":600000,"strikes":1}`, zk.FlagEphemeral)
	zktest.WaitFor(t, "w1 quarantined for a", func() error {
		w, _ := viewWorker(g.view("x", time.Now()), "w1")
		if !w.QuarantinedFor("a", time.Now()) || w.QuarantinedFor("b", time.Now()) {
			return fmt.Errorf("w1 quarantines %v", w.Quarantined)
		}
		return nil
	})
	mustCreate(other, l.quarantineAction("b"), `1`, 0)
	mustCreate(other, l.quarantine("b", "w2"), `{"until_ms_left":300,"strikes":0}`, zk.FlagEphemeral)
	zktest.WaitFor(t, "w2 quarantined for b", func() error {
		if w, _ := viewWorker(g.view("x", time.Now()), "w2"); len(w.Quarantined) == 0 {
			return fmt.Errorf("w2 quarantines %v", w.Quarantined)
		}
		return nil
	})
	// Its end wakes changed() though no node changes.
	deadline := time.After(zktest.Patience(t))
	for {
		w, _ := viewWorker(g.view("x", time.Now()), "w2")
		if !w.QuarantinedFor("b", time.Now()) {
			break
		}
		select {
		case <-g.changed():
		case <-deadline:
			t.Fatal("the quarantine's end was not signalled")
		}
	}

	// Deregistered: gone from the view.
	if err := other.Delete(l.live("w2"), -1); err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(l.worker("w2"), -1); err != nil {
		t.Fatal(err)
	}
	zktest.WaitFor(t, "w2 gone", func() error {
		if _, err := viewWorker(g.view("x", time.Now()), "w2"); err == nil {
			return fmt.Errorf("w2 still in the view")
		}
		return nil
	})
}

// TestRegistryGraceSignalled: a down worker's grace ending wakes
// changed(), on the registry's clock.
func TestRegistryGraceSignalled(t *testing.T) {
	srv := zktest.Start(t)
	st := openInternal(t, srv, nil)
	l := st.c.l
	if _, err := st.c.c.Create(l.worker("w1"), []byte(`{"state":"available","capacity":1,"grace_ms":200,"actions":["a"]}`), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	g := newRegistry(st.c, runner.RealClock(), nil, true)
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Patience(t))
	defer cancel()
	if err := g.start(ctx); err != nil {
		t.Fatal(err)
	}
	defer g.stop()
	w, err := viewWorker(g.view("x", time.Now()), "w1")
	if err != nil || w.Live || w.DownSince.IsZero() {
		t.Fatalf("w1 = %+v, %v: want down since the registry started", w, err)
	}
	for {
		w, _ := viewWorker(g.view("x", time.Now()), "w1")
		if w.GraceLeft(time.Now()) == 0 {
			break
		}
		select {
		case <-g.changed():
		case <-ctx.Done():
			t.Fatal("the grace's end was not signalled")
		}
	}
}
