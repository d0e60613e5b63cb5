package main

// -maploop: issue 19's figures for maps and loops, on the memory engine
// (runner/inmem on store.NewMemory), each against the tree written out
// by hand in the same run:
//
//   - map10k: seq(a leaf whose output is a list of 10,000, a map over it
//     of one leaf) against par10k: seq(the same list leaf, a par of
//     10,000 copies of the same leaf, written out). Target: the map
//     within 1.5x of the par.
//   - map1k, map10k, map100k: the cost per copy of maps of 1,000, 10,000
//     and 100,000 copies. A map has at most ast.MaxCopies (10,000)
//     copies, so map100k is a map over a list of 10 whose template is a
//     map over a list of 10,000: nested maps. Target: flat, map100k's and
//     map10k's cost per copy within flatTarget (2x, the bench's target
//     for a par of 100,000 against one of 1,000) of map1k's.
//   - loop1k: a loop of 1,000 iterations of one leaf (the leaf says
//     "done" on its 1,000th call, which ends the loop, "more" before)
//     against seq1k: a seq of 1,000 of the same leaf written out; and
//     loop1kt, the same loop with the leaf saying false, then true,
//     until true (the reducer compares the literals true, false and null
//     without decoding them). Target: the loop within 1.5x of the seq.
//
// Every copy and iteration runs the engines' typed handler (handle, its
// payload {"id":"o","n":1}); the list leaves run a handler that makes
// the list, and are not counted as actions. The figures run as the
// engines' scenarios do: each in a fresh child process per round (a cold
// run, then warm runs whose median is the round's figure), the figures
// interleaved within a round (par10k, map10k, map1k, map100k, seq1k,
// loop1k, loop1kt, then the next round), and the report gives the medians over
// rounds and the ratios paired by round. -rounds (default 5), -warm
// (default: 3, and 1 for map100k) and -scale (every size, for quick
// checks) apply.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/runner"
)

// The names of the actions of the -maploop scenarios besides actionName.
const (
	listName = "list" // outputs the list [0, 1, ..., n-1] for its payload n
	tickName = "tick" // handle, then "done" (true) on its job's Width-th call, else "more" (false)
)

// Targets of -maploop: a map within this factor of the par written out,
// a loop within it of the seq written out.
const growTarget = 1.5

// mapLoopScenarios returns -maploop's scenarios, in the order a round
// runs them.
func mapLoopScenarios() []scenario {
	return []scenario{
		{Name: "par10k", Shape: shapeListPar, Jobs: 1, Width: 10_000, Warm: 3},
		{Name: "map10k", Shape: shapeMap, Jobs: 1, Width: 10_000, Warm: 3},
		{Name: "map1k", Shape: shapeMap, Jobs: 1, Width: 1_000, Warm: 3},
		{Name: "map100k", Shape: shapeMapNested, Jobs: 1, Width: 100_000, Inner: 10_000, Warm: 1},
		{Name: "seq1k", Shape: shapeSeqTick, Jobs: 1, Width: 1_000, Warm: 3},
		{Name: "loop1k", Shape: shapeLoop, Jobs: 1, Width: 1_000, Warm: 3},
		{Name: "loop1kt", Shape: shapeLoopTrue, Jobs: 1, Width: 1_000, Warm: 3},
	}
}

// growing reports whether sc is one of -maploop's shapes.
func (s scenario) growing() bool { return s.Shape >= shapeListPar }

// growingWorkflow returns the tree of one job of sc, one of -maploop's
// shapes.
func growingWorkflow(sc scenario) ast.Node {
	leaf := ast.Act(actionName, Req{ID: "o", N: 1})
	switch sc.Shape {
	case shapeListPar:
		kids := make([]ast.Node, sc.Width)
		for i := range kids {
			kids[i] = leaf
		}
		return ast.Seq(ast.Act(listName, sc.Width).Named("list"), ast.Par(kids...))
	case shapeMap:
		return ast.Seq(ast.Act(listName, sc.Width).Named("list"), ast.Map("list", leaf))
	case shapeMapNested:
		return ast.Seq(ast.Act(listName, sc.Width/sc.Inner).Named("outer"), ast.Act(listName, sc.Inner).Named("inner"),
			ast.Map("outer", ast.Map("inner", leaf)))
	case shapeSeqTick:
		kids := make([]ast.Node, sc.Width)
		for i := range kids {
			kids[i] = ast.Act(tickName, Req{ID: "o", N: 1})
		}
		return ast.Seq(kids...)
	case shapeLoopTrue:
		return ast.Loop(ast.Act(tickName, Req{ID: "o", N: 1}).Named("tick"), "tick", true, sc.Width)
	default: // shapeLoop
		return ast.Loop(ast.Act(tickName, Req{ID: "o", N: 1}).Named("tick"), "tick", "done", sc.Width)
	}
}

// registerGrowing registers the handlers of -maploop's list and tick
// leaves in reg, for a run of sc.
func registerGrowing(reg *runner.Registry, sc scenario) error {
	if err := runner.Handle(reg, listName, func(_ context.Context, n int) ([]int, error) {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}); err != nil {
		return err
	}
	var mu sync.Mutex
	calls := map[string]int{}
	done, more := json.RawMessage(`"done"`), json.RawMessage(`"more"`)
	if sc.Shape == shapeLoopTrue {
		done, more = json.RawMessage(`true`), json.RawMessage(`false`)
	}
	return runner.Handle(reg, tickName, func(ctx context.Context, in Req) (json.RawMessage, error) {
		if _, err := handle(ctx, in); err != nil {
			return nil, err
		}
		a, _ := runner.ActionFrom(ctx)
		mu.Lock()
		calls[string(a.JobID)]++
		n := calls[string(a.JobID)]
		mu.Unlock()
		if n == sc.Width {
			return done, nil
		}
		return more, nil
	})
}

// mapLoopOptions are -maploop's settings.
type mapLoopOptions struct {
	Exe     string
	Rounds  int
	Warm    int // 0 for each scenario's own
	Scale   float64
	Workers int
	Dir     string
}

// mapLoopMain runs -maploop and prints its report on stdout.
func mapLoopMain(ctx context.Context, o mapLoopOptions, format string, stdout, progress io.Writer) error {
	e, err := findEngine("memory")
	if err != nil {
		return err
	}
	scs := mapLoopScenarios()
	cells := make([]*cell, len(scs))
	for i := range scs {
		scs[i] = scs[i].scaled(o.Scale)
		if o.Warm > 0 {
			scs[i].Warm = o.Warm
		}
		cells[i] = &cell{Scenario: scs[i], Engine: e}
	}
	start := time.Now()
	for round := range o.Rounds {
		for _, c := range cells {
			sp := childSpec{Scenario: c.Scenario, Engine: e.Name, Warm: c.Scenario.Warm, Workers: o.Workers, Dir: o.Dir}
			res, err := spawn(ctx, o.Exe, sp)
			if err != nil {
				return fmt.Errorf("-maploop: %s, round %d: %w", c.Scenario.Name, round+1, err)
			}
			c.Rounds = append(c.Rounds, res)
			if progress != nil {
				fmt.Fprintf(progress, "%s round %d/%d  cold %-8s warm %-8s  (%s)\n", c.Scenario.Name, round+1, o.Rounds,
					fmtDur(res.Cold.Wall), fmtDur(time.Duration(medianOf(res.Warm, wallOf))), time.Since(start).Round(time.Second))
			}
		}
	}
	rep := mapLoopReport(cells, o)
	if format == "markdown" {
		rep.markdown(stdout)
	} else {
		rep.text(stdout)
	}
	return nil
}

// mapLoopRep is -maploop's report: a table of figures and the targets'
// lines.
type mapLoopRep struct {
	Head    []string
	Figures *table
	Targets []string
}

// mapLoopReport makes the report of the cells -maploop measured.
func mapLoopReport(cells []*cell, o mapLoopOptions) mapLoopRep {
	by := map[string]*cell{}
	for _, c := range cells {
		by[c.Scenario.Name] = c
	}
	rep := mapLoopRep{Head: []string{
		"baton bench -maploop: " + machine(),
		fmt.Sprintf("runner/inmem on store.NewMemory, %d workers; %d rounds, the figures interleaved, each in a fresh process; warm runs per process: %s",
			o.Workers, o.Rounds, warmList(cells)),
	}}
	t := &table{Header: []string{"figure", "tree", "copies", "cold", "warm", "warm min-max", "per copy", "CPU per copy", "steps", "allocs/copy"}, Left: 2}
	for _, c := range cells {
		n := float64(c.Scenario.Actions())
		warm := c.warm(wallOf)
		t.add(c.Scenario.Name, c.Scenario.Desc(), fmtCount(int64(n)),
			fmtDur(dur(median(c.cold(wallOf)))), fmtDur(dur(median(warm))), fmtSpread(warm),
			fmtDur(dur(median(warm)/n)), fmtDur(dur(median(c.warm(cpuOf))/n)),
			fmtFloat(median(c.warm(stepsOf))), fmtFloat(median(c.warm(mallocsOf))/n))
	}
	rep.Figures = t
	// CPU time does not count the time the machine gave to other
	// processes, which wall time on a shared machine does: it is printed
	// beside the wall time's ratio, which the verdict reads.
	pair := func(what, num, den string, target float64) {
		a, b := by[num], by[den]
		r := compare(a.warm(wallOf), b.warm(wallOf))
		cpu := compare(a.warm(cpuOf), b.warm(cpuOf))
		rep.Targets = append(rep.Targets, fmt.Sprintf("%s: %s/%s %sx warm, paired by round (min-max %s-%s, of medians %s; CPU time %sx) (target %gx) %s",
			what, num, den, fmtRatio(r.Paired), fmtRatio(r.Lo), fmtRatio(r.Hi), fmtRatio(r.OfMedian), fmtRatio(cpu.Paired), target, verdict(r.Paired <= target)))
	}
	pair("map against a par written out", "map10k", "par10k", growTarget)
	pair("loop (until \"done\") against a seq written out", "loop1k", "seq1k", growTarget)
	pair("loop (until true) against a seq written out", "loop1kt", "seq1k", growTarget)
	perCopy := func(c *cell, f func(sample) float64) []float64 {
		w := c.warm(f)
		for i := range w {
			w[i] /= float64(c.Scenario.Actions())
		}
		return w
	}
	base := perCopy(by["map1k"], wallOf)
	var parts, cpus []string
	met := true
	for _, name := range []string{"map10k", "map100k"} {
		r := compare(perCopy(by[name], wallOf), base)
		parts = append(parts, fmt.Sprintf("%s %sx", name, fmtRatio(r.Paired)))
		cpus = append(cpus, fmt.Sprintf("%s %sx", name, fmtRatio(compare(perCopy(by[name], cpuOf), perCopy(by["map1k"], cpuOf)).Paired)))
		met = met && r.Paired <= flatTarget
	}
	nested := by["map100k"].Scenario
	rep.Targets = append(rep.Targets, fmt.Sprintf("cost per copy against map1k's (%s), warm, paired by round: %s (CPU time %s) (target %gx; map100k is nested maps, %s x %s, as a map has at most %s copies) %s",
		fmtDur(dur(median(base))), strings.Join(parts, ", "), strings.Join(cpus, ", "), flatTarget,
		fmtCount(int64(nested.Width/nested.Inner)), fmtCount(int64(nested.Inner)), fmtCount(ast.MaxCopies), verdict(met)))
	return rep
}

// warmList says how many warm runs each figure's children made.
func warmList(cells []*cell) string {
	var parts []string
	for _, c := range cells {
		parts = append(parts, fmt.Sprintf("%s %d", c.Scenario.Name, c.Scenario.Warm))
	}
	return strings.Join(parts, ", ")
}

func (r mapLoopRep) text(w io.Writer) {
	for _, h := range r.Head {
		fmt.Fprintln(w, h)
	}
	fmt.Fprintln(w)
	r.Figures.text(w)
	fmt.Fprintln(w)
	for _, l := range r.Targets {
		fmt.Fprintln(w, l)
	}
}

func (r mapLoopRep) markdown(w io.Writer) {
	for _, h := range r.Head {
		fmt.Fprintln(w, h+"  ")
	}
	fmt.Fprintln(w)
	r.Figures.markdown(w)
	fmt.Fprintln(w)
	for _, l := range r.Targets {
		fmt.Fprintf(w, "- %s\n", l)
	}
}

// mapLoopExe is the program to run as -maploop's children.
func mapLoopExe() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find the program to run as a child: %w", err)
	}
	return exe, nil
}
