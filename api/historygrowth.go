package api

import (
	"strconv"
	"strings"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// Growth is a change of a job's tree that a step made: a map that
// started, with its copies, or a loop that began another iteration.
type Growth struct {
	// Path is the map's or the loop's path ("" is the root).
	Path string `json:"path"`
	Kind string `json:"kind"` // map or loop
	// Copies counts the copies the map started with (its children
	// "map[0]" to "map[Copies-1]").
	Copies int `json:"copies,omitempty"`
	// Iteration is the loop's iteration begun, 2 or more (the first
	// begins with the loop); its body is the child "loop[Iteration-1]".
	Iteration int `json:"iteration,omitempty"`
}

// growthTrack follows, step by step, the maps that started and the
// iterations the loops are at, from the nodes each step changed
// (job.Changed), for a workflow that has a map or a loop; nil for one
// that has neither, which costs nothing.
type growthTrack struct {
	started map[string]bool // the maps started, by path
	iter    map[string]int  // a loop's newest iteration index seen, by the loop's path
}

func newGrowthTrack(j job.Job) *growthTrack {
	grows := false
	ast.Walk(j.Workflow(), func(_ string, n *ast.Node) bool {
		grows = grows || n.Kind == ast.KindMap || n.Kind == ast.KindLoop
		return !grows
	})
	if !grows {
		return nil
	}
	return &growthTrack{started: map[string]bool{}, iter: map[string]int{}}
}

// step returns what the step from old to new grew, dispatching the
// actions dispatched; old is the zero Job for the job's creation. A
// map's start shows in the nodes the step changed (job.Changed: the map
// and its new copies); a loop's next iteration in the paths of those
// nodes and of the actions dispatched ("...loop[I]..."), since the body
// of the next iteration may be in the very state the previous one began
// in.
func (g *growthTrack) step(old, new job.Job, dispatched []string) []Growth {
	if g == nil {
		return nil
	}
	changed := job.Changed(old, new)
	var out []Growth
	var loops []Growth
	for i, n := range changed {
		switch {
		case n.Kind == ast.KindMap && n.Status != job.StatusIdle && n.Status != job.StatusSkipped && !g.started[n.Path]:
			g.started[n.Path] = true
			copies := 0
			for _, c := range changed[i+1:] {
				if c.Depth <= n.Depth {
					break
				}
				if c.Depth == n.Depth+1 {
					copies++
				}
			}
			out = append(out, Growth{Path: n.Path, Kind: n.Kind.String(), Copies: copies})
		case n.Kind == ast.KindMap && n.Status == job.StatusIdle && g.started[n.Path]:
			delete(g.started, n.Path) // a map in a loop's body, reset for the next iteration
		}
		loops = g.iterations(loops, n.Path)
	}
	for _, id := range dispatched {
		if p, _, err := job.SplitActionID(id); err == nil {
			loops = g.iterations(loops, p)
		}
	}
	return append(out, loops...)
}

// iterations appends to out the loops whose next iteration path shows
// first ("...loop[I]...", I past the iteration seen so far).
func (g *growthTrack) iterations(out []Growth, path string) []Growth {
	edge := ast.KindLoop.String() + "["
	for off := 0; ; {
		i := strings.Index(path[off:], edge)
		if i < 0 {
			return out
		}
		i += off
		off = i + len(edge)
		if i > 0 && path[i-1] != '.' {
			continue
		}
		end := strings.IndexByte(path[off:], ']')
		if end <= 0 {
			return out
		}
		k, err := strconv.Atoi(path[off : off+end])
		if err != nil || k < 0 {
			continue
		}
		loop := ""
		if i > 0 {
			loop = path[:i-1]
		}
		if k > g.iter[loop] {
			g.iter[loop] = k
			out = append(out, Growth{Path: loop, Kind: ast.KindLoop.String(), Iteration: k + 1})
		}
	}
}
