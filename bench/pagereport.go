package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// pageReport is what a -page run measured, ready to print.
type pageReport struct {
	Machine string
	Load    string // load averages at the start, "" if unknown
	Browser string
	Rounds  int
	Sizes   pageSizes
	Figures []pageFigure
	Loads   map[string][]pageLoad // per figure, per round
	// Profiles are the traced loads, per figure, per profile round.
	Profiles map[string][]pageProfile
	Live     []time.Duration
}

func (r *pageReport) header() []string {
	load := r.Load
	if load == "" {
		load = "unknown"
	}
	return []string{
		fmt.Sprintf("machine: %s; load average at the start %s; %s (headless, through chromedp)", r.Machine, load, r.Browser),
		fmt.Sprintf("page load: from the navigation's start to the page's performance mark baton:drawn (median, p90, min, max), a fresh tab (and browser context) each time, %d rounds interleaved; "+
			"html: to the end of the HTML's response, ready: to DOMContentLoaded's end (medians); the HTML's size and the node boxes in #tree of the last round", r.Rounds),
	}
}

// drawn returns figure name's times to the mark, per round.
func (r *pageReport) drawn(name string) []time.Duration {
	return loadsOf(r.Loads[name], func(l pageLoad) time.Duration { return l.Drawn })
}

func loadsOf(ls []pageLoad, f func(pageLoad) time.Duration) []time.Duration {
	out := make([]time.Duration, len(ls))
	for i, l := range ls {
		out[i] = f(l)
	}
	return out
}

func (r *pageReport) loadTable() *table {
	t := &table{Header: []string{"scenario", "nodes", "median", "p90", "min", "max", "html", "ready", "html size", "boxes"}, Left: 1}
	for _, f := range r.Figures {
		ls := r.Loads[f.Name]
		ds := r.drawn(f.Name)
		lo, hi := spread(durFloats(ds))
		html := loadsOf(ls, func(l pageLoad) time.Duration { return l.HTML })
		ready := loadsOf(ls, func(l pageLoad) time.Duration { return l.Ready })
		t.add(f.Name, fmtCount(int64(f.Nodes)), fmtDur(durMedian(ds)), fmtDur(durPct(ds, 90)),
			fmtDur(time.Duration(lo)), fmtDur(time.Duration(hi)), fmtDur(durMedian(html)), fmtDur(durMedian(ready)),
			fmtBytes(int64(ls[len(ls)-1].Bytes)), fmtCount(int64(ls[len(ls)-1].Boxes)))
	}
	return t
}

// profileTable is where the main thread's time went before the mark, per
// figure and phase: medians of the traced loads.
func (r *pageReport) profileTable() *table {
	t := &table{Header: append([]string{"scenario", "main thread"}, pagePhases...), Left: 1}
	for _, f := range r.Figures {
		ps := r.Profiles[f.Name]
		if len(ps) == 0 {
			continue
		}
		row := []string{f.Name, fmtDur(durMedian(profilesOf(ps, func(p pageProfile) time.Duration { return p.CPU })))}
		for _, ph := range pagePhases {
			row = append(row, fmtDur(durMedian(profilesOf(ps, func(p pageProfile) time.Duration { return p.Phases[ph] }))))
		}
		t.add(row...)
	}
	return t
}

func profilesOf(ps []pageProfile, f func(pageProfile) time.Duration) []time.Duration {
	out := make([]time.Duration, len(ps))
	for i, p := range ps {
		out[i] = f(p)
	}
	return out
}

// profileLine says what the profile table is.
func (r *pageReport) profileLine() string {
	n := 0
	if ps := r.Profiles["page"]; len(ps) > 0 {
		n = len(ps)
	}
	return fmt.Sprintf("the main thread's time (thread time, not wall: a loaded machine moves it less) from the navigation's start to the mark, in all and per phase "+
		"(an event's own time; parse: the HTML parser; style: style recalculation; layout; paint: pre-paint, paint, layerize and commit; script; other: the rest of the tasks), "+
		"medians of %d traced loads per scenario (the Tracing domain; made after the timed loads, interleaved)", n)
}

// checks are the targets' lines.
func (r *pageReport) checks() []string {
	page, floor, big := r.drawn("page"), r.drawn("floor"), r.drawn("big")
	c := compare(durFloats(page), durFloats(floor))
	lat50, lat99 := durMedian(r.Live), durPct(r.Live, 99)
	cpu := func(name string) time.Duration {
		return durMedian(profilesOf(r.Profiles[name], func(p pageProfile) time.Duration { return p.CPU }))
	}
	cpuRatio := "n/a"
	if f := cpu("floor"); f > 0 {
		cpuRatio = fmtFloat(float64(cpu("page"))/float64(f)) + "x"
	}
	return []string{
		fmt.Sprintf("page/floor (paired by round, median): %sx (%s to %s; of the medians %sx), target at most %sx: %s",
			fmtFloat(c.Paired), fmtFloat(c.Lo), fmtFloat(c.Hi), fmtFloat(c.OfMedian), fmtFloat(pageRatioTarget), met(c.Paired <= pageRatioTarget)),
		fmt.Sprintf("page/floor main thread's time (medians of the traced loads): %s (no target; it says how much of the ratio is the browser's work)", cpuRatio),
		fmt.Sprintf("page median %s, target at most %s: %s", fmtDur(durMedian(page)), fmtDur(pageLoadTarget), met(durMedian(page) <= pageLoadTarget)),
		fmt.Sprintf("big (%s actions) median %s, target at most %s: %s",
			fmtCount(int64(r.Sizes.Big)), fmtDur(durMedian(big)), fmtDur(pageBigTarget), met(durMedian(big) <= pageBigTarget)),
		fmt.Sprintf("live latency, Hooks.Step to #job's data-version in the page (MutationObserver), %d streams open on the job, %d steps %s apart: median %s (target at most %s: %s), p99 %s (target at most %s: %s), max %s",
			r.Sizes.Streams, len(r.Live), fmtDur(pageStepGap), fmtDur(lat50), fmtDur(pageLatencyMedian), met(lat50 <= pageLatencyMedian),
			fmtDur(lat99), fmtDur(pageLatencyP99), met(lat99 <= pageLatencyP99), fmtDur(durPct(r.Live, 100))),
	}
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func durFloats(ds []time.Duration) []float64 {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return xs
}

// abouts say what each figure loads.
func (r *pageReport) abouts() []string {
	var out []string
	for _, f := range r.Figures {
		out = append(out, f.Name+": "+f.About)
	}
	return out
}

func (r *pageReport) text(w io.Writer) {
	for _, l := range r.header() {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w)
	r.loadTable().text(w)
	for _, l := range r.abouts() {
		fmt.Fprintln(w, "  "+l)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, r.profileLine())
	r.profileTable().text(w)
	fmt.Fprintln(w)
	for _, l := range r.checks() {
		fmt.Fprintln(w, l)
	}
}

func (r *pageReport) markdown(w io.Writer) {
	for _, l := range r.header() {
		fmt.Fprintln(w, l+"  ")
	}
	fmt.Fprintln(w)
	r.loadTable().markdown(w)
	fmt.Fprintln(w)
	for _, l := range r.abouts() {
		fmt.Fprintln(w, "- "+l)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, r.profileLine()+"  ")
	fmt.Fprintln(w)
	r.profileTable().markdown(w)
	fmt.Fprintln(w)
	for _, l := range r.checks() {
		fmt.Fprintln(w, "- "+strings.ReplaceAll(l, "|", "\\|"))
	}
}
