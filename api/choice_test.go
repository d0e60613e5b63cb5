package api_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestChoiceReadAndChose: a choice's node says the leaf it reads and,
// once it started, what it read and which cases it chose: one case, the
// cases of a multi choice, the else, or none (a choice that failed); a
// choice inside a map copy reads its own copy's leaf.
func TestChoiceReadAndChose(t *testing.T) {
	root := ast.Seq(
		ast.Par(ast.Act("kind", nil).Named("kind"), ast.Act("tags", nil).Named("tags"), ast.Act("xs", nil).Named("xs")),
		ast.Choice("kind", ast.When("x", ast.Act("a", nil)), ast.When("y", ast.Act("b", nil)), ast.Else(ast.Act("c", nil))),
		ast.Choice("tags", ast.When("a", ast.Act("ta", nil)), ast.When("b", ast.Act("tb", nil)), ast.When("c", ast.Act("tc", nil))).AllMatching(),
		ast.Map("xs", ast.Seq(
			ast.Act("get", nil).WithInputs("item").Named("v"),
			ast.Choice("v", ast.When(1, ast.Act("one", nil)), ast.Else(ast.Act("other", nil))),
		)),
		ast.Try(ast.Choice("kind", ast.When("nope", ast.Act("n", nil))), ast.Rescue(ast.Act("log", nil))),
		ast.Loop(ast.Seq(
			ast.Act("poll", nil).Named("p"),
			ast.Choice("p", ast.When(true, ast.Act("yes", nil)), ast.Else(ast.Act("no", nil))),
		), "p", true, 3),
		ast.Choice("kind", ast.When("y", ast.Act("r", nil))).WithReplicas(2),
	)
	tr, err := job.New("c", root, job.StartedAt(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
	if err != nil {
		t.Fatal(err)
	}
	choice := func(j job.Job, path string) *api.Chosen {
		t.Helper()
		for _, n := range api.JobOf(j, true).Nodes {
			if n.Path == path {
				return n.Choice
			}
		}
		t.Fatalf("no node %q", path)
		return nil
	}
	if got, want := choice(tr.Job, "seq[1]"), (&api.Chosen{On: "kind"}); !reflect.DeepEqual(got, want) {
		t.Errorf("the choice not started: %+v, want %+v", got, want)
	}
	outputs := map[string]string{"kind": `"y"`, "tags": `["a","c"]`, "xs": `[1,2]`}
	polls := 0
	for len(tr.Actions) > 0 {
		var rs []job.Result
		for _, a := range tr.Actions {
			out, ok := outputs[a.Name]
			if a.Name == "get" {
				item, _ := a.Input("item")
				out, ok = string(item), true
			}
			if a.Name == "poll" {
				polls++
				out, ok = map[bool]string{true: "true", false: "false"}[polls == 2], true
			}
			if !ok {
				out = "null"
			}
			rs = append(rs, a.Succeed([]byte(out)))
		}
		if tr, err = job.Restart(tr.Job, rs); err != nil {
			t.Fatal(err)
		}
	}
	if tr.Job.Status() != job.StatusSucceeded {
		t.Fatalf("job %v", tr.Job)
	}
	for path, want := range map[string]*api.Chosen{
		"seq[1]":                {On: "kind", Read: `"y"`, Cases: []int{1}},
		"seq[2]":                {On: "tags", Read: `["a","c"]`, Cases: []int{0, 2}},
		"seq[3].map[0].seq[1]":  {On: "v", Read: `1`, Cases: []int{0}},
		"seq[3].map[1].seq[1]":  {On: "v", Read: `2`, Else: true},
		"seq[4].body":           {On: "kind", Read: `"y"`},
		"seq[5].loop[1].seq[1]": {On: "p", Read: `true`, Cases: []int{0}}, // the iteration's own p
		"seq[6].race[1]":        {On: "kind", Read: `"y"`, Cases: []int{0}},
	} {
		if got := choice(tr.Job, path); !reflect.DeepEqual(got, want) {
			t.Errorf("choice at %s: %+v, want %+v", path, got, want)
		}
	}
	if got := choice(tr.Job, "seq[0]"); got != nil {
		t.Errorf("a par has a choice: %+v", got)
	}
}

// TestJobSignals: a job's detail lists the signals it keeps (payload
// clipped, time) and which wait took which signal; a wait's node names
// its signal. A job without signals has none.
func TestJobSignals(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	root := ast.Seq(ast.Wait("go"), ast.Act("work", nil), ast.Wait("later"))
	tr, err := job.New("s", root, job.StartedAt(t0))
	if err != nil {
		t.Fatal(err)
	}
	if got := api.JobOf(tr.Job, true); got.Signals != nil || got.Nodes[1].Signal != "go" || got.Nodes[3].Signal != "later" || got.Nodes[2].Signal != "" {
		t.Errorf("before any signal: %+v, nodes %+v", got.Signals, got.Nodes)
	}
	long := `"` + strings.Repeat("x", 300) + `"`
	tr, err = job.Deliver(tr.Job,
		job.Signal{Name: "later", ID: "l1", Payload: []byte(long), At: t0.Add(time.Second)},
		job.Signal{Name: "later", ID: "l2"})
	if err != nil {
		t.Fatal(err)
	}
	tr, err = job.Deliver(tr.Job, job.Signal{Name: "go", ID: "g1", Payload: []byte(`{"ok":true}`), At: t0.Add(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Second)
	want := &api.Signals{
		Kept: []api.KeptSignal{
			{Name: "later", ID: "l2", Payload: "null"}, // a batch's signals in time order, none first
			{Name: "later", ID: "l1", Payload: long[:api.ClipBytes], Clipped: true, At: &at},
		},
		Taken: []api.TakenSignal{{Name: "go", ID: "g1", Path: "seq[0]"}},
	}
	if got := api.JobOf(tr.Job, true).Signals; !reflect.DeepEqual(got, want) {
		t.Errorf("signals:\n got %+v\nwant %+v", got, want)
	}
	if got := api.JobOf(tr.Job, false).Signals; got != nil {
		t.Errorf("signals without the nodes: %+v", got)
	}
}
