package job_test

import (
	"fmt"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// A runner loop driven by hand: New starts the job, then each batch of
// results goes to Restart until the job is done. Here every action
// succeeds except "d", whose failure the rescue handles.
func Example() {
	w := ast.Par(
		ast.Act("log", "a"),
		ast.Seq(ast.Act("log", "b"), ast.Act("log", "c")),
		ast.Try(ast.Act("log", "d"), ast.Rescue(ast.Act("log", "e")), ast.Finally(ast.Act("log", "f"))),
	)
	tr, err := job.New("j1", w)
	for err == nil && !tr.Job.Done() {
		// A real runner stores tr.Job here, BEFORE dispatching tr.Actions.
		j := tr.Job
		var results []job.Result
		for _, a := range tr.Actions {
			fmt.Printf("v%d run %s %s %s\n", j.Version(), a.ID, a.Name, a.Payload)
			if string(a.Payload) == `"d"` {
				results = append(results, a.Fail("disk full"))
			} else {
				results = append(results, a.Succeed(nil))
			}
		}
		tr, err = job.Restart(j, results)
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(job.Describe(tr.Job))
	// Output:
	// v1 run par[0]#1 log "a"
	// v1 run par[1].seq[0]#1 log "b"
	// v1 run par[2].body#1 log "d"
	// v2 run par[1].seq[1]#1 log "c"
	// v2 run par[2].rescue#1 log "e"
	// v3 run par[2].finally#1 log "f"
	// job j1 v4: succeeded, 6/6 actions settled
	// par: succeeded
	//   act log "a" par[0]: succeeded #1
	//   seq par[1]: succeeded
	//     act log "b" par[1].seq[0]: succeeded #1
	//     act log "c" par[1].seq[1]: succeeded #1
	//   try par[2]: succeeded
	//     act log "d" par[2].body: failed #1: disk full
	//     act log "e" par[2].rescue: succeeded #1
	//     act log "f" par[2].finally: succeeded #1
}

// New validates the workflow and returns the job at version 1 with the
// first actions to dispatch.
func ExampleNew() {
	tr, err := job.New("order-7", ast.Seq(ast.Act("charge", map[string]int{"cents": 500}), ast.Act("ship", nil)))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tr.Job)
	for _, a := range tr.Actions {
		fmt.Println(a.Key(), a.Name, string(a.Payload))
	}

	_, err = job.New("order-8", ast.Seq())
	fmt.Println(err)
	// Output:
	// job order-7 v1 running, 1 outstanding
	// order-7/seq[0]#1 charge {"cents":500}
	// job order-8: workflow: root: seq has no children
}

// A batch of results is a set: on par(seq(a, b), c), the batch {a: ok,
// c: failed} freezes the par before b could start, so b is cancelled and
// nothing is dispatched. Results that cannot apply are reported, not
// errors.
func ExampleRestart() {
	tr, _ := job.New("j2", ast.Par(ast.Seq(ast.Act("a", nil), ast.Act("b", nil)), ast.Act("c", nil)))
	a, c := tr.Actions[0], tr.Actions[1]
	tr, err := job.Restart(tr.Job, []job.Result{a.Succeed(nil), c.Fail("boom"), a.Succeed(nil)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(tr.Actions), "actions;", tr.Job)
	for _, ig := range tr.Ignored {
		fmt.Println("ignored", ig)
	}
	// Output:
	// 0 actions; job j2 v2 failed: par[1] (c): boom
	// ignored par[0].seq[0]#1: duplicate
}

// Recovery after a crash: the stored job is decoded and Outstanding lists
// exactly the actions to dispatch again.
func ExampleDecode() {
	tr, _ := job.New("j3", ast.Par(ast.Act("a", nil), ast.Seq(ast.Act("b", nil), ast.Act("c", nil))))
	tr, _ = job.Restart(tr.Job, []job.Result{tr.Actions[1].Succeed(nil)}) // b done, c dispatched
	stored, _ := job.Encode(tr.Job)

	// ... the runner crashes, and comes back ...
	loaded, err := job.Decode(stored)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(loaded)
	for _, a := range loaded.Outstanding() {
		fmt.Println("redispatch", a.ID)
	}
	// Output:
	// job j3 v2 running, 2 outstanding
	// redispatch par[0]#1
	// redispatch par[1].seq[1]#1
}

// A dag passes data: join starts when both extracts have succeeded, and
// its action carries their outputs, by name.
func ExampleOutputAs() {
	w := ast.Dag(
		ast.Act("extract", "users").Named("users"),
		ast.Act("extract", "orders").Named("orders"),
		ast.Act("join", nil).Named("joined").WithAfter("users", "orders").WithInputs("users", "orders"),
	)
	tr, _ := job.New("etl", w)
	fmt.Println("first:", len(tr.Actions), "actions")
	tr, _ = job.Restart(tr.Job, []job.Result{
		tr.Actions[0].Succeed([]byte(`{"rows":3}`)),
		tr.Actions[1].Succeed([]byte(`{"rows":5}`)),
	})
	join := tr.Actions[0]
	for _, in := range join.Inputs {
		fmt.Printf("%s takes %s: %s\n", join.ID, in.Name, in.Output)
	}
	tr, _ = job.Restart(tr.Job, []job.Result{join.Succeed([]byte(`{"rows":8}`))})
	type rows struct{ Rows int }
	r, err := job.OutputAs[rows](tr.Job, "joined")
	fmt.Println(tr.Job.Status(), r.Rows, err)
	// Output:
	// first: 2 actions
	// dag[2]#1 takes users: {"rows":3}
	// dag[2]#1 takes orders: {"rows":5}
	// succeeded 8 <nil>
}
