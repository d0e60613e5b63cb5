package job_test

import (
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestMapLoopRefused: a valid workflow with a map or a loop is refused by
// New, naming the node, until the reducer runs them (their trees grow).
func TestMapLoopRefused(t *testing.T) {
	for _, tc := range []struct {
		w    ast.Node
		want string
	}{
		{ast.Seq(ast.Act("l", nil).Named("xs"), ast.Map("xs", ast.Act("x", nil).WithInputs("item"))), "map at seq[1]: this reducer does not run map nodes yet"},
		{ast.Par(ast.Act("a", nil), ast.Loop(ast.Act("p", nil).Named("p"), "p", true, 3)), "loop at par[1]: this reducer does not run loop nodes yet"},
	} {
		if err := ast.Validate(tc.w); err != nil {
			t.Fatalf("Validate: %v", err)
		}
		_, err := job.New("j", tc.w)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New: %v, want %q", err, tc.want)
		}
	}
}
