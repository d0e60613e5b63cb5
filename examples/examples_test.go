// Package examples_test checks the workflow files in examples/: each
// decodes, validates and uses only the actions built into the baton
// command, so 'baton run examples/NAME.json' works.
package examples_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/batonwf/baton/ast"
)

// builtins are the actions of 'baton run' (cmd/baton/actions.go).
var builtins = map[string]bool{"log": true, "sleep": true, "fail": true, "value": true, "http.get": true}

func TestWorkflowFiles(t *testing.T) {
	files, err := filepath.Glob("*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("found %d workflow files: %q", len(files), files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		root, err := ast.Decode(data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := ast.Validate(root); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		ast.Walk(root, func(_ string, n *ast.Node) bool {
			if n.Kind == ast.KindAct && !builtins[n.Action] {
				t.Errorf("%s: action %q is not built into baton run", f, n.Action)
			}
			return true
		})
	}
}
