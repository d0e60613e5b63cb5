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

// TestSkipped: a case a choice did not select is drawn in every format,
// skipped's colours filled in (not empty) and its word shown.
func TestSkipped(t *testing.T) {
	tr, err := job.New("j-1", ast.Seq(
		ast.Act("log", "x").Named("tier"),
		ast.Choice("tier", ast.When("gold", ast.Act("gold", nil)), ast.Else(ast.Act("other", nil))),
	))
	if err != nil {
		t.Fatal(err)
	}
	tr, err = job.Restart(tr.Job, []job.Result{tr.Job.Outstanding()[0].Succeed([]byte(`"silver"`))})
	if err != nil {
		t.Fatal(err)
	}
	skipped := statusStyles[job.StatusSkipped]
	if skipped.fill == "" || skipped.stroke == "" {
		t.Fatalf("no colours for skipped: %+v", skipped)
	}
	dot := Dot(tr.Job)
	if !strings.Contains(dot, `"gold\nseq[1].choice[0]\nskipped", fillcolor="`+skipped.fill+`"`) {
		t.Errorf("dot draws the skipped case without its colour:\n%s", dot)
	}
	mermaid := Mermaid(tr.Job)
	if !strings.Contains(mermaid, "skipped\"]:::skipped") || !strings.Contains(mermaid, "classDef skipped fill:"+skipped.fill) {
		t.Errorf("mermaid draws the skipped case without its class:\n%s", mermaid)
	}
	out, err := SVG(tr.Job)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-path="seq[1].choice[0]" data-status="skipped"`, "↷ skipped", "on tier → else", ">else<", `>when "gold"<`} {
		if !strings.Contains(out, want) {
			t.Errorf("SVG has no %s:\n%s", want, out)
		}
	}
}
