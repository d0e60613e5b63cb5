package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/internal/zktest"
)

// The baton binary, built once for the tests that run it as a process.
var bin struct {
	once      sync.Once
	dir, path string
	err       error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bin.dir != "" {
		os.RemoveAll(bin.dir)
	}
	os.Exit(code)
}

// batonBinary builds cmd/baton into a temporary directory, once.
func batonBinary(t *testing.T) string {
	t.Helper()
	bin.once.Do(func() {
		if bin.dir, bin.err = os.MkdirTemp("", "baton-zk-test-"); bin.err != nil {
			return
		}
		bin.path = filepath.Join(bin.dir, "baton")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "build", "-o", bin.path, ".").CombinedOutput()
		if err != nil {
			bin.err = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if bin.err != nil {
		t.Fatal(bin.err)
	}
	return bin.path
}

// proc is a baton process started by a test.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	done           chan struct{}
	err            error       // from Wait, once done is closed
	killed         atomic.Bool // SIGKILLed by the test (proc.kill): no exit status to check
}

// startWorker starts 'baton worker' on srv and root as a process, waits for
// its start line, and stops it (by its PID) when the test ends.
func startWorker(t *testing.T, srv *zktest.Server, root, name string, args ...string) *proc {
	t.Helper()
	return startWorkerProc(t, name, append([]string{"worker", "--zk", srv.ConnString(), "--root", root, "--name", name}, args...))
}

// startProc starts 'baton ARGS...' as a process of its own group, whose
// output the returned proc collects, and whose end closes its done.
func startProc(t *testing.T, args []string) *proc {
	t.Helper()
	p := &proc{done: make(chan struct{})}
	p.cmd = exec.Command(batonBinary(t), args...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.SysProcAttr = sysProcAttr()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p
}

// startWorkerProc starts 'baton ARGS...', a worker named name, as a
// process, waits for its start line, and stops it (by its PID) when the
// test ends.
func startWorkerProc(t *testing.T, name string, args []string) *proc {
	t.Helper()
	p := startProc(t, args)
	t.Cleanup(func() {
		if code := p.stop(t); code != exitOK && !p.killed.Load() {
			t.Errorf("worker %s: exit status %d after SIGTERM\nstderr:\n%s", name, code, p.stderr.String())
		}
		if t.Failed() {
			t.Logf("worker %s (pid %d) stdout:\n%s\nstderr:\n%s", name, p.cmd.Process.Pid, p.stdout.String(), p.stderr.String())
		}
	})
	eventually(t, 20*time.Second, "the worker's start line", func() (bool, string) {
		// The line first: a worker that starts drained may exit soon after.
		if strings.Contains(p.stderr.String(), "baton worker "+name+": serving ") {
			return true, ""
		}
		select {
		case <-p.done:
			t.Fatalf("worker %s exited at start: %v\nstderr:\n%s", name, p.err, p.stderr.String())
		default:
		}
		return false, p.stderr.String()
	})
	return p
}

// stop sends SIGTERM to the process by its PID and waits for it to exit,
// at most 20s (the drain takes up to 10s), then kills it. It returns the
// exit status; calling it again returns the same.
func (p *proc) stop(t *testing.T) int {
	select {
	case <-p.done:
	default:
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("signal pid %d: %v", p.cmd.Process.Pid, err)
		}
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			t.Errorf("pid %d did not exit within 20s of SIGTERM: killed", p.cmd.Process.Pid)
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	if p.err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// eventually polls cond every 50ms until it holds, and fails the test with
// what cond last said after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v; last:\n%s", what, timeout, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestZK runs the commands against one ZooKeeper server, each subtest on
// a root of its own, with baton worker processes running the actions.
func TestZK(t *testing.T) {
	srv := zktest.Start(t)
	zkArgs := func(root string, args ...string) []string {
		return append(args, "--zk", srv.ConnString(), "--root", root)
	}

	t.Run("SubmitWaitHistoryInspect", func(t *testing.T) {
		root := srv.Path("run")
		w := startWorker(t, srv, root, "w1")
		hello := writeWorkflow(t, "hello.json", helloJSON)
		r := baton(t, zkArgs(root, "submit", hello, "--id", "hello-1", "--wait")...).want(t, exitOK)
		if !strings.HasPrefix(r.stdout, "hello-1\n") {
			t.Errorf("stdout does not start with the job ID:\n%s", r.stdout)
		}
		contains(t, "stdout", r.stdout, "par: succeeded\n", "job hello-1 succeeded: 5/6 actions settled, v")
		contains(t, "worker stdout", w.stdout.String(), "par[0]#1: a\n", "par[1].seq[0]#1: b\n", "par[2].finally#1: f\n")

		r = baton(t, zkArgs(root, "submit", writeWorkflow(t, "fail.json", failJSON), "--id", "fail-1", "--wait", "--quiet")...).want(t, exitFailed)
		contains(t, "stdout", r.stdout, "fail-1\njob fail-1 failed at seq[1].body (fail): boom: 3/4 actions settled")
		if strings.Contains(r.stdout, "seq: failed") {
			t.Errorf("--quiet printed the tree:\n%s", r.stdout)
		}
		contains(t, "worker stdout", w.stdout.String(), "seq[1].finally#1: cleanup\n")

		r = baton(t, zkArgs(root, "submit", hello, "--id", "hello-1")...).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: job hello-1 already exists in ZooKeeper "+srv.ConnString()+" under "+root+"; choose another --id")

		r = baton(t, zkArgs(root, "history", "fail-1")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "job fail-1: ", " now failed\n", "v1  created: running, 0/4 actions settled, 1 dispatched",
			"seq[1].body#1 fail on w1: failed: boom", "seq[1].finally#1 log on w1: ok")
		r = baton(t, zkArgs(root, "inspect", "--format", "dot", "hello-1")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "digraph", "#b7e4a7")
		r = baton(t, zkArgs(root, "inspect", "--version", "1", "hello-1")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "job hello-1 v1: running")
		r = baton(t, zkArgs(root, "status", "fail-1")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "job fail-1 v", "act fail \"boom\" seq[1].body: failed #1: boom")

		r = baton(t, zkArgs(root, "status")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "ID       STATUS     VERSION  SETTLED\nfail-1   failed", "hello-1  succeeded",
			"WORKER  STATE      PID", "w1      available  "+strconv.Itoa(w.cmd.Process.Pid)+"  0/4   0     fail,http.get,log,sleep,value  -\n",
			"placement: strategy spread, wait 2s", "queue: 0 entries")

		// A second worker of the same name is refused while the first lives.
		r = baton(t, zkArgs(root, "worker", "--name", "w1")...).want(t, exitError)
		contains(t, "stderr", r.stderr, `baton: worker w1: worker name "w1" is taken by a live process (host `, fmt.Sprintf("pid %d", w.cmd.Process.Pid))

		if code := w.stop(t); code != exitOK {
			t.Fatalf("worker exit status %d after SIGTERM", code)
		}
		contains(t, "worker stderr", w.stderr.String(), "baton worker w1: stopping: finishing the actions in flight", "baton worker w1: stopped\n")
		r = baton(t, zkArgs(root, "status")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "w1      down (grace ")
	})

	t.Run("StatusCancel", func(t *testing.T) {
		root := srv.Path("cancel")
		w := startWorker(t, srv, root, "w2", "--workers", "2")
		slow := writeWorkflow(t, "slow.json", `{"version":1,"root":{"try":{"par":[
			{"act":"sleep","payload":"30s"},{"act":"sleep","payload":"30s"}]},"finally":{"act":"log","payload":"cleanup"}}}`)

		// A submit that waits, cancelled from another invocation.
		waited := make(chan result, 1)
		go func() {
			var out, errb syncBuffer
			c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv, now: time.Now, noSignals: true}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			code := c.main(ctx, zkArgs(root, "submit", slow, "--id", "slow-1", "--wait"))
			waited <- result{code, out.String(), errb.String()}
		}()
		eventually(t, 20*time.Second, "the worker running both sleeps", func() (bool, string) {
			r := baton(t, zkArgs(root, "status")...)
			return strings.Contains(r.stdout, "  2/2   0     fail,http.get,log,sleep,value  slow-1/body.par[0]#1 slow-1/body.par[1]#1\n") && // sorted

				strings.Contains(r.stdout, "slow-1  running") && strings.Contains(r.stdout, "queue: 2 entries"), r.stdout + r.stderr
		})
		r := baton(t, zkArgs(root, "cancel", "slow-1", "--reason", "not needed")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "job slow-1 cancelled")
		var sr result
		select {
		case sr = <-waited:
		case <-time.After(30 * time.Second):
			t.Fatal("submit --wait did not return within 30s of the cancel")
		}
		if sr.code != exitFailed {
			t.Errorf("submit --wait of a cancelled job: exit %d, want %d\n%s%s", sr.code, exitFailed, sr.stdout, sr.stderr)
		}
		contains(t, "submit stdout", sr.stdout, "act sleep \"30s\" body.par[0]: cancelled", "job slow-1 cancelled (not needed): 1/3 actions settled")
		contains(t, "worker stdout", w.stdout.String(), "finally#1: cleanup\n")
		// The worker stopped both sleeps: it runs nothing, nothing is queued.
		eventually(t, 10*time.Second, "an idle worker and an empty queue", func() (bool, string) {
			r := baton(t, zkArgs(root, "status")...)
			return strings.Contains(r.stdout, "  0/2   0     fail,http.get,log,sleep,value  -\n") && strings.Contains(r.stdout, "queue: 0 entries"), r.stdout
		})

		r = baton(t, zkArgs(root, "cancel", "slow-1", "nosuch")...).want(t, exitError)
		contains(t, "stdout", r.stdout, "job slow-1 was cancelled already (not needed): cancelled\n")
		contains(t, "stderr", r.stderr, "baton: job nosuch not found in ZooKeeper "+srv.ConnString()+" under "+root+
			" (run 'baton status --zk "+srv.ConnString()+" --root "+root+"' for the list)")

		// Interrupted, submit --wait leaves the job to the workers.
		r = interruptibleBaton(t, "slow-2\n", zkArgs(root, "submit", slow, "--id", "slow-2", "--wait")...).want(t, exitInterrupted)
		contains(t, "stderr", r.stderr, "interrupted: job slow-2 goes on in ZooKeeper")
		r = baton(t, zkArgs(root, "cancel", "slow-2")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "job slow-2 cancelled")
	})

	t.Run("Resume", func(t *testing.T) {
		root := srv.Path("resume")
		wf := writeWorkflow(t, "two.json", `{"version":1,"root":{"seq":[{"act":"log","payload":"one"},{"act":"log","payload":"two"}]}}`)
		r := baton(t, zkArgs(root, "submit", wf, "--id", "r1")...).want(t, exitOK)
		contains(t, "stderr", r.stderr, `no live worker in ZooKeeper `+srv.ConnString()+` under `+root+` has a handler for "log" yet: the job waits for one`)
		// The queue entry is lost (deleted by hand).
		zc := zktest.Connect(t, srv.Addrs(), 5*time.Second)
		entries, _, err := zc.Children(root + "/queue")
		if err != nil || len(entries) != 1 {
			t.Fatalf("queue entries %q, %v; want one", entries, err)
		}
		if err := zc.Delete(root+"/queue/"+entries[0], -1); err != nil {
			t.Fatal(err)
		}
		r = baton(t, zkArgs(root, "resume", "r1")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "job r1: running, 0/2 actions settled, v1; its actions are queued\n",
			"queue: 0 entries before, 1 now\n", "no live workers in ZooKeeper")
		w := startWorker(t, srv, root, "w3")
		eventually(t, 20*time.Second, "job r1 succeeded", func() (bool, string) {
			r := baton(t, zkArgs(root, "status", "r1")...)
			return strings.Contains(r.stdout, "job r1 v3: succeeded"), r.stdout + r.stderr
		})
		contains(t, "worker stdout", w.stdout.String(), "seq[0]#1: one\n", "seq[1]#1: two\n")
		r = baton(t, zkArgs(root, "resume")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "no unfinished jobs in ZooKeeper")
		r = baton(t, zkArgs(root, "resume", "r1", "nosuch")...).want(t, exitError)
		contains(t, "stdout", r.stdout, "job r1 has already finished: succeeded\n")
		contains(t, "stderr", r.stderr, "baton: job nosuch not found in ZooKeeper")
		r = baton(t, zkArgs(root, "resume", "--workers", "2")...).want(t, exitError)
		contains(t, "stderr", r.stderr, "--workers does not go with --zk")
	})

	t.Run("AuthAndDelete", func(t *testing.T) {
		root := srv.Path("auth")
		wf := writeWorkflow(t, "one.json", `{"version":1,"root":{"act":"log","payload":"x"}}`)
		t.Setenv(zkPasswordEnv, "pw")
		baton(t, zkArgs(root, "submit", wf, "--id", "secret", "--auth", "alice")...).want(t, exitOK)
		// Without credentials, every command (a worker too) is refused at
		// once.
		for _, args := range [][]string{{"status"}, {"worker"}, {"cancel", "secret"}} {
			r := baton(t, zkArgs(root, args...)...).want(t, exitStore)
			contains(t, "stderr", r.stderr, "under "+root+": the root is protected by credentials: give the --auth it was made with, with the password in $BATON_ZK_PASSWORD or --auth-file")
		}
		r := baton(t, zkArgs(root, "status", "--auth", "alice")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "secret  running  1", "queue: 1 entry ")
		r = baton(t, zkArgs(root, "status", "--auth", "bob")...).want(t, exitStore)
		contains(t, "stderr", r.stderr, "the root does not admit user bob with this password")

		// A password file: the owner's only.
		pwFile := filepath.Join(t.TempDir(), "pw")
		if err := os.WriteFile(pwFile, []byte("pw\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv(zkPasswordEnv, "wrong")
		r = baton(t, zkArgs(root, "status", "--auth", "alice")...).want(t, exitStore)
		contains(t, "stderr", r.stderr, "the root does not admit user alice with this password")
		r = baton(t, zkArgs(root, "status", "--auth", "alice", "--auth-file", pwFile)...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "secret  running  1")
		if err := os.Chmod(pwFile, 0o640); err != nil {
			t.Fatal(err)
		}
		r = baton(t, zkArgs(root, "status", "--auth", "alice", "--auth-file", pwFile)...).want(t, exitError)
		contains(t, "stderr", r.stderr, "--auth-file "+pwFile+" may be read or changed by group or others (mode 0640)")
		t.Setenv(zkPasswordEnv, "pw")

		// Credentials on a root made without: refused, nothing written.
		open := srv.Path("open")
		baton(t, zkArgs(open, "submit", wf, "--id", "plain")...).want(t, exitOK)
		for _, args := range [][]string{{"submit", wf, "--id", "closed"}, {"worker"}, {"status"}} {
			r := baton(t, zkArgs(open, append(args, "--auth", "alice")...)...).want(t, exitStore)
			contains(t, "stderr", r.stderr, "under "+open+": the root was made without --auth: its nodes are open to every client, and those made with --auth alice would be closed to the workers and commands without it")
		}
		r = baton(t, zkArgs(open, "status")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "plain  running  1")
		if strings.Contains(r.stdout, "closed") {
			t.Errorf("the refused submit made its job:\n%s", r.stdout)
		}

		r = baton(t, zkArgs(root, "delete", "secret", "--auth", "alice")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "deleted secret (job, running at v1) from ZooKeeper")
		r = baton(t, zkArgs(root, "status", "secret", "--auth", "alice")...).want(t, exitError)
		contains(t, "stderr", r.stderr, "job secret not found in ZooKeeper", "--auth alice' for the list")
		// Its queue entry went with it.
		r = baton(t, zkArgs(root, "status", "--auth", "alice")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "queue: 0 entries")
	})

	t.Run("ReadsNeverCreate", func(t *testing.T) {
		typo := srv.Path("typo")
		for _, args := range [][]string{{"status"}, {"status", "j"}, {"inspect", "j"}, {"history", "j"}, {"cancel", "j"}, {"resume"}, {"delete", "j"}} {
			r := baton(t, zkArgs(typo, args...)...).want(t, exitError)
			contains(t, "stderr", r.stderr, "baton: ZooKeeper "+srv.ConnString()+" under "+typo+": root "+typo+" does not exist (is --root right? 'baton worker' and 'baton submit' make it)")
		}
		zc := zktest.Connect(t, srv.Addrs(), 5*time.Second)
		if ok, _, err := zc.Exists(typo); err != nil || ok {
			t.Errorf("%s exists after the read-only commands (%v)", typo, err)
		}
		nested := srv.Path("nope", "nested")
		wf := writeWorkflow(t, "one.json", `{"version":1,"root":{"act":"log","payload":"x"}}`)
		for _, args := range [][]string{{"status"}, {"submit", wf}} {
			r := baton(t, zkArgs(nested, args...)...).want(t, exitError)
			contains(t, "stderr", r.stderr, "root "+nested+": its parent "+srv.Path("nope")+" does not exist (ZooKeeper makes no parents: create it first, or choose another root)")
		}
	})

	t.Run("DamagedRecord", func(t *testing.T) {
		root := srv.Path("damaged")
		wf := writeWorkflow(t, "one.json", `{"version":1,"root":{"act":"log","payload":"x"}}`)
		for _, id := range []string{"a", "z"} {
			baton(t, zkArgs(root, "submit", wf, "--id", id)...).want(t, exitOK)
		}
		zc := zktest.Connect(t, srv.Addrs(), 5*time.Second)
		if _, err := zc.Create(root+"/jobs/x", []byte(`{"bad`), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		r := baton(t, zkArgs(root, "status")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "a   running  1", "x   damaged  -", "z   running  1")
		contains(t, "stderr", r.stderr, "baton: job x in ZooKeeper "+srv.ConnString()+" under "+root+" cannot be read: job x: meta record: ", "left as it is ('baton delete --zk "+srv.ConnString()+" --root "+root+" x' removes it)")
		r = baton(t, zkArgs(root, "resume")...).want(t, exitStore)
		contains(t, "stdout", r.stdout, "job a: running, 0/1 actions settled, v1; its actions are queued", "job z: running")
		contains(t, "stderr", r.stderr, "job x: meta record: ", "left as it is ('baton delete --zk "+srv.ConnString()+" --root "+root+" x' removes it)")
		w := startWorker(t, srv, root, "wd")
		eventually(t, 20*time.Second, "jobs a and z succeeded", func() (bool, string) {
			r := baton(t, zkArgs(root, "status")...)
			return strings.Contains(r.stdout, "a   succeeded") && strings.Contains(r.stdout, "z   succeeded"), r.stdout + r.stderr
		})
		contains(t, "worker stdout", w.stdout.String(), "root#1: x\n")
		baton(t, zkArgs(root, "delete", "x")...).want(t, exitOK)
		r = baton(t, zkArgs(root, "status")...).want(t, exitOK)
		if strings.Contains(r.stdout, "damaged") || r.stderr != "" {
			t.Errorf("after delete:\n%s%s", r.stdout, r.stderr)
		}
	})

	t.Run("CancelRemovesQueue", func(t *testing.T) {
		root := srv.Path("cancelq")
		wf := writeWorkflow(t, "one.json", `{"version":1,"root":{"par":[{"act":"log","payload":"x"},{"act":"log","payload":"y"}]}}`)
		baton(t, zkArgs(root, "submit", wf, "--id", "c1")...).want(t, exitOK)
		r := baton(t, zkArgs(root, "status")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "queue: 2 entries")
		baton(t, zkArgs(root, "cancel", "c1")...).want(t, exitOK)
		r = baton(t, zkArgs(root, "status")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "c1  cancelled", "queue: 0 entries")
	})

	t.Run("Retain", func(t *testing.T) {
		root := srv.Path("retain")
		w := startWorker(t, srv, root, "wr", "--retain", "1s")
		wf := writeWorkflow(t, "one.json", `{"version":1,"root":{"act":"log","payload":"x"}}`)
		// Not --wait: the job may be swept before a waiter sees it settle
		// (a loaded machine). Its action's line says it ran; a job that has
		// not settled is never swept, so "no jobs" after that line means
		// it settled and retention deleted it.
		baton(t, zkArgs(root, "submit", wf, "--id", "short")...).want(t, exitOK)
		eventually(t, 60*time.Second, "the job ran", func() (bool, string) {
			return strings.Contains(w.stdout.String(), "short root#1: x"), w.stdout.String()
		})
		eventually(t, 60*time.Second, "the settled job deleted", func() (bool, string) {
			r := baton(t, zkArgs(root, "status")...)
			return strings.Contains(r.stdout, "no jobs in ZooKeeper"), r.stdout + r.stderr
		})
	})
}

// TestZKErrors: the ZooKeeper flags' usage errors, an unreachable server
// (a bounded wait, a message naming it), and the workflow file checked
// before any connection, as run does.
func TestZKErrors(t *testing.T) {
	t.Setenv(zkPasswordEnv, "")
	for _, args := range [][]string{
		{"status", "--zk", "127.0.0.1:2181", "--store", "x.db"},
		{"history", "j", "--store", "x.db", "--zk", "h:1"},
	} {
		r := baton(t, args...).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: "+args[0]+": --zk and --store exclude each other", "usage: baton "+args[0])
	}
	for _, cmd := range []string{"status", "inspect", "history", "cancel", "resume", "delete", "worker", "submit"} {
		args := []string{cmd, "--zk", ""}
		if cmd != "status" && cmd != "resume" && cmd != "worker" {
			args = append(args, "j")
		}
		r := baton(t, args...).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: "+cmd+": --zk is empty", "usage: baton "+cmd)
	}
	for args, want := range map[string]string{
		"worker":                                            "worker: --zk or --kafka is required",
		"submit f.json":                                     "submit: --zk, --kafka or --server is required",
		"status --root /x":                                  "status: --root needs --zk",
		"cancel --auth a:b j":                               "cancel: --auth needs --zk",
		"status --zk a,,b":                                  `status: --zk "a,,b" has an empty server address`,
		"status --zk h:port":                                `status: --zk: bad port in "h:port"`,
		"status --zk h:1 --root /":                          `status: --root "/": want an absolute node path`,
		"status --zk h:1 --root a/":                         `status: --root "a/": want an absolute node path`,
		"status --zk h:1 --auth nopass":                     "status: --auth nopass: the password is not set: put it in $BATON_ZK_PASSWORD or in a file given with --auth-file",
		"status --zk h:1 --auth a:b":                        "status: --auth takes the user only, not USER:PASSWORD: a password on the command line is visible to every user of the machine; put it in $BATON_ZK_PASSWORD or in a file given with --auth-file",
		"status --zk h:1 --auth=":                           "status: --auth is empty",
		"status --zk h:1 --auth-file f":                     "status: --auth-file needs --auth",
		"status --auth-file f":                              "status: --auth-file needs --zk",
		"status --zk h:1 --auth a --auth-file /nonexistent": "status: --auth-file: open /nonexistent: no such file or directory",
		"worker --zk h:1 --retain -1s":                      "worker: --retain must not be negative",
		"worker --zk h:1 --workers 0":                       "worker: --workers must be at least 1",
		"worker --zk h:1 x":                                 "worker: takes no arguments",
		"worker --zk h:1 --name=":                           "worker: --name must not be empty",
		"status --zk h:1 --connect-timeout 0s":              "status: --connect-timeout must be positive",
	} {
		r := baton(t, strings.Fields(args)...).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: "+want)
	}

	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ok := writeWorkflow(t, "ok.json", helloJSON)
	for _, args := range [][]string{{"status"}, {"submit", ok}, {"cancel", "j"}, {"worker"}} {
		start := time.Now()
		r := baton(t, append(args, "--zk", addr, "--connect-timeout", "500ms")...).want(t, exitStore)
		contains(t, "stderr", r.stderr, "baton: cannot reach ZooKeeper at "+addr+": no session within 500ms (is it running?")
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: gave up after %v", args[0], d)
		}
		if strings.Contains(r.stderr, "retrying") {
			t.Errorf("%s: the retries were logged:\n%s", args[0], r.stderr)
		}
	}

	// The file is read before ZooKeeper is reached (there is none at addr):
	// the same errors as run.
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxWorkflowBytes+1); err != nil {
		t.Fatal(err)
	}
	bad := writeWorkflow(t, "bad.json", "{\"version\":1,\n \"root\": {\"seq\": [\n   {\"act\": \"log\" \"payload\": 1}]}}")
	missing := filepath.Join(t.TempDir(), "nope.json")
	for file, want := range map[string]string{
		"/dev/zero": "baton: workflow file /dev/zero is not a regular file: it is a device",
		big:         "baton: workflow file " + big + " is 16777217 bytes; workflow files are limited to 16 MiB",
		bad:         "baton: " + bad + ": ",
		missing:     "baton: workflow file " + missing + " does not exist",
	} {
		r := baton(t, "submit", "--zk", addr, file).want(t, exitError)
		contains(t, "stderr", r.stderr, want)
		if file == bad {
			contains(t, "stderr", r.stderr, "line 3, column 18")
		}
		// run says the same.
		rr := baton(t, "run", file, "--store", filepath.Join(t.TempDir(), "b.db")).want(t, exitError)
		if rr.stderr != r.stderr {
			t.Errorf("submit and run disagree about %s:\nsubmit: %srun:    %s", file, r.stderr, rr.stderr)
		}
	}
	r := baton(t, "submit", "--zk", addr, "--id", "a/b", ok).want(t, exitError)
	contains(t, "stderr", r.stderr, `baton: job ID "a/b" has '/' at byte 1`)
}
