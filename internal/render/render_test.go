package render

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

func TestEscaping(t *testing.T) {
	if got := dotQuote("a\"b\\c\nd"); got != `"a\"b\\c\nd"` {
		t.Errorf("dotQuote = %s", got)
	}
	if got := mermaidEscape(`say "hi" <b> #1`); got != `say #34;hi#34; #60;b#62; #35;1` {
		t.Errorf("mermaidEscape = %s", got)
	}
}

func TestSVG(t *testing.T) {
	tr, err := job.New("j-1", ast.Seq(ast.Act("log", "a"), ast.Try(ast.Act("x", nil).Named("a_b"), ast.Rescue(ast.Act("z", nil)))))
	if err != nil {
		t.Fatal(err)
	}
	out, err := SVG(tr.Job)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal([]byte(out), new(struct{})); err != nil {
		t.Fatalf("not XML: %v\n%s", err, out)
	}
	for _, want := range []string{`data-path="seq[0]" data-status="running"`, `data-path="seq[1]" data-status="idle"`, ">rescue<"} {
		if !strings.Contains(out, want) {
			t.Errorf("SVG has no %s:\n%s", want, out)
		}
	}
}
