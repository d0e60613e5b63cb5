package job_test

import (
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestMapLoopRun: New runs a workflow with a map or a loop (it refused
// them before the reducer ran them), starting what starts with the job.
func TestMapLoopRun(t *testing.T) {
	for _, tc := range []struct {
		w    ast.Node
		want []string
	}{
		{ast.Seq(ast.Act("l", nil).Named("xs"), ast.Map("xs", ast.Act("x", nil).WithInputs("item"))), []string{"seq[0]#1"}},
		{ast.Par(ast.Act("a", nil), ast.Loop(ast.Act("p", nil).Named("p"), "p", true, 3)), []string{"par[0]#1", "par[1].loop[0]#1"}},
	} {
		tr, err := job.New("j", tc.w)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		if len(tr.Actions) != len(tc.want) {
			t.Fatalf("actions %v, want %v", tr.Actions, tc.want)
		}
		for i, a := range tr.Actions {
			if a.ID != tc.want[i] {
				t.Errorf("action %d is %s, want %s", i, a.ID, tc.want[i])
			}
		}
	}
}
