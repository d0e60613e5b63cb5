package api

import (
	"strings"

	"github.com/batonwf/baton/job"
)

// What a history shows of the results that are not an action's: a
// signal (job.SignalResult: "@signal/NAME/ID") or a node's cancel
// (job.CancelNodeResult: "@cancel/NAME"), told apart from a timer's
// firing ("PATH@retry#N", "PATH@deadline", "PATH@sleep"), which also
// holds an '@'.

// nodeCancelPrefix starts the ActionID of a node's cancel.
var nodeCancelPrefix = strings.TrimSuffix(job.CancelNodeResult("-", "x", "-").ActionID, "x")

// nodeCancelName returns the name of the node a cancel with ActionID id
// names, and whether id is a node's cancel.
func nodeCancelName(id string) (string, bool) {
	name, ok := strings.CutPrefix(id, nodeCancelPrefix)
	return name, ok && name != ""
}

func isNodeCancel(id string) bool {
	_, ok := nodeCancelName(id)
	return ok
}

func isSignal(id string) bool {
	_, ok := job.Result{ActionID: id}.AsSignal()
	return ok
}

// pathOfName returns the path of the node called name: from named (the
// names of the job's first version), else from j (a name that came
// later, with a tree that grew), else "".
func pathOfName(j job.Job, named map[string]string, name string) string {
	if p, ok := named[name]; ok {
		return p
	}
	path := ""
	j.Walk(func(n job.NodeInfo) bool {
		if n.Name == name {
			path = n.Path
			return false
		}
		return true
	})
	return path
}

// signalTrack follows, step by step, which waits took which signals
// (job.Job.Signals), reading them only in steps that can change them: a
// step that applies a signal, or any step while the job keeps some.
type signalTrack struct{ kept, taken int }

// signalsTaken are the signals a wait took in one step: those that
// arrived in it (by "NAME/ID", the wait's path) and those kept before.
type signalsTaken struct {
	arrived map[string]string
	earlier []TakenSignal
}

func newSignalTrack(j job.Job) *signalTrack {
	kept, taken := j.Signals()
	return &signalTrack{kept: len(kept), taken: len(taken)}
}

// step returns the signals taken by the step that applied rs and made j.
func (s *signalTrack) step(j job.Job, rs []job.Result) signalsTaken {
	var out signalsTaken
	look := s.kept > 0
	var sent map[string]bool
	for _, r := range rs {
		if sg, ok := r.AsSignal(); ok {
			if sent == nil {
				sent = map[string]bool{}
			}
			sent[sg.Name+"/"+sg.ID], look = true, true
		}
	}
	if !look {
		return out
	}
	kept, taken := j.Signals()
	for _, t := range taken[min(s.taken, len(taken)):] {
		key := t.Name + "/" + t.ID
		if sent[key] {
			if out.arrived == nil {
				out.arrived = map[string]string{}
			}
			out.arrived[key] = t.Path
			continue
		}
		out.earlier = append(out.earlier, TakenSignal{Name: t.Name, ID: t.ID, Path: t.Path})
	}
	s.kept, s.taken = len(kept), len(taken)
	return out
}
