package job

import (
	"fmt"

	"github.com/batonwf/baton/ast"
)

// The reducer does not run maps and loops yet: their trees grow as they
// run (a copy per element, an iteration after another), which the
// compiled tree, shared by every version of a job, does not. A workflow
// with one is refused by New and Decode, naming the node, rather than
// run wrong.

// refuseGrowing returns an error naming the first map or loop of t, in
// tree order, or nil when it has none.
func (t *tree) refuseGrowing() error {
	for id := range t.nodes {
		if k := t.nodes[id].kind; k == ast.KindMap || k == ast.KindLoop {
			return fmt.Errorf("%s at %s: this reducer does not run %s nodes yet", k, ast.ShowPath(t.path(int32(id))), k)
		}
	}
	return nil
}
