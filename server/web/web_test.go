package web_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/draw"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server/web"
)

func at(sec int) *time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC).Add(time.Duration(sec) * time.Second)
	return &t
}

// steps is a history: v1 creates and dispatches a#1 and b#1; v2 applies
// a#1 (ok) and dispatches a retry of b (b#2) after b#1 failed at v3...
func stampedSteps(stamped bool) []api.Step {
	t := func(s int) *time.Time {
		if !stamped {
			return nil
		}
		return at(s)
	}
	return []api.Step{
		{Version: 1, Created: true, Time: t(0), Dispatched: []string{"par[0]#1", "par[1]#1"}, Status: "running"},
		{Version: 2, Time: t(2), Results: []api.Result{{ActionID: "par[0]#1", Path: "par[0]", Action: "a", OK: true, At: t(2)}}, Status: "running"},
		{Version: 3, Time: t(4), Results: []api.Result{{ActionID: "par[1]#1", Path: "par[1]", Action: "b", Error: "boom", At: t(4)}}, Dispatched: []string{"par[1]#2"}, Status: "running"},
		{Version: 4, Time: t(8), Results: []api.Result{{ActionID: "par[1]#2", Path: "par[1]", Action: "b", OK: true, At: t(8)}}, Status: "succeeded"},
	}
}

// TestTimeline: a bar per attempt, from the step that dispatched it to
// the one that applied its result, placed by time: bars of one node on
// its row, each as long as its attempt took; a history without stamps
// (format 1) is drawn by version and says so.
func TestTimeline(t *testing.T) {
	tl := web.TimelineOf(stampedSteps(true), *at(100))
	if tl.Axis != "time" || tl.Note != "" || len(tl.Bars) != 3 || len(tl.Rows) != 2 {
		t.Fatalf("timeline: %+v", tl)
	}
	want := []struct {
		path           string
		attempt        int
		from, to       uint64
		status, took   string
		sameRowAsIndex int
	}{
		{"par[0]", 1, 1, 2, "succeeded", "2.0s", -1},
		{"par[1]", 1, 1, 3, "failed", "4.0s", -1},
		{"par[1]", 2, 3, 4, "succeeded", "4.0s", 1},
	}
	for i, w := range want {
		b := tl.Bars[i]
		if b.Path != w.path || b.Attempt != w.attempt || b.Version != w.from || b.Applied != w.to || b.Status != w.status || b.Took != w.took {
			t.Errorf("bar %d: %+v, want %+v", i, b, w)
		}
		if w.sameRowAsIndex >= 0 && tl.Bars[w.sameRowAsIndex].Y != b.Y {
			t.Errorf("bar %d is not on the row of bar %d", i, w.sameRowAsIndex)
		}
	}
	// Times: par[1]#1 spans 0-4s and #2 4-8s of an 8s axis: equal widths,
	// twice that of par[0]#1 (0-2s), end to end.
	b0, b1, b2 := tl.Bars[0], tl.Bars[1], tl.Bars[2]
	if b1.W != b2.W || b1.X+b1.W != b2.X || b0.X != b1.X || abs(b1.W-2*b0.W) > 1 {
		t.Errorf("bars not placed by time: %+v %+v %+v", b0, b1, b2)
	}
	if tl.Span != "8.0s" || tl.Ticks[len(tl.Ticks)-1].Label != "+8.0s" {
		t.Errorf("span %q ticks %+v", tl.Span, tl.Ticks)
	}

	// Still running at the version shown: to the end given.
	running := web.TimelineOf(stampedSteps(true)[:3], *at(6))
	if b := running.Bars[2]; b.Status != "running" || b.Applied != 0 || b.Took != "2.0s" {
		t.Errorf("a running attempt: %+v", b)
	}

	// No stamps: by version, said so.
	v := web.TimelineOf(stampedSteps(false), time.Time{})
	if v.Axis != "version" || !strings.Contains(v.Note, "format 1") || len(v.Bars) != 3 || v.Ticks[0].Label != "v1" {
		t.Fatalf("without stamps: %+v", v)
	}
	if b := v.Bars; b[0].W >= b[1].W || b[1].X+b[1].W != b[2].X {
		t.Errorf("bars not placed by version: %+v", b)
	}
	if empty := web.TimelineOf(nil, time.Time{}); len(empty.Bars) != 0 {
		t.Errorf("no steps: %+v", empty)
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// TestTimelineBound: past MaxBars attempts only the newest are drawn and
// the rest counted.
func TestTimelineBound(t *testing.T) {
	var disp []string
	n := web.MaxBars + 7
	for i := range n {
		disp = append(disp, job.ActionID("par["+strconv.Itoa(i)+"]", 1))
	}
	tl := web.TimelineOf([]api.Step{{Version: 1, Time: at(0), Dispatched: disp}}, *at(1))
	if len(tl.Bars) != web.MaxBars || tl.Omitted != 7 || tl.Bars[0].Path != "par[7]" {
		t.Errorf("%d bars, %d omitted, first %q", len(tl.Bars), tl.Omitted, tl.Bars[0].Path)
	}
}

// TestStepFilter: a step shows when some result matches every filter;
// the others are rendered hidden (the script can show them again).
func TestStepFilter(t *testing.T) {
	tr, err := job.New("f", ast.Par(ast.Act("a", nil), ast.Act("b", nil)))
	if err != nil {
		t.Fatal(err)
	}
	steps := stampedSteps(true)
	for _, c := range []struct {
		f    web.StepFilter
		want []uint64 // versions shown
	}{
		{web.StepFilter{}, []uint64{1, 2, 3, 4}},
		{web.StepFilter{Status: "failed"}, []uint64{3}},
		{web.StepFilter{Status: "succeeded", Action: "b"}, []uint64{4}},
		{web.StepFilter{Path: "par[0]"}, []uint64{1, 2}},
		{web.StepFilter{Action: "nope"}, nil},
		{web.StepFilter{Status: "cancel"}, nil},
	} {
		v := web.JobViewOf(web.JobInput{Summary: api.Summary{ID: "f", Status: "succeeded", Version: 4}, Job: tr.Job, Latest: 4, Steps: steps, History: true, Filter: c.f})
		var shown []uint64
		for _, s := range v.Steps {
			if !s.Hidden {
				shown = append(shown, s.Version)
			}
		}
		if !slices.Equal(shown, c.want) || len(v.Steps) != 4 {
			t.Errorf("%+v: shown %v of %d, want %v", c.f, shown, len(v.Steps), c.want)
		}
	}
}

// TestStepsPaged: at most StepsShown steps are listed, the newest by
// default, with links to the others.
func TestStepsPaged(t *testing.T) {
	tr, err := job.New("p", ast.Act("a", nil))
	if err != nil {
		t.Fatal(err)
	}
	var steps []api.Step
	for v := uint64(1); v <= web.StepsShown+50; v++ {
		steps = append(steps, api.Step{Version: v, Status: "running"})
	}
	v := web.JobViewOf(web.JobInput{Summary: api.Summary{ID: "p", Version: uint64(len(steps))}, Job: tr.Job, Latest: uint64(len(steps)), Steps: steps, History: true})
	if len(v.Steps) != web.StepsShown || v.Steps[0].Version != 51 || v.EarlierURL == "" || v.LaterURL != "" {
		t.Errorf("newest: %d steps from v%d, earlier %q later %q", len(v.Steps), v.Steps[0].Version, v.EarlierURL, v.LaterURL)
	}
	if !strings.Contains(v.EarlierURL, "steps_from=1#") {
		t.Errorf("earlier: %q", v.EarlierURL)
	}
	v = web.JobViewOf(web.JobInput{Summary: api.Summary{ID: "p", Version: uint64(len(steps))}, Job: tr.Job, Latest: uint64(len(steps)), Steps: steps, History: true, StepsFrom: 1})
	if len(v.Steps) != web.StepsShown || v.Steps[0].Version != 1 || v.EarlierURL != "" || !strings.Contains(v.LaterURL, "steps_from="+strconv.Itoa(web.StepsShown+1)+"#") {
		t.Errorf("from 1: %d steps from v%d, earlier %q later %q", len(v.Steps), v.Steps[0].Version, v.EarlierURL, v.LaterURL)
	}
}

// TestExpandParam: the expand parameter round-trips, the root ("")
// included.
func TestExpandParam(t *testing.T) {
	for _, paths := range [][]string{nil, {""}, {"", "par[1]"}, {"par[0]", "seq[2].body"}} {
		p := web.ExpandParam(paths)
		if got := web.ParseExpand(p); !slices.Equal(got, paths) {
			t.Errorf("%q: %q reads %q", paths, p, got)
		}
	}
	if got := web.ParseExpand("b,a,b"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("b,a,b: %q", got)
	}
}

// TestTreeSelectAndInline: the inline tree is draw's PageSVG: no <style>
// (the pages' CSP refuses it; baton.css styles the drawing) and every
// box's words in an HTML label, no SVG text; Select marks one node.
func TestTreeSelectAndInline(t *testing.T) {
	big := make([]ast.Node, 150)
	for i := range big {
		big[i] = ast.Act("a", i)
	}
	tr, err := job.New("t", ast.Seq(ast.Act("x", nil), ast.Par(big...)))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := web.DrawTree(tr.Job, nil)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(tree.SVG)
	if strings.Contains(svg, "<style") || strings.Count(svg, ` data-kind=`) != tree.Boxes ||
		strings.Count(svg, `<foreignObject class="label"`) != tree.Boxes || strings.Contains(svg, "<text class=\"state\"") {
		t.Errorf("the inline tree (no style, one HTML label a box):\n%s", svg)
	}
	if len(tree.Groups) != 1 || tree.Groups[0].Path != "seq[1]" {
		t.Errorf("groups %+v", tree.Groups)
	}
	sel := tree.Select("seq[1]")
	if !strings.Contains(string(sel.SVG), `class="node group selected" data-path="seq[1]"`) || strings.Count(string(sel.SVG), "selected") != 1 {
		t.Errorf("select a group: %s", sel.SVG)
	}
	if tree.Select("seq[1].par[3]").SVG != tree.SVG {
		t.Errorf("selecting a node in a closed group changed the drawing")
	}
	open, err := web.DrawTree(tr.Job, []string{"seq[1]"})
	if err != nil {
		t.Fatal(err)
	}
	if open.Boxes != 153 || len(open.Groups) != 0 {
		t.Errorf("opened: %d boxes, groups %+v", open.Boxes, open.Groups)
	}
}

// TestTimelinePacked: past MaxNamedRows nodes the bars share lanes: a
// seq's attempts, one after another, take one lane; a par's, all at
// once, one lane each.
func TestTimelinePacked(t *testing.T) {
	n := web.MaxNamedRows + 10
	var seq []api.Step
	seq = append(seq, api.Step{Version: 1, Time: at(0), Dispatched: []string{"seq[0]#1"}})
	for i := range n {
		st := api.Step{Version: uint64(i + 2), Time: at(i + 1), Results: []api.Result{{ActionID: "seq[" + strconv.Itoa(i) + "]#1", Path: "seq[" + strconv.Itoa(i) + "]", OK: true, At: at(i + 1)}}}
		if i+1 < n {
			st.Dispatched = []string{"seq[" + strconv.Itoa(i+1) + "]#1"}
		}
		seq = append(seq, st)
	}
	tl := web.TimelineOf(seq, *at(n))
	if !tl.Packed || len(tl.Rows) != 1 || len(tl.Bars) != n || tl.Rows[0].Label != "" {
		t.Errorf("a seq of %d: packed %v into %d rows, %d bars", n, tl.Packed, len(tl.Rows), len(tl.Bars))
	}
	for i := 1; i < n; i++ {
		if a, b := tl.Bars[i-1], tl.Bars[i]; a.Y != b.Y || a.X+a.W > b.X {
			t.Errorf("bars %d and %d: %+v %+v", i-1, i, a, b)
		}
	}
	var disp []string
	for i := range n {
		disp = append(disp, "par["+strconv.Itoa(i)+"]#1")
	}
	tl = web.TimelineOf([]api.Step{{Version: 1, Time: at(0), Dispatched: disp}}, *at(1))
	if !tl.Packed || len(tl.Rows) != n {
		t.Errorf("a par of %d at once: %d rows", n, len(tl.Rows))
	}
	small := web.TimelineOf(stampedSteps(true), *at(10))
	if small.Packed || small.Rows[0].Label != "par[0]" {
		t.Errorf("a small job's rows are not its nodes: %+v", small.Rows)
	}
}

// TestCSSStylesTheInlineTree: the page shows draw's PageSVG, without
// its <style> and with each box as HTML (a div.label whose p.state is the
// band), so baton.css has a rule for each of draw.StyleSheet's selectors
// of what the page's drawing shares with SVG's (title, lanes, edges), and
// for each state draw.StyleSheet colours (idle is baton.css's default)
// a rule that outlines its box and one that fills its band.
func TestCSSStylesTheInlineTree(t *testing.T) {
	css, _, ok := web.Asset("baton.css")
	if !ok {
		t.Fatal("no baton.css")
	}
	states := 0
	for _, line := range strings.Split(strings.TrimSpace(draw.StyleSheet), "\n") {
		sel, _, _ := strings.Cut(line, "{")
		if word, ok := strings.CutPrefix(sel, ".baton-graph .node[data-status="); ok {
			word, _, _ = strings.Cut(word, "]")
			if word == "idle" || !strings.HasSuffix(sel, " .band") {
				continue
			}
			states++
			for _, want := range []string{" div.label {", " .state { background: var(--baton-" + word + ");"} {
				if !strings.Contains(string(css), ".baton-graph .node[data-status="+word+"]"+want) {
					t.Errorf("baton.css has no rule .baton-graph .node[data-status=%s]%s", word, want)
				}
			}
			continue
		}
		if sel == ".baton-graph" || strings.HasPrefix(sel, ".baton-graph .node ") {
			continue // the palette; the box's parts of a state draw does not know
		}
		switch sel {
		case ".baton-graph .box", ".baton-graph .band", ".baton-graph .head", ".baton-graph .head tspan", ".baton-graph .line", ".baton-graph .count":
			continue // SVG's box: a div.label of p lines in the page
		}
		if !strings.Contains(string(css), sel+" {") {
			t.Errorf("baton.css has no rule for %s (draw's %s)", sel, line)
		}
	}
	if states < 5 {
		t.Errorf("draw.StyleSheet colours %d states' bands; want running, succeeded, failed, cancelled and skipped", states)
	}
}

// TestTimelineNamesWorkers: each attempt's bar names the worker that ran
// it, from its result: in the bar, its tooltip and its data-worker (which
// the panel's attempts read); an attempt still running, or whose result
// names none, names none.
func TestTimelineNamesWorkers(t *testing.T) {
	steps := stampedSteps(true)
	steps[1].Results[0].Worker = "w1"
	steps[2].Results[0].Worker = "host-b-42-00ff"
	tl := web.TimelineOf(steps[:3], *at(6))
	if len(tl.Bars) != 3 {
		t.Fatalf("timeline: %+v", tl)
	}
	for i, want := range []string{"w1", "host-b-42-00ff", ""} {
		b := tl.Bars[i]
		if b.Worker != want {
			t.Errorf("bar %d names worker %q, want %q", i, b.Worker, want)
		}
		if on := strings.Contains(b.Title, " on "); on != (want != "") || (want != "" && !strings.Contains(b.Title, "on "+want)) {
			t.Errorf("bar %d's title %q, want it to say on %q", i, b.Title, want)
		}
	}
	svg := string(tl.SVG("t"))
	if !strings.Contains(svg, `data-worker="w1"`) || !strings.Contains(svg, `data-worker="host-b-42-00ff"`) || strings.Count(svg, "data-worker=") != 2 {
		t.Errorf("the bars' data-worker:\n%s", svg)
	}
}
