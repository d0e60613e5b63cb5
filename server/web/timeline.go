package web

import (
	"html"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// Timeline geometry, in the SVG's user units.
const (
	timelineW  = 1000
	labelW     = 240
	plotW      = timelineW - labelW - 16
	axisH      = 24
	rowH       = 16
	barH       = 11
	minBarW    = 2
	tickCount  = 5
	labelChars = 34
	MaxBars    = 2000 // bars drawn at most; older attempts are counted, not drawn
	// MaxNamedRows bounds the rows of one node each; past it the bars
	// are packed into lanes (Timeline.Packed).
	MaxNamedRows = 50
	axisTime     = "time"
	axisVersion  = "version"
)

// Timeline is a job's history drawn as bars: one per action attempt, from
// the step that dispatched it to the step that applied its result, on a
// time axis (the stamps on the results), or on the versions when the
// history has no stamps (a job of format 1).
type Timeline struct {
	// Axis is "time" or "version".
	Axis string
	// Note says why the axis is the versions, when it is.
	Note          string
	Width, Height int
	Rows          []Row
	Bars          []Bar
	Ticks         []Tick
	// Omitted counts the oldest attempts not drawn (past MaxBars).
	Omitted int
	// Packed says the attempts of more than MaxNamedRows nodes share
	// lanes (an attempt takes the first lane free when it starts), so
	// the rows are concurrency, not nodes, and have no labels.
	Packed bool
	// Span is the time the axis covers (Axis "time").
	Span string
}

// Row is one node's row: the attempts of one action node; or, packed,
// a lane of attempts that do not overlap (Path and Label "").
type Row struct {
	Path  string
	Label string
	Y     int // the row's text baseline
}

// Bar is one action attempt.
type Bar struct {
	Path     string
	ActionID string
	Attempt  int
	// Version is the step that dispatched the attempt; Applied the one
	// that applied its result (0: not yet, at the version shown).
	Version, Applied uint64
	// Status is succeeded, failed, cancelled, or running (no result yet).
	Status string
	// Worker names the worker that ran the attempt, from its result
	// (api.Result.Worker); "" while it runs, or when its result names none.
	Worker string
	// Took is the attempt's time from dispatch to result (or to the end
	// of the axis when running), on a time axis.
	Took       string
	Title      string
	X, Y, W, H int
}

// Tick is a mark on the axis.
type Tick struct {
	X     int
	Label string
}

// attempt is a bar before it is placed.
type attempt struct {
	Bar
	from, to time.Time
}

// TimelineOf draws the timeline of steps (a job's history from its
// creation, in order, up to the version shown). end is where the attempts
// still running end: now for a live job, the time of the last step shown
// for a past version.
func TimelineOf(steps []api.Step, end time.Time) Timeline {
	tl := Timeline{Axis: axisTime, Width: timelineW}
	if len(steps) == 0 {
		tl.Height = axisH
		return tl
	}
	stamped := true
	for _, st := range steps[1:] {
		if st.Time == nil {
			stamped = false
		}
	}
	start := time.Time{}
	switch {
	case steps[0].Time != nil:
		start = *steps[0].Time
	case len(steps) > 1 && steps[1].Time != nil:
		start = *steps[1].Time
	default:
		stamped = false
	}
	if !stamped {
		tl.Axis = axisVersion
		tl.Note = "This job's results carry no time stamps (a job of format 1): the timeline is drawn in version order."
	}
	stepTime := func(st api.Step) time.Time {
		if st.Time != nil {
			return *st.Time
		}
		return start
	}
	// Only the newest MaxBars attempts are drawn: the older ones are
	// counted and skipped, never made (a par of 100,000 dispatches them
	// all in one step).
	total := 0
	for _, st := range steps {
		total += len(st.Dispatched)
	}
	skip := max(0, total-MaxBars)
	tl.Omitted = skip
	atts := make([]*attempt, 0, min(total, MaxBars))
	open := map[string]*attempt{}
	for _, st := range steps {
		for _, r := range st.Results {
			a := open[r.ActionID]
			if a == nil || r.Timer {
				continue
			}
			delete(open, r.ActionID)
			a.Applied, a.Worker = st.Version, r.Worker
			a.to = stepTime(st)
			if r.At != nil {
				a.to = *r.At
			}
			switch {
			case r.OK:
				a.Status = "succeeded"
			case r.Kind == job.KindCancelled:
				a.Status = "cancelled"
			default:
				a.Status = "failed"
			}
		}
		for _, id := range st.Dispatched {
			if skip > 0 {
				skip--
				continue
			}
			path, n, err := job.SplitActionID(id)
			if err != nil {
				continue
			}
			a := &attempt{Bar: Bar{Path: path, ActionID: id, Attempt: n, Version: st.Version, Status: "running"}, from: stepTime(st)}
			open[id] = a
			atts = append(atts, a)
		}
	}
	last := steps[len(steps)-1]
	lastV := last.Version
	t1 := stepTime(last)
	if stamped {
		for _, a := range atts {
			if a.Applied == 0 {
				a.to = end
			}
			if a.to.After(t1) {
				t1 = a.to
			}
		}
	}
	span := t1.Sub(start)
	if span <= 0 {
		span = time.Millisecond
	}
	xOfTime := func(t time.Time) int { return labelW + int(float64(plotW)*float64(t.Sub(start))/float64(span)) }
	// On the version axis, version v spans [v, v+1): a running attempt
	// reaches the end of the last version.
	vs := float64(lastV)
	xOfVersion := func(v uint64) int { return labelW + int(float64(plotW)*float64(v-1)/vs) }
	paths := map[string]int{}
	for _, a := range atts {
		if _, ok := paths[a.Path]; !ok {
			paths[a.Path] = len(paths)
		}
	}
	tl.Packed = len(paths) > MaxNamedRows
	var laneEnds []int // packed: where each lane's last bar ends
	for _, a := range atts {
		b := a.Bar
		if stamped {
			b.X, b.W = xOfTime(a.from), xOfTime(a.to)-xOfTime(a.from)
			b.Took = Duration(a.to.Sub(a.from))
		} else {
			to := a.Applied
			if to == 0 {
				to = lastV + 1
			}
			b.X, b.W = xOfVersion(a.Version), xOfVersion(to)-xOfVersion(a.Version)
		}
		if b.X+minBarW > labelW+plotW {
			b.X = labelW + plotW - minBarW
		}
		if b.W < minBarW {
			b.W = minBarW
		}
		row := paths[a.Path]
		if tl.Packed {
			// Bars start in dispatch order: each takes the first lane
			// free by then.
			row = len(laneEnds)
			for i, end := range laneEnds {
				if end <= b.X {
					row = i
					break
				}
			}
			if row == len(laneEnds) {
				laneEnds = append(laneEnds, 0)
			}
			laneEnds[row] = b.X + b.W
		}
		for len(tl.Rows) <= row {
			r := Row{Y: axisH + len(tl.Rows)*rowH + barH}
			if !tl.Packed {
				r.Path, r.Label = a.Path, clipText(ast.ShowPath(a.Path), labelChars)
			}
			tl.Rows = append(tl.Rows, r)
		}
		b.Y, b.H = axisH+row*rowH+2, barH
		b.Title = barTitle(b)
		tl.Bars = append(tl.Bars, b)
	}
	tl.Height = axisH + len(tl.Rows)*rowH + 8
	for k := 0; k < tickCount; k++ {
		x := labelW + plotW*k/(tickCount-1)
		if stamped {
			tl.Ticks = append(tl.Ticks, Tick{X: x, Label: "+" + Duration(span*time.Duration(k)/(tickCount-1))})
		} else {
			v := 1 + uint64(float64(lastV)*float64(k)/(tickCount-1))
			tl.Ticks = append(tl.Ticks, Tick{X: x, Label: "v" + strconv.FormatUint(v, 10)})
		}
	}
	if stamped {
		tl.Span = Duration(span)
	}
	return tl
}

// barTitle is a bar's tooltip: which attempt, from which step to which,
// how long, how it ended.
func barTitle(b Bar) string {
	t := ast.ShowPath(b.Path) + " attempt " + strconv.Itoa(b.Attempt) + ": dispatched at v" + strconv.FormatUint(b.Version, 10)
	if b.Applied > 0 {
		t += ", result at v" + strconv.FormatUint(b.Applied, 10)
	}
	if b.Took != "" {
		t += ", " + b.Took
	}
	if b.Worker != "" {
		t += ", on " + b.Worker
	}
	return t + ", " + b.Status
}

// clipText cuts s to at most n characters, the last "…" when cut.
func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// SVG writes the timeline as inline SVG for a page: the axis and its
// ticks, a label per row, a rect.bar per attempt (data-path,
// data-version, data-applied, data-attempt, data-status, data-worker when
// its result names one, data-took on a time axis). A bar has no <title>:
// the page's script makes it (Bar.Title) when the bar is pointed at or
// focused, so a job's thousand bars are a thousand elements fewer to
// parse at load.
// Every string is escaped. It is written here rather than by the page's
// template: thousands of bars through html/template's reflection cost
// tens of milliseconds a page.
func (tl Timeline) SVG(labelledBy string) template.HTML {
	var b strings.Builder
	b.Grow(256 + 320*len(tl.Bars))
	w, h := strconv.Itoa(tl.Width), strconv.Itoa(tl.Height)
	b.WriteString(`<svg class="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ` + w + " " + h + `" width="` + w + `" height="` + h +
		`" role="img" aria-labelledby="` + html.EscapeString(labelledBy) + `" font-family="sans-serif" font-size="11">` + "\n")
	b.WriteString(`<g class="axis">`)
	for _, t := range tl.Ticks {
		x := strconv.Itoa(t.X)
		b.WriteString(`<line class="tick" x1="` + x + `" y1="16" x2="` + x + `" y2="` + h + `" stroke="#B3B3B3" stroke-dasharray="2 3"/>`)
		b.WriteString(`<text class="tick-label" x="` + x + `" y="12" text-anchor="middle" fill="#4D4D4D">` + html.EscapeString(t.Label) + `</text>`)
	}
	b.WriteString("</g>\n<g class=\"rows\">")
	for _, r := range tl.Rows {
		if r.Label == "" {
			continue
		}
		b.WriteString(`<text class="row-label" x="4" y="` + strconv.Itoa(r.Y) + `" data-row="` + html.EscapeString(r.Path) + `" fill="#1A1A1A">` + html.EscapeString(r.Label) + `</text>`)
	}
	b.WriteString("</g>\n<g class=\"bars\">")
	// One tab stop for the whole timeline (the first bar); the arrows
	// move along the bars (baton.js), which keeps a job of 1,000
	// attempts from being 1,000 stops of the Tab key.
	stop := `0`
	for _, bar := range tl.Bars {
		b.WriteString(`<rect class="bar" tabindex="` + stop + `" data-path="` + html.EscapeString(bar.Path) +
			`" data-version="` + strconv.FormatUint(bar.Version, 10) + `" data-applied="` + strconv.FormatUint(bar.Applied, 10) +
			`" data-attempt="` + strconv.Itoa(bar.Attempt) + `" data-status="` + html.EscapeString(bar.Status))
		if bar.Worker != "" {
			b.WriteString(`" data-worker="` + html.EscapeString(bar.Worker))
		}
		if bar.Took != "" {
			b.WriteString(`" data-took="` + html.EscapeString(bar.Took))
		}
		b.WriteString(`" x="` + strconv.Itoa(bar.X) + `" y="` + strconv.Itoa(bar.Y) + `" width="` + strconv.Itoa(bar.W) + `" height="` + strconv.Itoa(bar.H) +
			`" rx="2"/>` + "\n")
		stop = `-1`
	}
	b.WriteString("</g>\n</svg>")
	return template.HTML(b.String())
}
