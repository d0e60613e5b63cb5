//go:build linux

package zk_test

// Workers in processes of their own: the test binary, run again with
// BATON_ZK_TEST_WORKER set, is a worker (workerProcess), which a test
// SIGKILLs, or SIGSTOPs past its session timeout and continues.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// TestMain is also the worker process of the process tests: with
// BATON_ZK_TEST_WORKER=addr,root set it runs a worker and exits.
func TestMain(m *testing.M) {
	if spec := os.Getenv("BATON_ZK_TEST_WORKER"); spec != "" {
		os.Exit(workerProcess(spec))
	}
	os.Exit(m.Run())
}

// lockedWriter writes whole lines from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// workerProcess runs a worker on the server and root of spec
// ("addr,root") with the handler "slow": it prints "started JOB ACTION",
// then waits until the file BATON_ZK_TEST_MARKER exists (and returns the
// output "process") or its context ends. Its logs go to stdout. SIGTERM
// stops it (exit 0 once Run returned nil); it stops by itself after two
// minutes.
func workerProcess(spec string) int {
	addr, root, ok := strings.Cut(spec, ",")
	if !ok {
		fmt.Println("BATON_ZK_TEST_WORKER: want addr,root")
		return 2
	}
	session, err := time.ParseDuration(os.Getenv("BATON_ZK_TEST_SESSION"))
	if err != nil {
		session = 2 * time.Second
	}
	lease, _ := time.ParseDuration(os.Getenv("BATON_ZK_TEST_LEASE")) // 0 (the default) when unset
	marker := os.Getenv("BATON_ZK_TEST_MARKER")
	out := &lockedWriter{w: os.Stdout}
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	st, err := zkrunner.Open(ctx, zkrunner.Config{Servers: []string{addr}, Root: root, SessionTimeout: session, Logger: log})
	if err != nil {
		say("open: %v", err)
		return 1
	}
	defer st.Close()
	reg := runner.NewRegistry()
	_ = reg.Register("slow", func(ctx context.Context, a job.Action) ([]byte, error) {
		say("started %s %s", a.JobID, a.ID)
		for {
			if marker != "" {
				if _, err := os.Stat(marker); err == nil {
					say("finished %s %s", a.JobID, a.ID)
					return []byte(`"process"`), nil
				}
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	r, err := zkrunner.New(zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: os.Getenv("BATON_ZK_TEST_NAME"), Registry: reg, Workers: 8, Logger: log, DrainTimeout: 3 * time.Second}, Store: st, ClaimLease: lease})
	if err != nil {
		say("new: %v", err)
		return 1
	}
	err = r.Run(ctx)
	say("stopped %v", err)
	if err != nil {
		return 1
	}
	return 0
}

// proc is a worker process and what it printed.
type proc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	lines  []string
	exited chan struct{}
}

// startWorkerProcess starts a worker process named name on srv's root
// root; marker is the file its handler waits for ("" for none); env
// overrides its environment ("BATON_ZK_TEST_SESSION=20s",
// "BATON_ZK_TEST_LEASE=3s"). It is killed, if it still runs, when t ends,
// and its output is shown if t failed.
func startWorkerProcess(t *testing.T, srv *zktest.Server, root, name, marker string, env ...string) *proc {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		"BATON_ZK_TEST_WORKER="+srv.Addr()+","+root,
		"BATON_ZK_TEST_SESSION=2s",
		"BATON_ZK_TEST_MARKER="+marker,
		"BATON_ZK_TEST_NAME="+name)
	cmd.Env = append(cmd.Env, env...) // the last of a key wins
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
		}
	}()
	go func() {
		_ = cmd.Wait()
		<-read
		pr.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL) // its own PID: not reaped until Wait returns
			select {
			case <-p.exited:
			case <-time.After(zktest.Patience(t)):
				t.Errorf("worker process %d did not exit within %v of SIGKILL", cmd.Process.Pid, zktest.Patience(t))
			}
		}
		if t.Failed() {
			p.mu.Lock()
			t.Logf("output of worker process %s (pid %d):\n%s", name, cmd.Process.Pid, strings.Join(p.lines, "\n"))
			p.mu.Unlock()
		}
	})
	return p
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// matching returns the lines holding every one of subs.
func (p *proc) matching(subs ...string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.lines {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

// signal sends sig to the process (by its PID; it has not been reaped).
func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	select {
	case <-p.exited:
		t.Fatalf("worker process %d exited before %v", p.pid(), sig)
	default:
	}
	if err := syscall.Kill(p.pid(), sig); err != nil {
		t.Fatalf("%v to worker process %d: %v", sig, p.pid(), err)
	}
}

// waitExit waits until the process exited and returns its exit code (-1
// for a signal).
func (p *proc) waitExit(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(timeout):
		t.Fatalf("worker process %d did not exit within %v", p.pid(), timeout)
	}
	return p.cmd.ProcessState.ExitCode()
}

// TestWorkerProcessKilledMidAction: a worker process claims the "slow"
// actions of three jobs and is SIGKILLed while it runs them. Its claims go
// with its session; the worker of the test process, already running and
// waiting, takes each action and runs it again (only after the kill), and
// every job completes with each step once.
func TestWorkerProcessKilledMidAction(t *testing.T) {
	srv := zktest.Start(t)
	root := freshRoot(srv.Root())
	p := startWorkerProcess(t, srv, root, "proc", "")
	subSt := openOn(t, srv.Addrs(), root, zkrunner.Config{})
	sub := submitter(t, subSt)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	var ids []job.ID
	for i := range 3 {
		id := job.ID(fmt.Sprintf("k%d", i))
		if err := sub.Submit(ctx, id, ast.Seq(ast.Act("slow", i), ast.Act("quick", i))); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	poll(t, 30*time.Second, "the worker process started the three slow actions", func() bool { return len(p.matching("started ")) == 3 })
	ws, err := subSt.Workers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ws, func(w zkrunner.WorkerInfo) bool { return w.Name == "proc" })
	if i < 0 || ws[i].PID != p.pid() || len(ws[i].Running) != 3 {
		t.Fatalf("workers %+v: want proc (pid %d) holding 3 claims", ws, p.pid())
	}

	var mu sync.Mutex
	ranAt := map[job.ID][]time.Time{}
	local := registry(t, map[string]runner.Handler{
		"slow": func(ctx context.Context, a job.Action) ([]byte, error) {
			mu.Lock()
			ranAt[a.JobID] = append(ranAt[a.JobID], time.Now())
			mu.Unlock()
			return []byte(`"local"`), nil
		},
		"quick": func(ctx context.Context, a job.Action) ([]byte, error) { return []byte(`"quick"`), nil },
	})
	startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "local", Registry: local}, Store: openOn(t, srv.Addrs(), root, zkrunner.Config{})})

	killed := time.Now()
	p.signal(t, syscall.SIGKILL)
	if code := p.waitExit(t, 10*time.Second); code != -1 {
		t.Errorf("the killed worker process exited with %d", code)
	}
	for _, id := range ids {
		final := waitJob(t, sub, id, 30*time.Second)
		if final.Status() != job.StatusSucceeded {
			t.Fatalf("job %s ended %s:\n%s", id, final.Status(), job.Describe(final))
		}
		h := checkHistory(t, subSt, final)
		if r, n := resultOf(h, "seq[0]"); n != 1 || string(r.Output) != `"local"` {
			t.Errorf("job %s: slow applied %d times, last output %s; want once, from the local worker", id, n, r.Output)
		}
		if _, n := resultOf(h, "seq[1]"); n != 1 {
			t.Errorf("job %s: quick applied %d times, want once", id, n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var first time.Time
	for _, id := range ids {
		if len(ranAt[id]) != 1 {
			t.Errorf("job %s: the local worker ran slow %d times, want once", id, len(ranAt[id]))
		}
		for _, at := range ranAt[id] {
			if at.Before(killed) {
				t.Errorf("job %s: the local worker ran slow before the kill, while the process held its claim", id)
			}
			if first.IsZero() || at.Before(first) {
				first = at
			}
		}
	}
	t.Logf("worker process %d SIGKILLed holding 3 claims; the local worker took the first %v later (session 2 s), all 3 jobs done", p.pid(), first.Sub(killed).Round(time.Millisecond))
}

// TestWorkerProcessStoppedPastSession: a worker process is SIGSTOPped
// while it runs an action, past its 2 s session timeout. Its session
// expires and the test's worker takes the action over. The process is then
// continued and its handler finishes: the process abandons its late result
// ("result abandoned"), which changes nothing (the job's version and
// history stay as they were); the test's worker's result is the one
// applied; Load and the history agree; SIGTERM stops the process cleanly.
func TestWorkerProcessStoppedPastSession(t *testing.T) {
	srv := zktest.Start(t)
	root := freshRoot(srv.Root())
	marker := filepath.Join(t.TempDir(), "release")
	p := startWorkerProcess(t, srv, root, "proc", marker)
	subSt := openOn(t, srv.Addrs(), root, zkrunner.Config{})
	sub := submitter(t, subSt)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	const id = job.ID("stopped")
	if err := sub.Submit(ctx, id, ast.Seq(ast.Act("slow", nil), ast.Act("quick", nil))); err != nil {
		t.Fatal(err)
	}
	poll(t, 30*time.Second, "the worker process started slow", func() bool { return len(p.matching("started stopped seq[0]#1")) == 1 })

	tookOver := make(chan time.Time, 4)
	release := make(chan struct{})
	local := registry(t, map[string]runner.Handler{
		"slow": func(ctx context.Context, a job.Action) ([]byte, error) {
			tookOver <- time.Now()
			select {
			case <-release:
				return []byte(`"local"`), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		"quick": func(ctx context.Context, a job.Action) ([]byte, error) { return []byte(`"quick"`), nil },
	})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "local", Registry: local}, Store: openOn(t, srv.Addrs(), root, zkrunner.Config{})})

	p.signal(t, syscall.SIGSTOP)
	stopped := time.Now()
	var took time.Time
	select {
	case took = <-tookOver:
	case <-time.After(zktest.Patience(t)):
		p.signal(t, syscall.SIGCONT)
		t.Fatalf("the local worker did not take the action over within %v of the SIGSTOP", zktest.Patience(t))
	}
	ws, err := subSt.Workers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(ws, func(w zkrunner.WorkerInfo) bool { return w.Name == "local" }); i < 0 || len(ws[i].Running) != 1 {
		t.Errorf("workers %+v: want local holding the claim on slow", ws)
	}
	before, err := subSt.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	hBefore := checkHistory(t, subSt, before)

	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.signal(t, syscall.SIGCONT)
	continued := time.Now()
	poll(t, 30*time.Second, "the continued process finishes its handler and abandons its result", func() bool {
		return len(p.matching("finished stopped seq[0]#1")) == 1 && len(p.matching("result abandoned")) == 1
	})
	abandonedAfter := time.Since(continued)
	after, err := subSt.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if after.Version() != before.Version() {
		t.Errorf("the abandoned result changed the job: v%d before, v%d after", before.Version(), after.Version())
	}
	if hAfter := checkHistory(t, subSt, after); len(hAfter.Steps) != len(hBefore.Steps) {
		t.Errorf("the abandoned result changed the history: %d steps before, %d after", len(hBefore.Steps), len(hAfter.Steps))
	}
	select {
	case at := <-tookOver:
		t.Errorf("slow was taken over again at %v: the local worker's claim was lost", at)
	default:
	}
	if ws, err := subSt.Workers(ctx); err != nil {
		t.Fatal(err)
	} else if i := slices.IndexFunc(ws, func(w zkrunner.WorkerInfo) bool { return w.Name == "local" }); i < 0 || len(ws[i].Running) != 1 {
		t.Errorf("workers %+v after the abandonment: want local still holding the claim on slow", ws)
	}

	close(release)
	final := waitJob(t, sub, id, 30*time.Second)
	if final.Status() != job.StatusSucceeded {
		t.Fatalf("job ended %s:\n%s", final.Status(), job.Describe(final))
	}
	h := checkHistory(t, subSt, final)
	if r, n := resultOf(h, "seq[0]"); n != 1 || string(r.Output) != `"local"` {
		t.Errorf("slow applied %d times, last output %s; want once, from the local worker", n, r.Output)
	}
	if len(h.Steps) != 2 {
		t.Errorf("%d steps, want 2", len(h.Steps))
	}

	p.signal(t, syscall.SIGTERM)
	termed := time.Now()
	if code := p.waitExit(t, 20*time.Second); code != 0 {
		t.Errorf("the continued process exited with %d after SIGTERM, want 0", code)
	}
	if len(p.matching("stopped <nil>")) != 1 {
		t.Errorf("the process did not say Run returned nil")
	}
	// The process has no handler for quick: resuming the job at its start
	// says so (an ERROR, "left as it is"). A request that go-zookeeper
	// failed with the socket's own error when the process woke up ("write
	// tcp ...: broken pipe") is not retried by the runner (client.retryable
	// knows only go-zookeeper's errors): an ERROR too, said in the report,
	// not failed here. Any other error is a failure.
	for _, l := range p.matching("level=ERROR") {
		switch {
		case strings.Contains(l, `msg="resuming jobs"`) && strings.Contains(l, "no handler"):
		case strings.Contains(l, `err="write tcp `), strings.Contains(l, `err="read tcp `):
			t.Log("socket error not retried:", l)
		default:
			t.Errorf("the process logged an error: %s", l)
		}
	}
	t.Logf("process SIGSTOPped; its action taken over %v later (session 2 s); continued, it abandoned its result %v later; job v%d unchanged by it; SIGTERM stopped it in %v",
		took.Sub(stopped).Round(time.Millisecond), abandonedAfter.Round(time.Millisecond), before.Version(), time.Since(termed).Round(time.Millisecond))
	for _, l := range p.matching("abandoned") {
		t.Log("process:", l)
	}
}
