package inmem_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
)

// A workflow with a compensating rescue, run on the in-memory runner. The
// payment fails, the rescue refunds, the finally releases the stock.
func Example() {
	reg := runner.NewRegistry()
	type order struct {
		ID    string `json:"id"`
		Cents int    `json:"cents"`
	}
	_ = runner.Handle(reg, "charge", func(ctx context.Context, o order) (string, error) {
		return "", fmt.Errorf("card declined for %s", o.ID)
	})
	_ = runner.Handle(reg, "refund", func(ctx context.Context, o order) (string, error) {
		return "refunded " + o.ID, nil
	})
	_ = runner.Handle(reg, "release", func(ctx context.Context, o order) (string, error) {
		return "released " + o.ID, nil
	})

	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: 1}})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)
	defer r.Close()

	o := order{ID: "o-7", Cents: 1250}
	flow := ast.Try(ast.Act("charge", o),
		ast.Rescue(ast.Act("refund", o)),
		ast.Finally(ast.Act("release", o)))
	if err := r.Submit(ctx, "order-o-7", flow); err != nil {
		panic(err)
	}
	j, err := r.Wait(ctx, "order-o-7")
	if err != nil {
		panic(err)
	}
	fmt.Println(j.Status())
	// Describe's first line carries the version; print the tree only.
	d := job.Describe(j)
	fmt.Print(d[strings.Index(d, "\n")+1:])
	// Output:
	// succeeded
	// try: succeeded
	//   act charge {"id":"o-7","cents":1250} body: failed #1: card declined for o-7
	//   act refund {"id":"o-7","cents":1250} rescue: succeeded #1 -> "refunded o-7"
	//   act release {"id":"o-7","cents":1250} finally: succeeded #1 -> "released o-7"
}
