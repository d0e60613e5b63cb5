package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// serveReport is what a -serve run measured, ready to print.
type serveReport struct {
	Machine string
	Load    string // load averages at the start, "" if unknown
	Rounds  int
	Warm    int
	Figures []serveFigure // sized, in order
	Results map[string][]serveResult
}

// Targets of issue 16, section 3.
const (
	boltSubmitTarget    = 0.8  // HTTP submit on bolt over the Go API's, throughput
	memSubmitGoTarget   = 0.04 // on memory, over the Go API's
	memSubmitBareTarget = 0.5  // on memory, over the bare handler's
	statusBareTarget    = 0.6
	statusGoTarget      = 0.04
	serveFlatTarget     = 2.0 // time of the big over the small
	latencyMedianMs     = 50
	latencyP99Ms        = 250
	idleRSSTargetMB     = 50
)

// serveCheck is a ratio of two figures and its target.
type serveCheck struct {
	Scenario, Name string
	Num, Den       string  // figures: throughput of Num over Den's, or time of Num over Den's (AtMost)
	Target         float64 // at least (throughput) or at most (AtMost)
	AtMost         bool
}

func serveChecks() []serveCheck {
	return []serveCheck{
		{"submit bolt", "http/go", "submit-bolt-http", "submit-bolt-go", boltSubmitTarget, false},
		{"submit memory", "http/go", "submit-memory-http", "submit-memory-go", memSubmitGoTarget, false},
		{"submit memory", "http/bare", "submit-memory-http", "submit-bare", memSubmitBareTarget, false},
		{"status memory", "http/bare", "status-http", "status-bare", statusBareTarget, false},
		{"status memory", "http/go", "status-http", "status-go", statusGoTarget, false},
		{"status flat", "", "summary-big-http", "status-http", serveFlatTarget, true},
		{"list flat", "", "list-big-http", "list-small-http", serveFlatTarget, true},
	}
}

func (r *serveReport) figure(name string) serveFigure {
	for _, f := range r.Figures {
		if f.Name == name {
			return f
		}
	}
	return serveFigure{Name: name}
}

// label is the scenario column of f's row.
func (f serveFigure) label() string {
	switch f.Kind {
	case kindSubmit:
		if f.Eng == engBare {
			return "submit memory"
		}
		return "submit " + f.Store
	case kindStatus:
		return fmt.Sprintf("status %s actions", fmtCount(int64(f.Size)))
	case kindList:
		return fmt.Sprintf("list of %s jobs", fmtCount(int64(f.Size)))
	}
	return f.Name
}

// warm returns, per round, the median of the figure's warm times per
// operation.
func (r *serveReport) warm(name string) []float64 {
	var out []float64
	for _, res := range r.Results[name] {
		out = append(out, median(res.Warm))
	}
	return out
}

func (r *serveReport) cold(name string) []float64 {
	var out []float64
	for _, res := range r.Results[name] {
		out = append(out, res.Cold)
	}
	return out
}

// throughputTable has a row per throughput figure.
func (r *serveReport) throughputTable() *table {
	t := &table{Header: []string{"scenario", "engine", "per op", "per op min-max", "ops/s", "cold per op", "cpu per op", "ops/run"}, Left: 2}
	for _, f := range r.Figures {
		if f.Ops == 0 || len(r.Results[f.Name]) == 0 {
			continue
		}
		w := median(r.warm(f.Name))
		cpu := "unknown"
		if c := r.cpu(f.Name); len(c) > 0 {
			cpu = fmtDur(dur(median(c)))
		}
		t.add(f.label(), f.Eng, fmtDur(dur(w)), fmtSpread(r.warm(f.Name)), fmtFloat(1e9/w),
			fmtDur(dur(median(r.cold(f.Name)))), cpu, fmtCount(int64(f.Ops)))
	}
	return t
}

// cpu returns, per round that measured it, the median of the figure's
// warm CPU times per operation.
func (r *serveReport) cpu(name string) []float64 {
	var out []float64
	for _, res := range r.Results[name] {
		if len(res.CPU) > 0 {
			out = append(out, median(res.CPU))
		}
	}
	return out
}

// ratio returns check c over the rounds: a ratio of throughputs, or of
// times for AtMost.
func (r *serveReport) ratio(c serveCheck) (ratio, bool) {
	num, den := r.warm(c.Num), r.warm(c.Den)
	if len(num) == 0 || len(den) == 0 {
		return ratio{}, false
	}
	if c.AtMost {
		return compare(num, den), true
	}
	return compare(den, num), true // throughput: the inverse of the times
}

func (c serveCheck) name(r *serveReport) string {
	if c.Name != "" {
		return c.Name
	}
	num, den := r.figure(c.Num), r.figure(c.Den)
	unit := "actions"
	if num.Kind == kindList {
		unit = "jobs"
	}
	return fmt.Sprintf("%s/%s %s", fmtCount(int64(num.Size)), fmtCount(int64(den.Size)), unit)
}

func (c serveCheck) met(x float64) bool {
	if c.AtMost {
		return x <= c.Target
	}
	return x >= c.Target
}

func (c serveCheck) target() string {
	if c.AtMost {
		return fmt.Sprintf("at most %gx", c.Target)
	}
	return fmt.Sprintf("at least %gx", c.Target)
}

// ratioTable gives every check, paired by round.
func (r *serveReport) ratioTable() *table {
	t := &table{Header: []string{"scenario", "ratio", "paired", "min-max", "of medians", "target", "check"}, Left: 2}
	for _, c := range serveChecks() {
		x, ok := r.ratio(c)
		if !ok {
			continue
		}
		t.add(c.Scenario, c.name(r), fmtServeRatio(x.Paired), fmtServeRatio(x.Lo)+"-"+fmtServeRatio(x.Hi), fmtServeRatio(x.OfMedian), c.target(), verdict(c.met(x.Paired)))
	}
	return t
}

// commitsTable gives, for the submit figures on bolt, what the store
// committed per submit and how many writes shared a commit (the group
// commit), medians over rounds: the server must add no write of its own,
// and the commits it shares are what its latency leaves to share.
func (r *serveReport) commitsTable() *table {
	t := &table{Header: []string{"scenario", "engine", "write txs per submit", "writes per submit", "writes a commit", "min-max"}, Left: 2}
	for _, f := range r.Figures {
		var txs, writes, shared []float64
		for _, res := range r.Results[f.Name] {
			if c := res.Commits; c != nil && c.Ops > 0 && c.GroupCommits > 0 {
				txs = append(txs, float64(c.WriteTxs)/float64(c.Ops))
				writes = append(writes, float64(c.GroupWrites)/float64(c.Ops))
				shared = append(shared, float64(c.GroupWrites)/float64(c.GroupCommits))
			}
		}
		if len(shared) == 0 {
			continue
		}
		lo, hi := spread(shared)
		t.add(f.label(), f.Eng, fmtFloat(median(txs)), fmtFloat(median(writes)), fmtFloat(median(shared)), fmtFloat(lo)+"-"+fmtFloat(hi))
	}
	return t
}

// eventsTable gives the event latency and the idle streams' memory, per
// round's figure: medians over rounds and their spread.
func (r *serveReport) eventsTable() *table {
	t := &table{Header: []string{"scenario", "streams", "median", "median min-max", "p99", "p99 min-max", "max", "samples"}, Left: 1}
	for _, f := range r.Figures {
		if f.Kind != kindEvents || len(r.Results[f.Name]) == 0 {
			continue
		}
		var med, p99, mx, n []float64
		for _, res := range r.Results[f.Name] {
			med, p99 = append(med, res.Latency.Median), append(p99, res.Latency.P99)
			mx, n = append(mx, res.Latency.Max), append(n, float64(res.Latency.Samples))
		}
		t.add(fmt.Sprintf("events, %d steps, %s", f.Steps, eventsWhere(f)), fmtCount(int64(f.Size)), fmtDur(dur(median(med))), fmtSpread(med),
			fmtDur(dur(median(p99))), fmtSpread(p99), fmtDur(dur(median(mx))), fmtFloat(median(n)))
	}
	return t
}

func (r *serveReport) idleTable() *table {
	t := &table{Header: []string{"scenario", "streams", "rss added", "rss min-max", "heap added"}, Left: 1}
	for _, f := range r.Figures {
		if f.Kind != kindIdle || len(r.Results[f.Name]) == 0 {
			continue
		}
		var rss, heap []float64
		for _, res := range r.Results[f.Name] {
			rss, heap = append(rss, float64(res.Idle.RSS)), append(heap, float64(res.Idle.Heap))
		}
		lo, hi := spread(rss)
		t.add("idle streams", fmtCount(int64(f.Size)), fmtBytes(int64(median(rss))),
			fmtBytes(int64(lo))+"-"+fmtBytes(int64(hi)), fmtBytes(int64(median(heap))))
	}
	return t
}

// eventsWhere names how an event figure reaches its clients.
func eventsWhere(f serveFigure) string {
	if f.Eng == engHTTP {
		return "through the route"
	}
	return "on the bare hub"
}

// targets says which targets are met.
func (r *serveReport) targets() []string {
	var out []string
	for _, c := range serveChecks() {
		x, ok := r.ratio(c)
		if !ok {
			continue
		}
		what := c.Scenario + " " + c.name(r)
		if c.AtMost {
			what += " (time per read)"
		} else {
			what += " (throughput)"
		}
		out = append(out, fmt.Sprintf("%s: %sx, target %s: %s", what, fmtServeRatio(x.Paired), c.target(), verdict(c.met(x.Paired))))
	}
	for _, f := range r.Figures {
		res := r.Results[f.Name]
		if len(res) == 0 {
			continue
		}
		switch f.Kind {
		case kindEvents:
			var med, p99 []float64
			for _, x := range res {
				med, p99 = append(med, x.Latency.Median), append(p99, x.Latency.P99)
			}
			m, p := median(med), median(p99)
			out = append(out, fmt.Sprintf("event latency with %s streams, %s: median %s (target at most %dms): %s; p99 %s (target at most %dms): %s",
				fmtCount(int64(f.Size)), eventsWhere(f), fmtDur(dur(m)), latencyMedianMs, verdict(m <= latencyMedianMs*1e6),
				fmtDur(dur(p)), latencyP99Ms, verdict(p <= latencyP99Ms*1e6)))
		case kindIdle:
			var rss []float64
			for _, x := range res {
				rss = append(rss, float64(x.Idle.RSS))
			}
			m := median(rss)
			v := verdict(m <= idleRSSTargetMB*1e6)
			if m < 0 || math.IsNaN(m) {
				v = "unknown (no /proc here)"
			}
			out = append(out, fmt.Sprintf("%s idle streams add %s of resident memory (target at most %d MB): %s",
				fmtCount(int64(f.Size)), fmtBytes(int64(m)), idleRSSTargetMB, v))
		}
	}
	return out
}

// header says where and how the figures were taken.
func (r *serveReport) header() []string {
	load := ""
	if r.Load != "" {
		load = "; load average at the start " + r.Load
	}
	return []string{
		"baton bench -serve: " + r.Machine + load,
		fmt.Sprintf("%d rounds; each round runs every figure once, in order, each in a fresh process; throughput: %d callers at once, the first run in a process cold, then %d warm runs (their median); medians over rounds",
			r.Rounds, serveCallers, r.Warm),
		"the server as shipped: server.New as 'baton serve' wires it, runner/inmem with 4 workers behind server.Local, a write token, one JSON log line per request (slog) to a file, " +
			"metrics (package metrics: its own registry, runner hooks, store wrapper, middleware inside the server, /metrics), a hub notified at each step, 'baton serve's limits, on 127.0.0.1; called through package client",
	}
}

// notes are what the reader of the figures must know.
func (r *serveReport) notes() []string {
	out := []string{
		"event latency: from the save (runner/inmem's Hooks.Step) to the step event read by each client, through the server's /api/v1/jobs/{id}/events route " +
			"as shipped (the target's figure), and on server/live's Hub served bare for comparison",
		"cpu per op: the process's CPU time (user and system, every core) from a warm run's start to the end of the jobs it submitted, per operation: " +
			"steadier than the time per op on a shared machine, and with two cores a figure's throughput cannot pass 2 cores over it",
		"ratios: of throughputs (the baseline's time per op over the server's) for submit and status, of times per read for the flat checks; " +
			"paired by round: the median of the per-round ratios, their min-max, and the ratio of the medians",
	}
	for _, f := range r.Figures {
		out = append(out, f.Name+": "+f.About)
	}
	return out
}

// text writes the report as aligned text.
func (r *serveReport) text(w io.Writer) {
	for _, s := range r.header() {
		fmt.Fprintln(w, s)
	}
	for _, t := range []*table{r.throughputTable(), r.ratioTable(), r.commitsTable(), r.eventsTable(), r.idleTable()} {
		if len(t.Rows) > 0 {
			fmt.Fprintln(w)
			t.text(w)
		}
	}
	for _, sec := range [][]string{r.targets(), r.notes()} {
		fmt.Fprintln(w)
		for _, s := range sec {
			fmt.Fprintln(w, s)
		}
	}
}

// markdown writes the report as Markdown, for the README.
func (r *serveReport) markdown(w io.Writer) {
	fmt.Fprintln(w, strings.Join(r.header(), "  \n"))
	for _, t := range []*table{r.throughputTable(), r.ratioTable(), r.commitsTable(), r.eventsTable(), r.idleTable()} {
		if len(t.Rows) > 0 {
			fmt.Fprintln(w)
			t.markdown(w)
		}
	}
	for _, sec := range [][]string{r.targets(), r.notes()} {
		fmt.Fprintln(w)
		for _, s := range sec {
			fmt.Fprintf(w, "- %s\n", s)
		}
	}
}

// fmtServeRatio writes a ratio with three significant digits below 1 (so
// that 0.0014 is not 0.00, nor 0.497 shown as 0.50 beside NOT met),
// else as fmtRatio does.
func fmtServeRatio(x float64) string {
	if x < 1 {
		return fmt.Sprintf("%.3g", x)
	}
	return fmtRatio(x)
}
