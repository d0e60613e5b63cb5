package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/store"
)

func Example() {
	// A server on a memory store, running the action "greet".
	reg := runner.NewRegistry()
	_ = runner.Handle(reg, "greet", func(_ context.Context, name string) (string, error) { return "hello " + name, nil })
	r, _ := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: store.NewMemory()})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go r.Run(ctx)
	h, _ := server.New(server.Options{Store: r.Store(), Runner: server.Local{Runner: r, Registry: reg}})
	ts := httptest.NewServer(h)
	defer ts.Close()

	c := client.New(ts.URL, client.Options{})
	sum, created, err := c.Submit(ctx, "hi", []byte(`{"version":1,"root":{"act":"greet","payload":"ada"}}`))
	fmt.Println(sum.ID, created, err)
	sum, _ = c.Wait(ctx, "hi")
	fmt.Println(sum.Status)
	n, _ := c.Node(ctx, "hi", "")
	fmt.Println(n.Output)

	_, _, err = c.Submit(ctx, "hi", []byte(`{"version":1,"root":{"act":"greet","payload":"bob"}}`))
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code, e.JobID)
	}
	_, err = c.Job(ctx, job.ID("nope"), client.JobQuery{})
	fmt.Println(client.Code(err))
	// Output:
	// hi true <nil>
	// succeeded
	// "hello ada"
	// 409 job_exists hi
	// job_not_found
}
