package zk_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/store"
)

// errSenderDied is what the sender's fault hook kills its transition with.
var errSenderDied = errors.New("the sender died before its transition")

// TestSignalLeftBySender: a sender that wrote a signal's node and died
// before its transition (the fault hook kills the commit production
// runs) leaves the signal durable, and a worker's signal loop applies it
// once, deleting the node in the same multi-op. The same signal sent
// again after it was applied writes a node that changes nothing and is
// deleted.
func TestSignalLeftBySender(t *testing.T) {
	srv := zktest.Start(t)
	ws := openStore(t, srv, zkrunner.Config{})
	reg := runner.NewRegistry()
	if err := runner.Handle(reg, "echo", func(_ context.Context, s string) (string, error) { return s, nil }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Patience(t))
	defer cancel()
	w, err := zkrunner.New(zkrunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: ws})
	if err != nil {
		t.Fatal(err)
	}
	go w.Run(ctx)
	defer w.Close()
	if err := w.Submit(ctx, "s1", ast.Seq(ast.Wait("approval").Named("answer"), ast.Act("echo", "after"))); err != nil {
		t.Fatal(err)
	}

	// The sender: a client of its own, whose signal transitions die.
	ss := openStore(t, srv, zkrunner.Config{Root: ws.Root(), MustExist: true})
	var killed atomic.Int32
	zkrunner.InjectFaults(ss, func(p zkrunner.FaultPoint, tr *job.Transition) error {
		if p != zkrunner.FaultCommit {
			return nil
		}
		for _, r := range tr.Step.Results {
			if _, ok := r.AsSignal(); ok {
				killed.Add(1)
				return errSenderDied
			}
		}
		return nil
	})
	sender, err := zkrunner.New(zkrunner.Options{Store: ss, NoResume: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close()
	if err := sender.Signal(ctx, "s1", "approval", "a1", []byte(`"yes"`)); err != nil {
		t.Fatalf("Signal: %v, want nil once the signal's node is written", err)
	}
	if killed.Load() == 0 {
		t.Fatal("the sender's transition was not killed: the test proves nothing")
	}
	j, err := w.Wait(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if j.Status() != job.StatusSucceeded {
		t.Fatalf("job %s\n%s", j.Status(), job.Describe(j))
	}
	if out, _ := j.Output("answer"); string(out) != `"yes"` {
		t.Fatalf("the wait's output is %s, want the signal's payload", out)
	}
	h, err := store.LoadHistory(ctx, ws, "s1")
	if err != nil {
		t.Fatal(err)
	}
	signals := 0
	for _, s := range h.Steps {
		for _, r := range s.Results {
			if strings.HasPrefix(r.ActionID, "@signal/") {
				signals++
			}
		}
	}
	if signals != 1 {
		t.Fatalf("the history holds %d signal results, want 1", signals)
	}
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	left := func() []string {
		names, _, err := c.Children(ws.Root() + "/signals")
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	if n := left(); len(n) != 0 {
		t.Fatalf("signal nodes left after the signal applied: %q", n)
	}

	// Sent again after it was applied (the job still runs: a second job
	// holds a wait that never gets its signal): the node is written,
	// ignored as a duplicate and deleted; the job does not move.
	if err := w.Submit(ctx, "s2", ast.Seq(ast.Wait("approval").Named("answer"), ast.Wait("never"))); err != nil {
		t.Fatal(err)
	}
	if err := w.Signal(ctx, "s2", "approval", "a1", []byte(`1`)); err != nil {
		t.Fatal(err)
	}
	before, err := ws.Load(ctx, "s2")
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := before.Output("answer"); string(out) != "1" {
		t.Fatalf("s2's wait took %s, want 1:\n%s", out, job.Describe(before))
	}
	if err := w.Signal(ctx, "s2", "approval", "a1", []byte(`2`)); err != nil {
		t.Fatalf("a signal sent again: %v", err)
	}
	after, err := ws.Load(ctx, "s2")
	if err != nil {
		t.Fatal(err)
	}
	if after.Version() != before.Version() {
		t.Fatalf("a duplicate signal moved the job from v%d to v%d", before.Version(), after.Version())
	}
	if n := left(); len(n) != 0 {
		t.Fatalf("the duplicate's node is left: %q", n)
	}
}

// TestSignalToDeletedJob: deleting a job deletes the signal nodes not yet
// applied to it, and a worker finding a node of a job that is gone
// deletes it.
func TestSignalToDeletedJob(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Patience(t))
	defer cancel()
	zkrunner.InjectFaults(st, func(p zkrunner.FaultPoint, tr *job.Transition) error {
		if p == zkrunner.FaultCommit && len(tr.Step.Results) > 0 {
			return errSenderDied
		}
		return nil
	})
	r, err := zkrunner.New(zkrunner.Options{Store: st, NoResume: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Submit(ctx, "d1", ast.Wait("approval")); err != nil {
		t.Fatal(err)
	}
	if err := r.Signal(ctx, "d1", "approval", "x", nil); err != nil {
		t.Fatal(err)
	}
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	names, _, err := c.Children(st.Root() + "/signals")
	if err != nil || len(names) != 1 {
		t.Fatalf("signal nodes %q (%v), want the one left by the dead transition", names, err)
	}
	if err := st.Delete(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	if names, _, err = c.Children(st.Root() + "/signals"); err != nil || len(names) != 0 {
		t.Fatalf("signal nodes %q (%v) left after the job was deleted", names, err)
	}
}
