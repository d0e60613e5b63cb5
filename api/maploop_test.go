package api_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// TestMapCopiesAndLoopIterations: a job's node list counts a started
// map's copies per state and says a loop's iteration; the history says
// which step started the map, with how many copies, and which steps
// began the loop's next iterations.
func TestMapCopiesAndLoopIterations(t *testing.T) {
	root := ast.Seq(
		ast.Act("list", nil).Named("xs"),
		ast.Map("xs", ast.Act("work", nil).WithInputs("item")).Named("all"),
		ast.Loop(ast.Act("poll", nil).Named("done"), "done", true, 5),
	)
	tr, err := job.New("m", root, job.StartedAt(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
	if err != nil {
		t.Fatal(err)
	}
	h := store.History{Origin: tr.Job}
	step := func(rs ...job.Result) job.Transition {
		t.Helper()
		next, err := job.Restart(tr.Job, rs)
		if err != nil {
			t.Fatal(err)
		}
		if len(next.Ignored) > 0 {
			t.Fatalf("v%d ignored %v", next.Job.Version(), next.Ignored)
		}
		h.Steps = append(h.Steps, next.Step)
		return next
	}
	node := func(j job.Job, path string) api.Node {
		t.Helper()
		for _, n := range api.JobOf(j, true).Nodes {
			if n.Path == path {
				return n
			}
		}
		t.Fatalf("no node %q in %+v", path, api.JobOf(j, true).Nodes)
		return api.Node{}
	}
	if n := node(tr.Job, "seq[1]"); n.Copies != nil {
		t.Errorf("the map before it starts: %+v", n.Copies)
	}
	if n := node(tr.Job, "seq[2]"); n.Iteration != 1 {
		t.Errorf("the loop before it starts: iteration %d", n.Iteration)
	}
	tr = step(tr.Actions[0].Succeed([]byte(`["a","b","c","d"]`))) // v2: the map starts
	if len(tr.Actions) != 4 {
		t.Fatalf("the map dispatched %v", tr.Actions)
	}
	copies := tr.Actions
	tr = step(copies[0].Succeed(nil), copies[1].Succeed(nil)) // v3
	if n := node(tr.Job, "seq[1]"); n.Copies == nil || *n.Copies != (api.Copies{Count: 4, Running: 2, Succeeded: 2}) {
		t.Errorf("the map's copies: %+v", n.Copies)
	}
	tr = step(copies[2].Succeed(nil), copies[3].Succeed(nil)) // v4: the loop starts
	if n := node(tr.Job, "seq[1]"); n.Status != "succeeded" || n.Copies == nil || *n.Copies != (api.Copies{Count: 4, Succeeded: 4}) {
		t.Errorf("the map settled: %+v, %+v", n, n.Copies)
	}
	tr = step(tr.Actions[0].Succeed([]byte(`false`))) // v5: iteration 2
	tr = step(tr.Actions[0].Succeed([]byte(`false`))) // v6: iteration 3
	if n := node(tr.Job, "seq[2]"); n.Iteration != 3 {
		t.Errorf("the loop at v6: iteration %d", n.Iteration)
	}
	node(tr.Job, "seq[2].loop[2]")
	step(tr.Actions[0].Succeed([]byte(`true`))) // v7: done

	got, err := api.HistoryOf(h, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(got, "", " ")
	if got.Status != "succeeded" || len(got.Steps) != 7 {
		t.Fatalf("history:\n%s", b)
	}
	want := map[uint64][]api.Growth{
		2: {{Path: "seq[1]", Kind: "map", Copies: 4}},
		5: {{Path: "seq[2]", Kind: "loop", Iteration: 2}},
		6: {{Path: "seq[2]", Kind: "loop", Iteration: 3}},
	}
	for _, st := range got.Steps {
		if g, w := jsonText(st.Grew), jsonText(want[st.Version]); g != w {
			t.Errorf("v%d grew %s, want %s", st.Version, g, w)
		}
	}
	// The results of the copies and of later iterations name their
	// actions, though the first version has no node at their paths.
	for _, st := range got.Steps[2:] {
		for _, r := range st.Results {
			if r.Action == "" {
				t.Errorf("v%d: %s has no action", st.Version, r.ActionID)
			}
		}
	}
	// A page of the history from a later version knows what came before.
	page, err := api.HistoryOf(h, 4, 1)
	if err != nil || len(page.Steps) != 1 || jsonText(page.Steps[0].Grew) != jsonText(want[5]) {
		t.Errorf("from v4, one step: %+v, %v", page, err)
	}
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
