package inmem_test

import (
	"context"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
)

// TestLang3Nodes runs the nodes of workflow version 3 through the in-memory
// runner: a choice on a handler's output, a guarded dag, a limited par, a
// race with a need, and an end, also one that ends the job as it starts
// (no action ever dispatched).
func TestLang3Nodes(t *testing.T) {
	reg := runner.NewRegistry()
	_ = runner.Handle(reg, "say", func(ctx context.Context, s string) (string, error) { return s, nil })
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: 2}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go r.Run(ctx)
	defer r.Close()
	say := func(s string) ast.Node { return ast.Act("say", s) }
	flows := map[job.ID]ast.Node{
		"choice": ast.Seq(say("big").Named("size"),
			ast.Choice("size", ast.When("small", say("letter")), ast.When("big", ast.Par(say("a"), say("b"), say("c")).WithLimit(1))),
			ast.Dag(say("x").Named("x"), say("y").Named("y").WithAfter("x").WithWhen("size", "small"), say("z").Named("z").WithAfter("y")),
			ast.Race(say("1"), say("2"), say("3")).WithNeed(2)),
		"end":      ast.Seq(say("first"), ast.End("enough"), say("never")),
		"end-only": ast.End("nothing to do"),
	}
	for id, flow := range flows {
		if err := r.Submit(ctx, id, flow); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	for id := range flows {
		j, err := r.Wait(ctx, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if j.Status() != job.StatusSucceeded {
			t.Fatalf("%s: %s\n%s", id, j.Status(), job.Describe(j))
		}
	}
}
