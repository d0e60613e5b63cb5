package draw_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/draw"
	"github.com/batonwf/baton/job"
	"pgregory.net/rapid"
)

// Hostile strings: markup, quotes, entities, control characters, a
// line separator and invalid UTF-8, in IDs, payloads and failures.
var (
	propIDs      = []job.ID{"j-1", `a"<b>&'c`, "<script>alert(1)", "x]]>y&amp;"}
	propPayloads = []any{nil, 1, "plain", `</script><img src=x onerror=alert(1)>`, `"quoted" & 'single'`, "tab\there\nnew line", "\u2028 \x01 ]]>", strings.Repeat("long-", 30)}
	propErrors   = []string{"boom", `<script>alert("x")</script>`, "a & b < c > d", "bad utf-8 \xff\xfe here", "ctrl \x00\x1b[31m red"}
	propActions  = []string{"log", "a.b-c_d", strings.Repeat("x", 45)}
	// Version 3: choices and dag guards read propOn, the leaf every
	// random job runs first, whose output is null; waits wait for
	// propSignals.
	propOn         = "first"
	propCaseValues = []any{nil, "a"}
	propSignals    = []string{"go", "stop"}
)

// propTree draws a random tree of depth at most 4, of about budget nodes:
// acts, seqs, pars, tries with or without rescue and finally, and dags
// whose children are each after a random subset of those before them in
// a random order (the shape of package job's property generator).
type propTree struct {
	budget int
	named  int
}

func (d *propTree) tree(t *rapid.T, depth int) ast.Node {
	d.budget--
	kind := ast.KindAct
	if depth < 4 && d.budget > 0 {
		kind = rapid.SampledFrom([]ast.Kind{ast.KindAct, ast.KindSeq, ast.KindPar, ast.KindTry, ast.KindDag, ast.KindRace, ast.KindChoice}).Draw(t, "kind")
	}
	switch kind {
	case ast.KindAct:
		// Leaves: mostly acts, and version 3's wait, sleep and end.
		switch rapid.IntRange(0, 9).Draw(t, "leaf") {
		case 0:
			return ast.Wait(rapid.SampledFrom(propSignals).Draw(t, "signal"))
		case 1:
			return ast.Sleep(time.Second)
		case 2:
			if rapid.IntRange(0, 3).Draw(t, "end") == 0 {
				return ast.End("enough")
			}
		}
		return ast.Act(rapid.SampledFrom(propActions).Draw(t, "action"), rapid.SampledFrom(propPayloads).Draw(t, "payload"))
	case ast.KindSeq, ast.KindPar, ast.KindRace:
		kids := make([]ast.Node, rapid.IntRange(1, 5).Draw(t, "width"))
		if kind == ast.KindRace {
			kids = make([]ast.Node, rapid.IntRange(2, 4).Draw(t, "width"))
		}
		for i := range kids {
			kids[i] = d.tree(t, depth+1)
		}
		switch kind {
		case ast.KindSeq:
			return ast.Seq(kids...)
		case ast.KindRace:
			return ast.Race(kids...).WithNeed(rapid.IntRange(0, len(kids)).Draw(t, "need"))
		}
		return ast.Par(kids...).WithLimit(rapid.IntRange(0, len(kids)).Draw(t, "limit"))
	case ast.KindChoice:
		// On the output of the leaf propJob runs first (null).
		var cases []ast.ChoiceCase
		for range rapid.IntRange(1, 3).Draw(t, "cases") {
			v := rapid.SampledFrom(propCaseValues).Draw(t, "when")
			if rapid.Bool().Draw(t, "any") {
				cases = append(cases, ast.WhenAny([]any{v, "z"}, d.tree(t, depth+1)))
			} else {
				cases = append(cases, ast.When(v, d.tree(t, depth+1)))
			}
		}
		if rapid.Bool().Draw(t, "else") {
			cases = append(cases, ast.Else(d.tree(t, depth+1)))
		}
		c := ast.Choice(propOn, cases...)
		if rapid.IntRange(0, 3).Draw(t, "multi") == 0 {
			c = c.AllMatching()
		}
		return c
	case ast.KindDag:
		kids := make([]ast.Node, rapid.IntRange(1, 5).Draw(t, "width"))
		order := make([]int, len(kids))
		for i := range kids {
			kid := d.tree(t, depth+1)
			d.named++
			kids[i] = kid.Named(fmt.Sprintf("n%d", d.named))
			order[i] = i
		}
		order = rapid.Permutation(order).Draw(t, "order")
		for i, k := range order {
			for _, e := range order[:i] {
				if rapid.Bool().Draw(t, "after") {
					kids[k].After = append(kids[k].After, kids[e].Name)
				}
			}
			if len(kids[k].After) > 0 && rapid.IntRange(0, 7).Draw(t, "twice") == 7 {
				kids[k].After = append(kids[k].After, kids[k].After[0])
			}
			if rapid.IntRange(0, 3).Draw(t, "guard") == 0 {
				kids[k] = kids[k].WithWhen(propOn, rapid.SampledFrom(propCaseValues).Draw(t, "equals"))
			}
		}
		return ast.Dag(kids...)
	default:
		body := d.tree(t, depth+1)
		var opts []ast.TryOption
		if rapid.Bool().Draw(t, "rescue") {
			opts = append(opts, ast.Rescue(d.tree(t, depth+1)))
		}
		if rapid.Bool().Draw(t, "finally") {
			opts = append(opts, ast.Finally(d.tree(t, depth+1)))
		}
		return ast.Try(body, opts...)
	}
}

// propJob draws a job of a random tree, run for a random number of rounds
// in which each outstanding action succeeds, fails or stays running.
func propJob(t *rapid.T) job.Job {
	d := &propTree{budget: rapid.IntRange(1, 40).Draw(t, "budget")}
	root := ast.Seq(ast.Act("log", nil).Named(propOn), d.tree(t, 2))
	tr, err := job.New(rapid.SampledFrom(propIDs).Draw(t, "id"), root)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for range rapid.IntRange(0, 8).Draw(t, "rounds") {
		var batch []job.Result
		for _, a := range tr.Job.Outstanding() {
			switch rapid.IntRange(0, 3).Draw(t, "outcome") {
			case 0: // stays running
			case 1:
				batch = append(batch, a.Fail(rapid.SampledFrom(propErrors).Draw(t, "error")))
			default:
				batch = append(batch, a.Succeed(nil))
			}
		}
		// A timer (a sleep, a retry) fires, or a signal comes.
		if ts := tr.Job.Timers(); len(ts) > 0 && rapid.Bool().Draw(t, "fire") {
			tm := rapid.SampledFrom(ts).Draw(t, "timer")
			batch = append(batch, tm.Fire(tm.Due))
		}
		if rapid.IntRange(0, 3).Draw(t, "signal") == 0 {
			batch = append(batch, job.SignalResult(tr.Job.ID(), job.Signal{Name: rapid.SampledFrom(propSignals).Draw(t, "name"), ID: rapid.StringMatching(`[a-z]{1,3}`).Draw(t, "sid"), Payload: []byte(`"ok"`)}))
		}
		if len(batch) == 0 {
			break
		}
		if tr, err = job.Restart(tr.Job, batch); err != nil {
			t.Fatalf("Restart: %v", err)
		}
	}
	return tr.Job
}

// propOptions draws options that close and open groups often: small
// GroupOver and MaxBoxes, and random inner nodes to expand.
func propOptions(t *rapid.T, j job.Job) draw.Options {
	o := draw.Options{
		GroupOver: rapid.SampledFrom([]int{0, 1, 2, 3}).Draw(t, "groupOver"),
		MaxBoxes:  rapid.SampledFrom([]int{0, 1, 2, 4, 8, 30}).Draw(t, "maxBoxes"),
		Expand:    map[string]bool{},
	}
	j.Walk(func(n job.NodeInfo) bool {
		if n.Kind != ast.KindAct && rapid.Bool().Draw(t, "expand") {
			o.Expand[n.Path] = true
		}
		return true
	})
	return o
}

func svgOf(t *rapid.T, j job.Job, o draw.Options) (*draw.Graph, []byte) {
	g, err := draw.Layout(j, o)
	if err != nil {
		t.Fatalf("Layout: %v", err)
	}
	var b bytes.Buffer
	if err := g.SVG(&b); err != nil {
		t.Fatalf("SVG: %v", err)
	}
	return g, b.Bytes()
}

// TestDrawProperties checks, on random trees in random states under
// random options: the contracts (checkGraph: boxes apart, every node once,
// edges between drawn boxes, XML without script or reference); that the
// same job, and the same job encoded and decoded, draw the same bytes;
// and that hostile text shows literally, escaped.
func TestDrawProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		j := propJob(t)
		o := propOptions(t, j)
		g, svg := svgOf(t, j, o)
		if err := checkGraph(j, o, g, svg); err != nil {
			t.Fatalf("%v\n%s\n%s", err, job.Describe(j), svg)
		}
		var page bytes.Buffer
		if err := g.PageSVG(&page); err != nil {
			t.Fatal(err)
		}
		if err := checkPageSVG(g, svg, page.Bytes()); err != nil {
			t.Fatalf("page SVG: %v\n%s\n%s", err, job.Describe(j), page.Bytes())
		}

		_, again := svgOf(t, j, o)
		enc, err := job.Encode(j)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := job.Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		_, decoded := svgOf(t, dec, o)
		if !bytes.Equal(svg, again) || !bytes.Equal(svg, decoded) {
			t.Fatalf("the same job drew differently:\n%s\n---\n%s\n---\n%s", svg, again, decoded)
		}

		if bytes.Contains(svg, []byte("<script")) || bytes.Contains(svg, []byte("<img")) {
			t.Fatalf("hostile markup in the SVG:\n%s", svg)
		}
		texts := chardata(t, svg)
		if want := "job " + string(j.ID()); !strings.HasPrefix(texts[0], want[:min(len(want), 10)]) {
			t.Fatalf("the title is %q, want it to start with %q", texts[0], want)
		}
		for _, b := range g.Boxes {
			if b.Payload != "" && b.Name == "" && b.Guard == "" && !texts.has(b.Payload) {
				t.Fatalf("box %q: its payload %q is not shown as text", b.Path, b.Payload)
			}
			if b.Error != "" && !texts.hasPrefix("✗ "+b.Status.String()+": "+b.Error[:min(len(b.Error), 5)]) {
				t.Fatalf("box %q: its error %q is not shown as text", b.Path, b.Error)
			}
		}
	})
}

type texts []string

func (ts texts) has(s string) bool {
	for _, t := range ts {
		if t == s {
			return true
		}
	}
	return false
}

func (ts texts) hasPrefix(s string) bool {
	for _, t := range ts {
		if strings.HasPrefix(t, s) {
			return true
		}
	}
	return false
}

// chardata returns the text of every element of svg, as a reader of the
// SVG sees it.
func chardata(t *rapid.T, svg []byte) texts {
	var out texts
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("the SVG does not parse: %v", err)
		}
		if c, ok := tok.(xml.CharData); ok && strings.TrimSpace(string(c)) != "" {
			out = append(out, string(c))
		}
	}
}
