package api

import (
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
	iter    map[string]int  // a loop's iteration index, by the loop's path
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

// step returns what the step from old to new grew; old is the zero Job
// for the job's creation.
func (g *growthTrack) step(old, new job.Job) []Growth {
	if g == nil {
		return nil
	}
	changed := job.Changed(old, new)
	var out []Growth
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
		loop, k, ok := loopBody(n.Path)
		if !ok {
			continue
		}
		if last, seen := g.iter[loop]; seen && last != k && k > 0 {
			out = append(out, Growth{Path: loop, Kind: ast.KindLoop.String(), Iteration: k + 1})
		}
		g.iter[loop] = k
	}
	return out
}

// loopBody says whether path is a loop's body ("...loop[K]"), and returns
// the loop's path and K.
func loopBody(path string) (loop string, k int, ok bool) {
	i := strings.LastIndexByte(path, '.')
	last := path[i+1:]
	rest, found := strings.CutPrefix(last, ast.KindLoop.String()+"[")
	if !found || !strings.HasSuffix(rest, "]") {
		return "", 0, false
	}
	n := 0
	for _, c := range rest[:len(rest)-1] {
		if c < '0' || c > '9' || n > 1<<20 {
			return "", 0, false
		}
		n = n*10 + int(c-'0')
	}
	if len(rest) == 1 {
		return "", 0, false
	}
	if i < 0 {
		return "", n, true
	}
	return path[:i], n, true
}
