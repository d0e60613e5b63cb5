package live_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/server/live"
)

// With the real in-process runner notifying the hub from Hooks.Step (as
// the server wires it), a stream opened at submit carries every version of
// the job once, in order, as the history has them, then end.
func TestInmemRunner(t *testing.T) {
	st := stores[1].open(t) // bolt
	var hub *live.Hub
	hooks := &runner.Hooks{Step: func(j job.Job, _ int) { hub.Notify(j.ID()) }}
	reg := runner.NewRegistry()
	// The actions wait for the stream to be open, so that the job has
	// steps to send after its snapshot (else, on a fast machine, it is
	// over before the client connects and the stream is snapshot, end).
	gate := make(chan struct{})
	if err := runner.Handle(reg, "work", func(ctx context.Context, in map[string]int) (int, error) {
		select {
		case <-gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		return in["i"] * 2, nil
	}); err != nil {
		t.Fatal(err)
	}
	hub, srv := serve(t, live.Options{Store: st, Notified: true}, enc{})
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Hooks: hooks, Workers: 2}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	defer func() {
		cancel()
		<-ran
		_ = r.Close()
	}()
	var kids []ast.Node
	for i := range 12 {
		kids = append(kids, ast.Par(ast.Act("work", map[string]int{"i": i}), ast.Act("work", map[string]int{"i": -i})))
	}
	if err := r.Submit(ctx, "real", ast.Seq(kids...)); err != nil {
		t.Fatal(err)
	}
	c := connect(t, jobURL(srv, "real"), "", http.StatusOK)
	ev := c.next(t)
	if ev.Type != "snapshot" {
		t.Fatalf("first event %s, want snapshot", ev.Type)
	}
	from := decode[snapshotData](t, ev).Version
	close(gate)
	got := map[uint64]string{}
	last := from
	for {
		ev := c.next(t)
		if ev.Type == "end" {
			if e := decode[snapshotData](t, ev); e.Status != "succeeded" || e.Version != last {
				t.Fatalf("end %s, want succeeded at v%d", ev.Data, last)
			}
			break
		}
		for i, v := range decode[stepData](t, ev).Versions {
			if v != from+1 {
				t.Fatalf("step v%d, want v%d", v, from+1)
			}
			got[v] = decode[stepData](t, ev).Results[i]
			from, last = v, v
		}
	}
	c.ended(t)
	first := last - uint64(len(got)) + 1
	checkAgainstHistory(t, st, "real", first, last, got)
}
