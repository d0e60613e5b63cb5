package api

import (
	"time"

	"github.com/batonwf/baton/job"
)

// The data of the events of a job stream (GET /api/v1/jobs/{id}/events),
// one JSON line each; every event's SSE id is the newest version it
// covers:
//
//	snapshot  Job: the summary and every node, as GET /api/v1/jobs/{id}
//	step      StepEvent: the steps since the previous event and the nodes they changed
//	end       Summary: the settled job's final summary
//	shutdown  {}: the server is stopping
//
// and of the list stream (GET /api/v1/events): changes (Changes) and
// resync ({}: read the listing again).

// StepEvent is the data of a step event.
type StepEvent struct {
	// Steps are every version since the previous event, oldest first, as
	// the history route gives them.
	Steps []Step `json:"steps"`
	// Changed is the latest state of every node the steps changed, in
	// the tree's pre-order.
	Changed []Node `json:"changed"`
}

// Changes is the data of a list stream's changes event.
type Changes struct {
	// Changes are the jobs created, or whose status changed, since the
	// previous event, oldest first.
	Changes []Change `json:"changes"`
}

// Change is one change of a job that the server saw.
type Change struct {
	// Seq orders the changes of one server: the event's id is the Seq of
	// its newest change.
	Seq uint64 `json:"seq"`
	ID  string `json:"id"`
	// Created marks a job the server had not seen, Deleted one that is
	// gone; otherwise its status changed.
	Created bool `json:"created,omitempty"`
	Deleted bool `json:"deleted,omitempty"`
	// Status is the job's status when the server looked ("" when
	// deleted).
	Status  string `json:"status,omitempty"`
	Version uint64 `json:"version"`
	// At is when the server saw it.
	At time.Time `json:"at"`
}

// ResultOf returns result r as the history route gives it; names maps the
// paths of the job's action nodes to their action names (a path it lacks
// leaves the action out).
func ResultOf(r job.Result, names map[string]string) Result { return resultOf(r, names) }
