package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// report is what a run measured, ready to print.
type report struct {
	Machine string
	Workers int
	Engines []string
	Results []result // by scenario, then engine
}

// Targets: baton on the memory store within this factor of the floor on
// every scenario but the largest, and the largest par's cost per action
// within this factor of the 1,000-action par's.
const (
	floorTarget = 3.0
	flatTarget  = 2.0
)

func (r *report) find(scenario, engine string) (result, bool) {
	i := slices.IndexFunc(r.Results, func(x result) bool { return x.Scenario.Name == scenario && x.Engine == engine })
	if i < 0 {
		return result{}, false
	}
	return r.Results[i], true
}

// mainTable has one row per scenario and engine.
func (r *report) mainTable() *table {
	t := &table{
		Header: []string{"scenario", "engine", "actions", "runs", "best", "median", "per action", "x floor", "steps", "allocs/act", "B/act"},
		Left:   2,
	}
	for _, res := range r.Results {
		ratio := "-"
		if fl, ok := r.find(res.Scenario.Name, "floor"); ok {
			ratio = fmt.Sprintf("%.2f", float64(res.Best())/float64(fl.Best()))
		}
		steps := "-"
		if res.Engine != "floor" {
			steps = fmtFloat(res.Steps())
		}
		allocs, bytes := res.Allocs()
		t.add(res.Scenario.Name+" "+res.Scenario.Desc, res.Engine,
			fmtCount(int64(res.Scenario.Actions())), fmt.Sprint(len(res.Samples)),
			fmtDur(res.Best()), fmtDur(res.Median()), fmtDur(res.PerAction()), ratio,
			steps, fmtFloat(allocs), fmtFloat(bytes))
	}
	return t
}

// storeTable has one row per scenario run on a store with counters; nil
// if there is none.
func (r *report) storeTable() *table {
	t := &table{
		Header: []string{"scenario", "engine", "steps", "record B/step", "page B/step", "fsync/step", "fsync/act", "snapshots", "records", "pages"},
		Left:   2,
	}
	for _, res := range r.Results {
		tot, ok := res.StoreTotals()
		if !ok {
			continue
		}
		var steps int64
		for _, s := range res.Samples {
			steps += s.Steps
		}
		n := float64(len(res.Samples))
		acts := float64(res.Scenario.Actions()) * n
		t.add(res.Scenario.Name+" "+res.Scenario.Desc, res.Engine,
			fmtFloat(float64(steps)/n),
			fmtFloat(float64(tot.BytesWritten)/float64(steps)),
			fmtFloat(float64(tot.PageBytes)/float64(steps)),
			fmtFloat(float64(tot.WriteTxns)/float64(steps)),
			fmtFloat(float64(tot.WriteTxns)/acts),
			fmtFloat(float64(tot.Snapshots)/n),
			fmtBytes(float64(tot.BytesWritten)/n),
			fmtBytes(float64(tot.PageBytes)/n))
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// targets checks the goals and says which are met.
func (r *report) targets() []string {
	var out []string
	var parts []string
	for _, name := range []string{"a", "b", "c"} {
		m, ok1 := r.find(name, "memory")
		f, ok2 := r.find(name, "floor")
		if !ok1 || !ok2 {
			continue
		}
		x := float64(m.Best()) / float64(f.Best())
		parts = append(parts, fmt.Sprintf("%s %.2fx %s", name, x, verdict(x <= floorTarget)))
	}
	if len(parts) > 0 {
		out = append(out, fmt.Sprintf("memory within %gx of floor: %s", floorTarget, strings.Join(parts, ", ")))
	}
	for _, e := range r.Engines {
		c, ok1 := r.find("c", e)
		d, ok2 := r.find("d", e)
		if !ok1 || !ok2 {
			continue
		}
		x := float64(d.PerAction()) / float64(c.PerAction())
		line := fmt.Sprintf("%s: d per action %s vs c %s = %.2fx", e, fmtDur(d.PerAction()), fmtDur(c.PerAction()), x)
		if e == "memory" {
			line += fmt.Sprintf(" (target %gx) %s", flatTarget, verdict(x <= flatTarget))
		}
		out = append(out, line)
	}
	return out
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func (r *report) header() string {
	return fmt.Sprintf("baton bench: %s, inmem workers %d", r.Machine, r.Workers)
}

// text writes the report as aligned text.
func (r *report) text(w io.Writer) {
	fmt.Fprintln(w, r.header())
	fmt.Fprintln(w)
	r.mainTable().text(w)
	if t := r.storeTable(); t != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "durable store (fsync on), per run:")
		t.text(w)
	}
	if ts := r.targets(); len(ts) > 0 {
		fmt.Fprintln(w)
		for _, s := range ts {
			fmt.Fprintln(w, s)
		}
	}
}

// markdown writes the report as Markdown, for the README.
func (r *report) markdown(w io.Writer) {
	fmt.Fprintf(w, "%s\n\n", r.header())
	r.mainTable().markdown(w)
	if t := r.storeTable(); t != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Durable store (fsync on), per run:")
		fmt.Fprintln(w)
		t.markdown(w)
	}
	if ts := r.targets(); len(ts) > 0 {
		fmt.Fprintln(w)
		for _, s := range ts {
			fmt.Fprintf(w, "- %s\n", s)
		}
	}
}

// fmtBytes writes n bytes in a fitting unit.
func fmtBytes(n float64) string {
	switch {
	case n >= 1<<20:
		return sig3(n/(1<<20)) + " MiB"
	case n >= 1<<10:
		return sig3(n/(1<<10)) + " KiB"
	default:
		return sig3(n) + " B"
	}
}
