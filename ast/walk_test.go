package ast_test

import (
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
)

func TestWalkPreOrderWithPaths(t *testing.T) {
	w := ast.Par(ast.Act("a", nil), ast.Seq(ast.Act("b", nil)),
		ast.Try(ast.Act("d", nil), ast.Rescue(ast.Act("e", nil)), ast.Finally(ast.Act("f", nil))))
	var got []string
	ast.Walk(w, func(path string, n *ast.Node) bool {
		got = append(got, ast.ShowPath(path)+"="+n.Kind.String()+n.Action)
		return true
	})
	want := "root=par par[0]=acta par[1]=seq par[1].seq[0]=actb par[2]=try par[2].body=actd par[2].rescue=acte par[2].finally=actf"
	if strings.Join(got, " ") != want {
		t.Errorf("Walk visited\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	n := 0
	ast.Walk(w, func(string, *ast.Node) bool { n++; return n < 3 })
	if n != 3 {
		t.Errorf("Walk went on after f returned false: %d calls, want 3", n)
	}
}

func TestWalkDag(t *testing.T) {
	w := ast.Seq(ast.Dag(ast.Act("a", nil).Named("a"), ast.Par(ast.Act("b", nil)).Named("p").WithAfter("a")), ast.Act("c", nil))
	var got []string
	ast.Walk(w, func(path string, n *ast.Node) bool {
		got = append(got, ast.ShowPath(path)+"="+n.Kind.String()+n.Action+"/"+n.Name)
		return true
	})
	want := "root=seq/ seq[0]=dag/ seq[0].dag[0]=acta/a seq[0].dag[1]=par/p seq[0].dag[1].par[0]=actb/ seq[1]=actc/"
	if strings.Join(got, " ") != want {
		t.Errorf("Walk visited\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	if n := ast.Count(w); n != 6 {
		t.Errorf("Count = %d, want 6", n)
	}
}
