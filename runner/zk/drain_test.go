package zk_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
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

// mkNode creates p with data, failing the test otherwise.
func mkNode(t testing.TB, c *zk.Conn, p, data string, flags int32) {
	t.Helper()
	if _, err := c.Create(p, []byte(data), flags, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
}

// TestDrainLiveWorker: a drained worker finishes what it runs, claims
// nothing new from when it sees the drain, deletes its registration and
// its Run returns nil, reporting what it finished; the other worker runs
// the rest.
func TestDrainLiveWorker(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	var mu sync.Mutex
	ranOn := map[string][]time.Time{} // worker -> when each action started there
	release := make(chan struct{})
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) })
	handlers := func(name string) *runner.Registry {
		return registry(t, map[string]runner.Handler{"work": func(ctx context.Context, a job.Action) ([]byte, error) {
			mu.Lock()
			ranOn[name] = append(ranOn[name], time.Now())
			mu.Unlock()
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, nil
		}})
	}
	w1 := startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "w1", Workers: 2, Registry: handlers("w1")}, Store: st})
	sub := submitter(t, st)
	ctx := context.Background()
	for i := range 2 {
		if err := sub.Submit(ctx, job.ID(fmt.Sprintf("j%d", i)), ast.Seq(ast.Act("work", nil), ast.Act("work", nil))); err != nil {
			t.Fatal(err)
		}
	}
	poll(t, 10*time.Second, "w1 runs 2", func() bool { mu.Lock(); defer mu.Unlock(); return len(ranOn["w1"]) == 2 })

	// Alone, w1 may not be drained without force.
	_, err := st.Drain(ctx, "w1", zkrunner.DrainOptions{})
	var last *zkrunner.LastWorkerError
	if !errors.As(err, &last) || !errors.Is(err, zkrunner.ErrLastWorker) || fmt.Sprint(last.Actions) != "[work]" {
		t.Fatalf("Drain of the only worker = %v, want a LastWorkerError for [work]", err)
	}
	startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "w2", Workers: 4, Registry: handlers("w2")}, Store: st})
	poll(t, 10*time.Second, "w2 live", func() bool { ok, _, _ := c.Exists(st.Root() + "/workers/w2/live"); return ok })
	if _, err := st.Drain(ctx, "w1", zkrunner.DrainOptions{}); err != nil {
		t.Fatal(err)
	}
	ws, err := st.Workers(ctx)
	if err != nil || len(ws) != 2 || ws[0].State != placement.StateDraining {
		t.Fatalf("Workers = %+v, %v: want w1 draining", ws, err)
	}
	// w1 sees its drain (its registry), then its running actions end.
	poll(t, 10*time.Second, "w1 sees the drain", func() bool {
		v, _ := st.Workers(ctx)
		return len(v) > 0 && v[0].Name == "w1" && v[0].State == placement.StateDraining
	})
	time.Sleep(200 * time.Millisecond) // the watch reaches w1 (about 20 ms)
	drainSeen := time.Now()
	releaseOnce.Do(func() { close(release) })
	select {
	case err := <-w1.done:
		w1.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("w1's Run = %v", err)
		}
	case <-time.After(zktest.Patience(t)):
		t.Fatal("the drained worker did not stop")
	}
	rep, ok := w1.Drained()
	if !ok || rep.Finished != 2 {
		t.Fatalf("Drained = %+v, %v: want 2 finished", rep, ok)
	}
	if _, _, ok := registration(t, c, st.Root(), "w1"); ok {
		t.Fatal("the drained worker's registration is still there")
	}
	for i := range 2 {
		waitJob(t, sub, job.ID(fmt.Sprintf("j%d", i)), 20*time.Second)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ranOn["w1"]) != 2 || len(ranOn["w2"]) != 2 {
		t.Fatalf("actions ran w1 %d, w2 %d: want the 2 second steps on w2", len(ranOn["w1"]), len(ranOn["w2"]))
	}
	for _, at := range ranOn["w1"] {
		if at.After(drainSeen) {
			t.Fatalf("w1 started an action at %v, after its drain", at)
		}
	}
}

// TestDrainUnknownWorker: draining or undraining a name that is not
// registered lists the known ones.
func TestDrainUnknownWorker(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	mkNode(t, c, st.Root()+"/workers/b", `{"state":"available","capacity":1,"grace_ms":1000,"actions":["a"]}`, 0)
	mkNode(t, c, st.Root()+"/workers/a", `{"state":"available","capacity":1,"grace_ms":1000,"actions":["a"]}`, 0)
	ctx := context.Background()
	_, err := st.Drain(ctx, "nobody", zkrunner.DrainOptions{})
	var unk *zkrunner.UnknownWorkerError
	if !errors.As(err, &unk) || !errors.Is(err, placement.ErrUnknownWorker) || fmt.Sprint(unk.Known) != "[a b]" || !strings.Contains(err.Error(), "a, b") {
		t.Fatalf("Drain(nobody) = %v, want an UnknownWorkerError listing a, b", err)
	}
	if _, err := st.Undrain(ctx, "nobody"); !errors.As(err, &unk) {
		t.Fatalf("Undrain(nobody) = %v, want an UnknownWorkerError", err)
	}
}

// TestDrainDownWorker: draining a worker that is down removes it at once
// and releases its pins: the allocations that still name it are deleted,
// one that moved to another worker is left.
func TestDrainDownWorker(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	root := st.Root()
	mkNode(t, c, root+"/workers/w1", `{"state":"available","capacity":2,"grace_ms":30000,"actions":["a"]}`, 0)
	mkNode(t, c, root+"/workers/w1/pins", ``, 0)
	mkNode(t, c, root+"/alloc", ``, 0)
	for _, p := range []struct{ id, worker string }{{"00000000000000aa", "w1"}, {"01000000000000bb", "w2"}} {
		mkNode(t, c, root+"/workers/w1/pins/"+p.id, ``, 0)
		if _, err := c.Create(root+"/alloc/"+p.id[:2], nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
		mkNode(t, c, root+"/alloc/"+p.id[:2]+"/"+p.id, fmt.Sprintf(`{"key":"k","worker":%q,"job":"j","since":"2026-01-01T00:00:00Z"}`, p.worker), 0)
	}
	res, err := st.Drain(context.Background(), "w1", zkrunner.DrainOptions{})
	if err != nil || !res.Removed || res.PinsReleased != 1 {
		t.Fatalf("Drain of a down worker = %+v, %v: want it removed, 1 pin released", res, err)
	}
	if ok, _, _ := c.Exists(root + "/workers/w1"); ok {
		t.Fatal("its registration is still there")
	}
	if ok, _, _ := c.Exists(root + "/alloc/00/00000000000000aa"); ok {
		t.Fatal("its pin's allocation is still there")
	}
	if ok, _, _ := c.Exists(root + "/alloc/01/01000000000000bb"); !ok {
		t.Fatal("another worker's allocation was deleted")
	}
}

// TestUndrain: undrain makes a draining worker available again and lifts
// its quarantines (each count lowered with it); others' stay.
func TestUndrain(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	root := st.Root()
	mkNode(t, c, root+"/workers/w1", `{"state":"draining","capacity":2,"grace_ms":30000,"actions":["a","b"],"drain_timeout_ms":5000}`, 0)
	mkNode(t, c, root+"/workers/w2", `{"state":"available","capacity":2,"grace_ms":30000,"actions":["a"]}`, 0)
	mkNode(t, c, root+"/quarantine", ``, 0)
	mkNode(t, c, root+"/quarantine/a", `2`, 0)
	mkNode(t, c, root+"/quarantine/a/w1", `{"until_ms_left":60000,"strikes":1}`, zk.FlagEphemeral)
	mkNode(t, c, root+"/quarantine/a/w2", `{"until_ms_left":60000,"strikes":1}`, zk.FlagEphemeral)
	lifted, err := st.Undrain(context.Background(), "w1")
	if err != nil || lifted != 1 {
		t.Fatalf("Undrain = %d, %v; want 1 quarantine lifted", lifted, err)
	}
	reg, _, _ := registration(t, c, root, "w1")
	if reg["state"] != "available" || reg["drain_timeout_ms"] != nil {
		t.Fatalf("registration after undrain: %v", reg)
	}
	if ok, _, _ := c.Exists(root + "/quarantine/a/w1"); ok {
		t.Fatal("w1's quarantine is still there")
	}
	if ok, _, _ := c.Exists(root + "/quarantine/a/w2"); !ok {
		t.Fatal("w2's quarantine was lifted too")
	}
	if data, _, _ := c.Get(root + "/quarantine/a"); string(data) != "1" {
		t.Fatalf("the count is %q, want 1", data)
	}
}

// TestDrainTimeoutReleasesPins: a draining worker that holds a pin
// releases it at the drain's timeout (measured on its own clock from when
// it saw the drain), then, running nothing, deregisters.
func TestDrainTimeoutReleasesPins(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	root := st.Root()
	w1 := startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "w1", Registry: okHandlers(t, "a")}, Store: st})
	poll(t, 10*time.Second, "w1 live", func() bool { ok, _, _ := c.Exists(root + "/workers/w1/live"); return ok })
	// A pin it holds, as a claim would have written it.
	mkNode(t, c, root+"/alloc", ``, 0)
	mkNode(t, c, root+"/alloc/ab", ``, 0)
	mkNode(t, c, root+"/alloc/ab/ab000000000000cc", `{"key":"k","worker":"w1","job":"j","since":"2026-01-01T00:00:00Z"}`, 0)
	mkNode(t, c, root+"/workers/w1/pins/ab000000000000cc", ``, 0)

	var drainedAt atomic.Int64
	if _, err := st.Drain(context.Background(), "w1", zkrunner.DrainOptions{Force: true, Timeout: 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	drainedAt.Store(time.Now().UnixNano())
	// Holding a pin, it stays registered until the timeout.
	time.Sleep(100 * time.Millisecond)
	if ok, _, _ := c.Exists(root + "/workers/w1"); !ok {
		t.Fatal("w1 deregistered while it held a pin, before its drain's timeout")
	}
	select {
	case err := <-w1.done:
		w1.done <- err
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(zktest.Patience(t)):
		t.Fatal("w1 did not stop after its drain's timeout")
	}
	if took := time.Duration(time.Now().UnixNano() - drainedAt.Load()); took < 500*time.Millisecond {
		t.Fatalf("w1 deregistered %v after the drain, before its 500ms timeout", took)
	}
	rep, ok := w1.Drained()
	if !ok || rep.PinsReleased != 1 {
		t.Fatalf("Drained = %+v, %v: want 1 pin released", rep, ok)
	}
	if ok, _, _ := c.Exists(root + "/alloc/ab/ab000000000000cc"); ok {
		t.Fatal("the pin's allocation is still there")
	}
}
