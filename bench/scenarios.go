package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
)

// actionName is the action every scenario runs.
const actionName = "noop"

// Req is every action's payload, as users write it: a small struct that
// the handler receives decoded.
type Req struct {
	ID string `json:"id"`
	N  int    `json:"n"`
}

// Resp is every action's output, encoded as JSON.
type Resp struct {
	ID string `json:"id"`
	N  int    `json:"n"`
}

// handlerCalls and handlerSum count the calls of handle and add up the N
// it decoded, so that a run can check that every action ran once with its
// own payload.
var handlerCalls, handlerSum atomic.Int64

// handle is the handler of every action, in the engines (registered with
// runner.Handle, which decodes the payload and encodes the output) and in
// the plain-Go floors (through floorHandler, which does the same).
func handle(_ context.Context, in Req) (Resp, error) {
	handlerCalls.Add(1)
	handlerSum.Add(int64(in.N))
	return Resp{ID: in.ID, N: in.N + 1}, nil
}

// floorHandler does what runner.Handle does around handle: decode the
// payload into Req, call handle, encode the Resp.
func floorHandler(ctx context.Context, payload []byte) ([]byte, error) {
	var in Req
	if len(payload) > 0 {
		if err := json.Unmarshal(payload, &in); err != nil {
			return nil, fmt.Errorf("payload does not decode into Req: %v", err)
		}
	}
	out, err := handle(ctx, in)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// shape is the form of a scenario's workflow.
type shape int

const (
	shapeFanIn shape = iota // seq(par(Width actions), one action)
	shapeSeq                // seq(Width actions)
	shapePar                // par(Width actions)

	// -maploop's shapes (maploop.go), on the memory engine only. Their
	// copies and iterations are the actions counted; the list leaves
	// are not.
	shapeListPar   // seq(a list of Width, par(Width actions)), the par written out
	shapeMap       // seq(a list of Width, a map over it of one action)
	shapeMapNested // seq(a list of Width/Inner, a list of Inner, a map over the first of a map over the second)
	shapeSeqTick   // seq(Width tick actions)
	shapeLoop      // a loop of Width iterations of one tick action, until it outputs "done"
	shapeLoopTrue  // the same, the tick's outputs false and true, until true
)

// scenario is one workload: Jobs jobs of the same shape, submitted at once
// and all awaited.
type scenario struct {
	Name  string `json:"name"` // short name for -only: "a", "b", ...
	Shape shape  `json:"shape"`
	Jobs  int    `json:"jobs"`  // jobs submitted at once
	Width int    `json:"width"` // actions in the job's seq or par
	Warm  int    `json:"warm"`  // default warm runs per process
	// Of names the scenario this one is a larger copy of (a10 and a100 of
	// a): the curve of cost per action against size, which must stay
	// flat. Only the engines on the curve (engine.Curve) run them.
	Of string `json:"of,omitempty"`
	// Inner is, for shapeMapNested, the copies of each inner map.
	Inner int `json:"inner,omitempty"`
}

// defaultScenarios returns the scenarios the program measures.
func defaultScenarios() []scenario {
	return []scenario{
		{Name: "a", Shape: shapeFanIn, Jobs: 200, Width: 10, Warm: 5},
		{Name: "b", Shape: shapeSeq, Jobs: 1, Width: 1000, Warm: 5},
		{Name: "c", Shape: shapePar, Jobs: 1, Width: 1000, Warm: 5},
		{Name: "d", Shape: shapePar, Jobs: 1, Width: 100_000, Warm: 2},
		{Name: "a10", Shape: shapeFanIn, Jobs: 2_000, Width: 10, Warm: 2, Of: "a"},
		{Name: "a100", Shape: shapeFanIn, Jobs: 20_000, Width: 10, Warm: 1, Of: "a"},
	}
}

// scaled returns s with its size (jobs for a, width otherwise) multiplied
// by f, at least 1.
func (s scenario) scaled(f float64) scenario {
	n := func(x int) int { return max(1, int(math.Round(float64(x)*f))) }
	switch s.Shape {
	case shapeFanIn:
		s.Jobs = n(s.Jobs)
	case shapeMapNested:
		outer := s.Width / s.Inner
		s.Inner = n(s.Inner)
		s.Width = outer * s.Inner
	default:
		s.Width = n(s.Width)
	}
	return s
}

// Desc describes the scenario, e.g. "seq of 1,000".
func (s scenario) Desc() string {
	switch s.Shape {
	case shapeFanIn:
		return fmt.Sprintf("%s jobs of seq(par(%s), 1)", fmtCount(int64(s.Jobs)), fmtCount(int64(s.Width)))
	case shapeSeq:
		return "seq of " + fmtCount(int64(s.Width))
	case shapeListPar:
		return "seq(list, par of " + fmtCount(int64(s.Width)) + ")"
	case shapeMap:
		return "seq(list, map of " + fmtCount(int64(s.Width)) + ")"
	case shapeMapNested:
		return fmt.Sprintf("seq(2 lists, map of %s x map of %s)", fmtCount(int64(s.Width/s.Inner)), fmtCount(int64(s.Inner)))
	case shapeSeqTick:
		return "seq of " + fmtCount(int64(s.Width)) + " ticks"
	case shapeLoop:
		return "loop of " + fmtCount(int64(s.Width)) + " ticks, until \"done\""
	case shapeLoopTrue:
		return "loop of " + fmtCount(int64(s.Width)) + " ticks, until true"
	default:
		return "par of " + fmtCount(int64(s.Width))
	}
}

// Label is the scenario's name and description, e.g. "b seq of 1,000".
func (s scenario) Label() string { return s.Name + " " + s.Desc() }

// ActionsPerJob returns how many actions one job runs.
func (s scenario) ActionsPerJob() int {
	if s.Shape == shapeFanIn {
		return s.Width + 1
	}
	return s.Width
}

// Actions returns how many actions the scenario runs in all.
func (s scenario) Actions() int { return s.Jobs * s.ActionsPerJob() }

// Stages returns the sizes of one job's stages: groups of actions that run
// together, each group after the one before. Actions are numbered in tree
// order, so stage k holds the actions after those of the stages before it.
func (s scenario) Stages() []int {
	switch s.Shape {
	case shapeFanIn:
		return []int{s.Width, 1}
	case shapeSeq:
		out := make([]int, s.Width)
		for i := range out {
			out[i] = 1
		}
		return out
	default:
		return []int{s.Width}
	}
}

// Payloads returns the JSON payload of each action of a job, in tree
// order: action i gets {"id":"o-i","n":i}. Every job has the same ones.
func (s scenario) Payloads() [][]byte {
	out := make([][]byte, s.ActionsPerJob())
	for i := range out {
		b := append([]byte(`{"id":"o-`), strconv.Itoa(i)...)
		b = append(b, `","n":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		out[i] = append(b, '}')
	}
	return out
}

// WantSum is what handlerSum gains over one run: the sum of the payloads'
// N over every action.
func (s scenario) WantSum() int64 {
	if s.growing() {
		return int64(s.Actions()) // every payload's N is 1
	}
	k := int64(s.ActionsPerJob())
	return int64(s.Jobs) * k * (k - 1) / 2
}
