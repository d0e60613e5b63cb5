package job_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// The reducer copies the nearest affinity onto each action, resolved
// from the tree and the job ID, and lists the job's pins.
func TestPlacementHints(t *testing.T) {
	strict := true
	w := ast.Par(
		ast.Act("load", nil).WithAffinity(ast.Affinity{Key: "dataset-42", Wait: 2 * time.Second}),
		ast.Seq(ast.Act("open", nil), ast.Act("write", nil).WithAffinity(ast.Affinity{Key: "disk", Strict: &strict})).WithAffinity(ast.Affinity{Scope: ast.ScopeJob}),
		ast.Act("tmp", nil).WithAffinity(ast.Affinity{Scope: ast.ScopeJob, Key: "scratch"}),
		ast.Seq(ast.Act("tmp2", nil)).WithAffinity(ast.Affinity{Scope: ast.ScopeJob, Key: "scratch"}),
		ast.Act("free", nil),
	)
	tr, err := job.New("j-7", w)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*job.Placement{}
	for _, a := range tr.Actions {
		got[a.ID] = a.Placement
	}
	want := map[string]*job.Placement{
		"par[0]#1":        {Key: "dataset-42", Wait: 2 * time.Second},
		"par[1].seq[0]#1": {Key: "j-7/path:par[1]", Strict: true, Names: []string{"open", "write"}},
		"par[2]#1":        {Key: "j-7/key:scratch", Strict: true, Names: []string{"tmp", "tmp2"}},
		"par[3].seq[0]#1": {Key: "j-7/key:scratch", Strict: true, Names: []string{"tmp", "tmp2"}},
		"par[4]#1":        nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("placements (-want +got):\n%s", diff)
	}
	tr, err = job.Restart(tr.Job, []job.Result{tr.Actions[1].Succeed(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if p := tr.Actions[0].Placement; tr.Actions[0].ID != "par[1].seq[1]#1" || p == nil || p.Key != "disk" || !p.Strict || !cmp.Equal(p.Names, []string{"write"}) {
		t.Fatalf("the nearest affinity decides: %+v %+v", tr.Actions[0], p)
	}
	if diff := cmp.Diff([]string{"j-7/key:scratch", "j-7/path:par[1]"}, job.Pins(tr.Job)); diff != "" {
		t.Fatalf("Pins (-want +got):\n%s", diff)
	}
	// Hints never change what the reducer decides: the same tree without
	// them dispatches the same actions.
	plain, err := job.New("j-7", ast.Par(ast.Act("load", nil), ast.Seq(ast.Act("open", nil), ast.Act("write", nil)), ast.Act("tmp", nil), ast.Seq(ast.Act("tmp2", nil)), ast.Act("free", nil)))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range plain.Actions {
		ids = append(ids, a.ID)
	}
	if diff := cmp.Diff([]string{"par[0]#1", "par[1].seq[0]#1", "par[2]#1", "par[3].seq[0]#1", "par[4]#1"}, ids); diff != "" {
		t.Fatalf("actions without hints (-hinted +plain):\n%s", diff)
	}
	enc, _ := job.Encode(tr.Job)
	back, err := job.Decode(enc)
	if err != nil || !cmp.Equal(job.Pins(back), job.Pins(tr.Job)) {
		t.Fatalf("a decoded job's pins: %v, %v", job.Pins(back), err)
	}
}
