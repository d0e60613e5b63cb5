package zk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// okHandlers are handlers that succeed at once.
func okHandlers(t testing.TB, names ...string) *runner.Registry {
	hs := map[string]runner.Handler{}
	for _, n := range names {
		hs[n] = func(context.Context, job.Action) ([]byte, error) { return nil, nil }
	}
	return registry(t, hs)
}

// registration reads a worker's registration as JSON fields.
func registration(t testing.TB, c *zk.Conn, root, name string) (map[string]any, int32, bool) {
	t.Helper()
	data, st, err := c.Get(root + "/workers/" + name)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("registration of %s: %v: %s", name, err, data)
	}
	return m, st.Version, true
}

// TestRegisterAndRestart: a worker registers in a persistent node with
// an ephemeral live child; stopped, its live node goes and its
// registration stays; started again under its name, it is the same
// worker (the registration's version moves on, its state is kept).
func TestRegisterAndRestart(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	o := zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "w1", Workers: 3, Registry: okHandlers(t, "a", "b")},
		Store: st, Limits: map[string]int{"a": 2}, Grace: 7 * time.Second}
	first := startRunner(t, o)
	poll(t, 10*time.Second, "w1 live", func() bool { ok, _, _ := c.Exists(st.Root() + "/workers/w1/live"); return ok })
	reg, v1, _ := registration(t, c, st.Root(), "w1")
	if reg["state"] != "available" || reg["capacity"] != 3.0 || reg["grace_ms"] != 7000.0 || fmt.Sprint(reg["actions"]) != "[a b]" || fmt.Sprint(reg["limits"]) != "map[a:2]" {
		t.Fatalf("registration %v", reg)
	}
	data, _, err := c.Get(st.Root() + "/workers/w1/live")
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if !strings.Contains(string(data), fmt.Sprintf(`"pid":%d`, os.Getpid())) || !strings.Contains(string(data), host) {
		t.Fatalf("live node %s: want this process's host and pid", data)
	}
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := c.Exists(st.Root() + "/workers/w1/live"); ok {
		t.Fatal("the live node outlived the worker's Run")
	}
	if _, _, ok := registration(t, c, st.Root(), "w1"); !ok {
		t.Fatal("the registration went with the process: a restart would not be the same worker")
	}
	ws, err := st.Workers(context.Background())
	if err != nil || len(ws) != 1 || ws[0].State != placement.StateDown || ws[0].Live || ws[0].GraceLeft <= 6*time.Second || ws[0].GraceLeft > 7*time.Second {
		t.Fatalf("Workers after the stop = %+v, %v: want w1 down with its grace", ws, err)
	}

	// A pin it held while down (as a claim wrote it) stays with it.
	mkNode(t, c, st.Root()+"/workers/w1/pins/00000000000000aa", ``, 0)

	startRunner(t, o)
	poll(t, 10*time.Second, "w1 live again", func() bool { ok, _, _ := c.Exists(st.Root() + "/workers/w1/live"); return ok })
	reg, v2, _ := registration(t, c, st.Root(), "w1")
	if v2 <= v1 || reg["state"] != "available" {
		t.Fatalf("registration after the restart: %v at version %d (was %d)", reg, v2, v1)
	}
	ws, err = st.Workers(context.Background())
	if err != nil || len(ws) != 1 || ws[0].State != placement.StateAvailable || ws[0].Pins != 1 {
		t.Fatalf("Workers after the restart = %+v, %v: want w1 available with its pin", ws, err)
	}
}

// TestRegisterNameTaken: a second live process under a taken name is
// refused, naming the host and pid of the live one; nothing of the first
// is changed.
func TestRegisterNameTaken(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "w1", Registry: okHandlers(t, "a")}, Store: st})
	poll(t, 10*time.Second, "w1 live", func() bool { ok, _, _ := c.Exists(st.Root() + "/workers/w1/live"); return ok })
	_, v1, _ := registration(t, c, st.Root(), "w1")

	other := openStore(t, srv, zkrunner.Config{Root: st.Root()})
	r, err := zkrunner.New(zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "w1", Registry: okHandlers(t, "a")}, Store: other})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Patience(t))
	defer cancel()
	err = r.Run(ctx)
	var taken *zkrunner.NameTakenError
	host, _ := os.Hostname()
	if !errors.Is(err, placement.ErrNameTaken) || !errors.As(err, &taken) || taken.PID != os.Getpid() || taken.Host != host ||
		!strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) || !strings.Contains(err.Error(), host) {
		t.Fatalf("second Run = %v; want a NameTakenError naming host %s and pid %d", err, host, os.Getpid())
	}
	if _, v2, _ := registration(t, c, st.Root(), "w1"); v2 != v1 {
		t.Fatalf("the refused process changed the registration (version %d -> %d)", v1, v2)
	}
	if ok, _, _ := c.Exists(st.Root() + "/workers/w1/live"); !ok {
		t.Fatal("the first worker's live node is gone")
	}
}

// TestRegisterBadOptions: the placement options are checked by New,
// each error naming what is wrong.
func TestRegisterBadOptions(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	for _, tc := range []struct {
		name string
		o    zkrunner.Options
		want string
	}{
		{"slash", zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "a/b", Registry: okHandlers(t, "a")}}, `"a/b"`},
		{"negative capacity", zkrunner.Options{WorkerOptions: runner.WorkerOptions{Workers: -1, Registry: okHandlers(t, "a")}}, "Workers is -1"},
		{"limit without handler", zkrunner.Options{WorkerOptions: runner.WorkerOptions{Registry: okHandlers(t, "a", "b")}, Limits: map[string]int{"c": 1}}, `no handler for action "c" here (it has: a, b)`},
		{"limit over capacity", zkrunner.Options{WorkerOptions: runner.WorkerOptions{Workers: 2, Registry: okHandlers(t, "a")}, Limits: map[string]int{"a": 3}}, "limit a=3: want 1 to the capacity (2)"},
		{"limit zero", zkrunner.Options{WorkerOptions: runner.WorkerOptions{Workers: 2, Registry: okHandlers(t, "a")}, Limits: map[string]int{"a": 0}}, "limit a=0"},
		{"limit without registry", zkrunner.Options{Limits: map[string]int{"a": 1}}, "no handlers"},
		{"negative grace", zkrunner.Options{WorkerOptions: runner.WorkerOptions{Registry: okHandlers(t, "a")}, Grace: -time.Second}, "Grace is -1s"},
	} {
		tc.o.Store = st
		_, err := zkrunner.New(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestLoadPublished: the live node carries the worker's load (running in
// total and per name, successes and failures per name), written only when
// it changed and at most once a second.
func TestLoadPublished(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	release := make(chan struct{})
	var once sync.Once
	reg := registry(t, map[string]runner.Handler{
		"quick": func(context.Context, job.Action) ([]byte, error) { return nil, nil },
		"bad":   func(context.Context, job.Action) ([]byte, error) { return nil, errors.New("no") },
		"hold": func(ctx context.Context, a job.Action) ([]byte, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, nil
		},
	})
	defer once.Do(func() { close(release) })
	startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "w1", Workers: 4, Registry: reg}, Store: st})
	live := st.Root() + "/workers/w1/live"
	poll(t, 10*time.Second, "w1 live", func() bool { ok, _, _ := c.Exists(live); return ok })
	sub := submitter(t, st)
	begin := time.Now()
	_, st0, err := c.Get(live)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// 40 quick actions, 2 failing ones (not retried), and one held.
	for i := range 40 {
		if err := sub.Submit(ctx, job.ID(fmt.Sprintf("q%d", i)), ast.Act("quick", nil)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		if err := sub.Submit(ctx, job.ID(fmt.Sprintf("b%d", i)), ast.Act("bad", nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sub.Submit(ctx, "h", ast.Act("hold", nil)); err != nil {
		t.Fatal(err)
	}
	type nl struct{ Running, Succeeded, Failed int }
	var load struct {
		Load struct {
			Running int
			Names   map[string]nl
		}
	}
	read := func() int32 {
		data, s, err := c.Get(live)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &load); err != nil {
			t.Fatalf("live node %s: %v", data, err)
		}
		return s.Version
	}
	poll(t, 20*time.Second, "the load published", func() bool {
		read()
		n := load.Load.Names
		return load.Load.Running == 1 && n["hold"].Running == 1 && n["quick"].Succeeded == 40 && n["bad"].Failed >= 1
	})
	writes := read() - st0.Version
	elapsed := time.Since(begin)
	if limit := int32(elapsed/time.Second) + 1; writes > limit {
		t.Fatalf("%d writes of the live node in %v: more than one a second", writes, elapsed)
	}
	// Idle and unchanged: no write.
	v := read()
	time.Sleep(1500 * time.Millisecond)
	if v2 := read(); v2 != v {
		t.Fatalf("the live node was written (version %d -> %d) while the load did not change", v, v2)
	}
	once.Do(func() { close(release) })
	poll(t, 10*time.Second, "nothing running", func() bool { read(); return load.Load.Running == 0 && load.Load.Names["hold"].Succeeded == 1 })
}

// TestGarbledRegistration: a registration garbled by hand is logged once
// and counted by every worker, listed as unreadable, and the others go
// on; draining it (its worker is down) removes it.
func TestGarbledRegistration(t *testing.T) {
	srv := zktest.Start(t)
	var logs logBuf
	st := openStore(t, srv, zkrunner.Config{})
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	w1 := startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "w1", Registry: okHandlers(t, "a"), Logger: logs.logger()}, Store: st})
	mkNode(t, c, st.Root()+"/workers/w2", `{"state":"draining","capacity":"lots"}`, 0)
	poll(t, 10*time.Second, "w1 counts the garbled node", func() bool { return w1.Stats().Unreadable == 1 })
	// Other changes to the registry do not count or log it again.
	if _, err := st.UpdateSettings(context.Background(), func(s *placement.Settings) error { s.Strategy = placement.Pack; return nil }); err != nil {
		t.Fatal(err)
	}
	sub := submitter(t, st)
	if err := sub.Submit(context.Background(), "j", ast.Act("a", nil)); err != nil {
		t.Fatal(err)
	}
	waitJob(t, sub, "j", 20*time.Second)
	if n := w1.Stats().Unreadable; n != 1 {
		t.Fatalf("Unreadable = %d, want 1", n)
	}
	if n := logs.count("registration does not parse", "workers/w2"); n != 1 {
		t.Fatalf("logged %d times, want once:\n%s", n, logs.String())
	}
	ws, err := st.Workers(context.Background())
	if err != nil || len(ws) != 2 || ws[1].Name != "w2" || !ws[1].Unreadable || ws[1].State != placement.StateNone {
		t.Fatalf("Workers = %+v, %v: want w2 unreadable", ws, err)
	}
	res, err := st.Drain(context.Background(), "w2", zkrunner.DrainOptions{})
	if err != nil || !res.Removed {
		t.Fatalf("Drain of the unreadable, down w2 = %+v, %v: want it removed", res, err)
	}
}
