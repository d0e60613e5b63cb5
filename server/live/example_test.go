package live_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/store"
)

// A subscription gets the job as it stands, then each step with the nodes
// it changed.
func ExampleHub_Subscribe() {
	ctx := context.Background()
	st := store.NewMemory()
	hub, err := live.New(live.Options{Store: st, Notified: true})
	if err != nil {
		panic(err)
	}
	defer hub.Shutdown(ctx)
	tr, err := job.New("hello", ast.Seq(ast.Act("greet", nil), ast.Act("wave", nil)))
	if err != nil {
		panic(err)
	}
	if err := store.Commit(ctx, st, tr); err != nil {
		panic(err)
	}

	sub, err := hub.Subscribe(ctx, "hello", 0)
	if err != nil {
		panic(err)
	}
	defer sub.Close()
	u, _ := sub.Next(ctx)
	fmt.Println(u.Kind, u.Version, u.Job.Status())

	// A worker finishes greet; the runner saves the step and notifies.
	greet := tr.Job.Outstanding()[0]
	tr, _ = job.Restart(tr.Job, []job.Result{greet.Succeed([]byte(`"hi"`))})
	if err := store.Commit(ctx, st, tr); err != nil {
		panic(err)
	}
	hub.Notify("hello")

	u, _ = sub.Next(ctx)
	fmt.Println(u.Kind, u.Version, u.Steps[0].Results[0].ActionID, u.Steps[0].Dispatched)
	for _, n := range u.Changed {
		fmt.Printf("  %s %s\n", ast.ShowPath(n.Path), n.Status)
	}
	// Output:
	// snapshot 1 running
	// step 2 seq[0]#1 [seq[1]#1]
	//   seq[0] succeeded
	//   seq[1] running
}

func ExampleReadEvents() {
	stream := "id: 4\nevent: step\ndata: {\"version\":4}\n\n: heartbeat\n\nevent: end\ndata: {}\n\n"
	_ = live.ReadEvents(strings.NewReader(stream), func(ev live.Event) error {
		fmt.Printf("%s id=%s %s\n", ev.Type, ev.ID, ev.Data)
		return nil
	})
	// Output:
	// step id=4 {"version":4}
	// end id=4 {}
}
