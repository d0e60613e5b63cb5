package main

import (
	"context"
	"fmt"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// noopName is the action every scenario runs.
const noopName = "noop"

// noop is the handler of every action: it does nothing, so what is measured
// is the engine around it.
func noop(context.Context, job.Action) ([]byte, error) { return nil, nil }

// shape is the form of a scenario's workflow.
type shape int

const (
	shapeFanIn shape = iota // seq(par(Width no-ops), one no-op)
	shapeSeq                // seq(Width no-ops)
	shapePar                // par(Width no-ops)
)

// scenario is one workload: Jobs jobs of the same shape, submitted at once
// and all awaited.
type scenario struct {
	Name  string // short name for -only: "a", "b", ...
	Desc  string
	Shape shape
	Jobs  int // jobs submitted concurrently
	Width int // actions in the job's seq or par
	Reps  int // default repetitions
}

// defaultScenarios returns the scenarios the program measures.
func defaultScenarios() []scenario {
	return []scenario{
		{Name: "a", Desc: "200 jobs of seq(par(10), 1)", Shape: shapeFanIn, Jobs: 200, Width: 10, Reps: 5},
		{Name: "b", Desc: "seq of 1,000", Shape: shapeSeq, Jobs: 1, Width: 1000, Reps: 5},
		{Name: "c", Desc: "par of 1,000", Shape: shapePar, Jobs: 1, Width: 1000, Reps: 5},
		{Name: "d", Desc: "par of 100,000", Shape: shapePar, Jobs: 1, Width: 100_000, Reps: 3},
	}
}

// ActionsPerJob returns how many actions one job runs.
func (s scenario) ActionsPerJob() int {
	if s.Shape == shapeFanIn {
		return s.Width + 1
	}
	return s.Width
}

// Actions returns how many actions the scenario runs in all.
func (s scenario) Actions() int { return s.Jobs * s.ActionsPerJob() }

// Workflow returns the tree of one job.
func (s scenario) Workflow() ast.Node {
	acts := make([]ast.Node, s.Width)
	for i := range acts {
		acts[i] = ast.Act(noopName, nil)
	}
	switch s.Shape {
	case shapeFanIn:
		return ast.Seq(ast.Par(acts...), ast.Act(noopName, nil))
	case shapeSeq:
		return ast.Seq(acts...)
	default:
		return ast.Par(acts...)
	}
}

// JobIDs returns the IDs of the scenario's jobs in repetition rep.
func (s scenario) JobIDs(rep int) []job.ID {
	ids := make([]job.ID, s.Jobs)
	for i := range ids {
		ids[i] = job.ID(fmt.Sprintf("%s-r%d-j%d", s.Name, rep, i))
	}
	return ids
}
