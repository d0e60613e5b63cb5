package job_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/job/jobtest"
)

// scnRewrite reports whether -rewrite was given. The flag is looked up
// rather than assumed ours, so that another test file of the package may
// define it too.
var scnRewrite = scnBoolFlag("rewrite", "rewrite the expected output in testdata/*.txt with what the code prints")

func scnBoolFlag(name, usage string) func() bool {
	if f := flag.Lookup(name); f != nil {
		return func() bool { return f.Value.String() == "true" }
	}
	p := flag.Bool(name, false, usage)
	return func() bool { return *p }
}

// TestScenarios runs every testdata/*.txt script through jobtest.Env (see
// package jobtest for the script language) and compares what each command
// prints with the expected output in the file. With -rewrite it writes the
// output back into the file instead; review the change as a diff.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios in testdata/*.txt")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			scnRunFile(t, file)
		})
	}
}

func scnRunFile(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	script, err := jobtest.ParseScript(file, data)
	if err != nil {
		t.Fatal(err)
	}
	env := &jobtest.Env{Check: job.Check}
	for _, c := range script.Cases() {
		got, err := env.Run(c)
		if err != nil {
			// A script mistake or a broken contract: the state after it
			// means nothing, so stop here, and never rewrite.
			t.Fatal(err)
		}
		if scnRewrite() {
			c.Want = got
			continue
		}
		if got != c.Want {
			t.Errorf("%s: %s: output differs (-want +got):\n%s", c.Pos, c.Cmd, scnDiff(c.Want, got))
		}
	}
	if scnRewrite() {
		if out := script.Bytes(); !bytes.Equal(out, data) {
			if err := os.WriteFile(file, out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// scnDiff returns a line diff of want and got: lines only in want start
// with "-", lines only in got with "+", common lines with " ". It is the
// plain longest-common-subsequence diff, fine for outputs of a few dozen
// lines.
func scnDiff(want, got string) string {
	a := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
	b := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if want == "" {
		a = nil
	}
	if got == "" {
		b = nil
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var d strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			fmt.Fprintf(&d, "  %s\n", a[i])
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&d, "- %s\n", a[i])
			i++
		default:
			fmt.Fprintf(&d, "+ %s\n", b[j])
			j++
		}
	}
	return d.String()
}

// TestScenarioSyntax checks that the compact syntax of the scripts
// (jobtest.ParseWorkflow and FormatWorkflow) holds every random workflow
// of the property tests, dags, names, afters and inputs included: what
// FormatWorkflow writes reads back as the same tree.
func TestScenarioSyntax(t *testing.T) {
	propCheck(t, func(t *rapid.T, shape propShape) {
		c := propDrawCase(t, shape, 0)
		text := jobtest.FormatWorkflow(c.Tree)
		back, err := jobtest.ParseWorkflow(text)
		if err != nil {
			t.Fatalf("ParseWorkflow(%s): %v", text, err)
		}
		if !ast.Equal(back, c.Tree) {
			b, _ := ast.Encode(back)
			t.Fatalf("%s reads back as\n%s\nwant\n%s", text, b, c)
		}
	})
}
