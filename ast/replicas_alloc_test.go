package ast_test

import (
	"testing"

	"github.com/batonwf/baton/ast"
)

// Every job made runs Expand: on a tree without replicas it must cost
// nothing (it built every node's path to find none: about one
// allocation per node, counted exactly, so this cannot flake).
func TestExpandWithoutReplicasAllocatesNothing(t *testing.T) {
	tree := ast.Seq(ast.Par(ast.Act("a", 1), ast.Act("b", 2), ast.Act("c", 3)),
		ast.Try(ast.Act("d", 4), ast.Rescue(ast.Act("e", 5)), ast.Finally(ast.Act("f", 6))))
	if n := testing.AllocsPerRun(100, func() { ast.Expand(tree) }); n != 0 {
		t.Errorf("Expand of a tree without replicas: %v allocations, want 0", n)
	}
	with := ast.Seq(ast.Act("a", 1), ast.Act("b", 2).WithReplicas(2))
	if got := ast.Expand(with); got.Children[1].Kind != ast.KindRace || len(got.Children[1].Children) != 2 {
		t.Errorf("Expand of replicas deep in the tree: %+v", got.Children[1])
	}
}
