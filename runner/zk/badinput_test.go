package zk_test

// Bad input: each case gives a clear error or log line, and the worker
// goes on serving other jobs.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// badEnv is a root with one worker ("w": handlers ok, echo, hold, big)
// and a submitter.
type badEnv struct {
	srv    *zktest.Server
	root   string
	logs   *logBuf
	subSt  *zkrunner.Store
	sub    *zkrunner.Runner
	held   chan job.Action // hold started
	cause  chan error      // why hold's context ended
	bigRun atomic.Int64    // runs of big
	good   atomic.Int64
}

func newBadEnv(t *testing.T, srv *zktest.Server) *badEnv {
	e := &badEnv{srv: srv, root: freshRoot(srv.Root()), logs: &logBuf{}, held: make(chan job.Action, 8), cause: make(chan error, 8)}
	reg := registry(t, map[string]runner.Handler{
		"ok": func(ctx context.Context, a job.Action) ([]byte, error) { return []byte(`"ok"`), nil },
		"echo": func(ctx context.Context, a job.Action) ([]byte, error) {
			return fmt.Appendf(nil, `{"len":%d}`, len(a.Payload)), nil
		},
		"hold": func(ctx context.Context, a job.Action) ([]byte, error) {
			e.held <- a
			<-ctx.Done()
			e.cause <- context.Cause(ctx)
			return nil, ctx.Err()
		},
		"big": func(ctx context.Context, a job.Action) ([]byte, error) {
			e.bigRun.Add(1)
			var n int
			if err := json.Unmarshal(a.Payload, &n); err != nil {
				return nil, err
			}
			out := make([]byte, n)
			for i := range out {
				out[i] = 'x'
			}
			out[0], out[n-1] = '"', '"'
			return out, nil
		},
	})
	st := openOn(t, srv.Addrs(), e.root, zkrunner.Config{Logger: e.logs.logger()})
	startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "w", Registry: reg, Logger: e.logs.logger()}, Store: st})
	e.subSt = openOn(t, srv.Addrs(), e.root, zkrunner.Config{})
	e.sub = submitter(t, e.subSt)
	t.Cleanup(func() {
		if t.Failed() {
			lines := strings.Split(strings.TrimSpace(e.logs.String()), "\n")
			t.Logf("worker log (%d lines, the last 40):\n%s", len(lines), strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	})
	return e
}

// goodJob runs a job of two ok actions to success: the worker serves.
func (e *badEnv) goodJob(t *testing.T) {
	t.Helper()
	id := job.ID(fmt.Sprintf("good%d", e.good.Add(1)))
	if err := e.sub.Submit(context.Background(), id, ast.Seq(ast.Act("ok", 1), ast.Act("ok", 2))); err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, e.sub, id, 20*time.Second); j.Status() != job.StatusSucceeded {
		t.Fatalf("good job %s ended %s", id, j.Status())
	}
}

// queue lists the queue's entries.
func (e *badEnv) queue(t *testing.T, c *zk.Conn) []string {
	t.Helper()
	names, _, err := c.Children(e.root + "/queue")
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestBadInput(t *testing.T) {
	srv := zktest.Start(t)

	// A payload over ZooKeeper's 1 MB node limit: no limit applies to
	// payloads; the job's snapshot is written in chunks (512 KiB), the
	// action gets it whole, and a store with an empty cache loads it.
	t.Run("PayloadOf2MB", func(t *testing.T) {
		e := newBadEnv(t, srv)
		big := strings.Repeat("p", 2<<20)
		const id = job.ID("payload")
		if err := e.sub.Submit(context.Background(), id, ast.Seq(ast.Act("echo", big), ast.Act("ok", nil))); err != nil {
			t.Fatalf("submit of a 2 MB payload: %v", err)
		}
		final := waitJob(t, e.sub, id, 30*time.Second)
		if final.Status() != job.StatusSucceeded {
			t.Fatalf("job ended %s:\n%s", final.Status(), job.Describe(final))
		}
		h := checkHistory(t, openOn(t, srv.Addrs(), e.root, zkrunner.Config{}), final)
		if r, n := resultOf(h, "seq[0]"); n != 1 || string(r.Output) != fmt.Sprintf(`{"len":%d}`, len(big)+2) {
			t.Errorf("echo: %d results, output %s; want the payload's length %d", n, r.Output, len(big)+2)
		}
		e.goodJob(t)
	})

	// Bad queue nodes written by hand: a name baton does not write, and a
	// good name with garbage data. The worker says so, once each, leaves
	// them alone, and runs other jobs.
	t.Run("MalformedQueueNodes", func(t *testing.T) {
		e := newBadEnv(t, srv)
		c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
		badName := "junk-entry"
		badData := "a-10000-0000000000001-5-ghost-seq[0]#1"
		acl := zk.WorldACL(zk.PermAll)
		for name, data := range map[string]string{badName: `{"job":"x"}`, badData: "garbage{"} {
			if _, err := c.Create(e.root+"/queue/"+name, []byte(data), 0, acl); err != nil {
				t.Fatal(err)
			}
		}
		poll(t, 20*time.Second, "the worker logs both bad entries", func() bool {
			return e.logs.count("queue entry with a malformed name", badName) == 1 && e.logs.count("queue entry with malformed data", badData, "garbage{") == 1
		})
		e.goodJob(t)
		e.goodJob(t)
		if q := e.queue(t, c); !slices.Contains(q, badName) || !slices.Contains(q, badData) {
			t.Errorf("queue %v: the bad entries were not left alone", q)
		}
		if n, m := e.logs.count("malformed name"), e.logs.count("malformed data"); n != 1 || m != 1 {
			t.Errorf("the bad entries were logged %d and %d times, want once each", n, m)
		}
		for _, l := range e.logs.lines("malformed") {
			t.Log(l[strings.Index(l, "level="):])
		}
	})

	// The job of an action that runs is deleted: the worker's watch on the
	// job's node stops the handler (cause runner.ErrStopped) and drops its
	// queue entry and claim. A job deleted while its entry waits: the
	// worker that claims the entry finds the job gone and deletes it,
	// without running anything.
	t.Run("JobDeletedUnderWorker", func(t *testing.T) {
		e := newBadEnv(t, srv)
		c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
		ctx := context.Background()
		const doomed = job.ID("doomed")
		if err := e.sub.Submit(ctx, doomed, ast.Seq(ast.Act("hold", nil), ast.Act("ok", nil))); err != nil {
			t.Fatal(err)
		}
		select {
		case <-e.held:
		case <-time.After(zktest.Patience(t)):
			t.Fatal("hold did not start")
		}
		if err := e.subSt.Delete(ctx, doomed); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-e.cause:
			if !errors.Is(err, runner.ErrStopped) {
				t.Errorf("hold's context ended with %v, want %v", err, runner.ErrStopped)
			}
		case <-time.After(zktest.Patience(t)):
			t.Fatalf("hold was not stopped within %v of its job's deletion", zktest.Patience(t))
		}
		poll(t, 20*time.Second, "the deleted job's entry and claim are gone", func() bool {
			ws, err := e.subSt.Workers(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range ws {
				if len(w.Running) > 0 {
					return false
				}
			}
			return !slices.ContainsFunc(e.queue(t, c), func(n string) bool { return strings.Contains(n, "-doomed-") })
		})
		e.goodJob(t)

		// Deleted while its entry waits for a worker with a handler.
		const gone = job.ID("gone")
		if err := e.sub.Submit(ctx, gone, ast.Act("later", nil)); err != nil {
			t.Fatal(err)
		}
		poll(t, 20*time.Second, "w leaves later alone", func() bool { return e.logs.count("no handler here", "name=later") == 1 })
		if err := e.subSt.Delete(ctx, gone); err != nil {
			t.Fatal(err)
		}
		// Delete removed its entry: no worker needs to find it.
		if slices.ContainsFunc(e.queue(t, c), func(n string) bool { return strings.Contains(n, "-gone-") }) {
			t.Errorf("the deleted job's entry is still queued: %v", e.queue(t, c))
		}
		var ran atomic.Int64
		lateLogs := &logBuf{}
		startRunner(t, zkrunner.Options{
			WorkerOptions: runner.WorkerOptions{Name: "late", Logger: lateLogs.logger(), Registry: registry(t, map[string]runner.Handler{"later": func(ctx context.Context, a job.Action) ([]byte, error) {
				ran.Add(1)
				return nil, nil
			}})},
			Store: openOn(t, srv.Addrs(), e.root, zkrunner.Config{}),
		})
		e.goodJob(t)
		if n := lateLogs.count("job=gone"); n != 0 {
			t.Errorf("the late worker saw the deleted job %d times:\n%s", n, lateLogs)
		}
		if ran.Load() != 0 {
			t.Errorf("later ran %d times for a deleted job", ran.Load())
		}
		e.goodJob(t)
	})

	// An action no worker has a handler for: a runner with a registry
	// refuses the workflow; one without (baton submit) stores it, and the
	// job waits: its entry stays in the queue unclaimed, the worker says
	// once that it has no handler, the job stays running with the action
	// outstanding, until a worker with the handler comes.
	t.Run("NoHandlerAnywhere", func(t *testing.T) {
		e := newBadEnv(t, srv)
		c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
		ctx := context.Background()
		withReg, err := zkrunner.New(zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "checked", Registry: registry(t, map[string]runner.Handler{"ok": func(context.Context, job.Action) ([]byte, error) { return nil, nil }})}, Store: e.subSt})
		if err != nil {
			t.Fatal(err)
		}
		err = withReg.Submit(ctx, "refused", ast.Act("nobody", nil))
		if !errors.Is(err, runner.ErrUnknownActions) || !strings.Contains(err.Error(), `"nobody"`) {
			t.Errorf("submit of an unknown action with a registry: %v; want %v naming it", err, runner.ErrUnknownActions)
		}
		const orphan = job.ID("orphan")
		if err := e.sub.Submit(ctx, orphan, ast.Seq(ast.Act("nobody", nil), ast.Act("ok", nil))); err != nil {
			t.Fatal(err)
		}
		poll(t, 20*time.Second, "w says it has no handler for nobody", func() bool { return e.logs.count("no handler here", "name=nobody") == 1 })
		e.goodJob(t)
		j, err := e.sub.Status(ctx, orphan)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status() != job.StatusRunning || len(j.Outstanding()) != 1 || j.Outstanding()[0].Name != "nobody" {
			t.Errorf("orphan is %s with %v outstanding; want running, waiting for nobody", j.Status(), j.Outstanding())
		}
		if !slices.ContainsFunc(e.queue(t, c), func(n string) bool { return strings.Contains(n, "-orphan-") }) {
			t.Errorf("orphan's entry is not in the queue")
		}
		ws, err := e.subSt.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if len(w.Running) > 0 || slices.Contains(w.Actions, "nobody") {
				t.Errorf("worker %s: runs %v, handles %v; want no claim, no handler for nobody", w.Name, w.Running, w.Actions)
			}
		}
		if n := e.logs.count("no handler here", "name=nobody"); n != 1 {
			t.Errorf("w said %d times that it has no handler for nobody, want once", n)
		}
		startRunner(t, zkrunner.Options{
			WorkerOptions: runner.WorkerOptions{Name: "somebody", Registry: registry(t, map[string]runner.Handler{"nobody": func(context.Context, job.Action) ([]byte, error) { return []byte(`"at last"`), nil }})},
			Store:         openOn(t, srv.Addrs(), e.root, zkrunner.Config{}),
		})
		if final := waitJob(t, e.sub, orphan, 20*time.Second); final.Status() != job.StatusSucceeded {
			t.Errorf("orphan ended %s once a worker with the handler came", final.Status())
		} else {
			checkHistory(t, e.subSt, final)
		}
	})
}
