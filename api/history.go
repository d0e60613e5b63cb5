package api

import (
	"fmt"
	"strings"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// HistoryOf returns the steps of h after version from, at most limit of
// them (limit <= 0: all). Version 1 is the job's creation. It replays the
// journal from the origin once, so it costs the whole history, like any
// read of a past version.
func HistoryOf(h store.History, from uint64, limit int) (History, error) {
	out := History{ID: string(h.Origin.ID()), Steps: []Step{}}
	names := map[string]string{} // node path -> action name
	named := map[string]string{} // node name -> path
	h.Origin.Walk(func(n job.NodeInfo) bool {
		if n.Kind == ast.KindAct {
			names[n.Path] = n.Action
		}
		if n.Name != "" {
			named[n.Name] = n.Path
		}
		return true
	})
	ignored := map[uint64][]IgnoredResult{}
	for _, x := range h.Ignored {
		ignored[x.Version] = append(ignored[x.Version], ignoredOf(x, names, named))
	}
	full := func() bool { return limit > 0 && len(out.Steps) >= limit }
	j := h.Origin
	armed := map[string]bool{}
	waits := func(j job.Job) []Timer {
		var out []Timer
		now := map[string]bool{}
		for _, t := range j.Timers() {
			now[t.ID] = true
			if !armed[t.ID] {
				out = append(out, Timer{ID: t.ID, Due: t.Due.UTC()})
			}
		}
		armed = now
		return out
	}
	grew := newGrowthTrack(j)
	if w, g := waits(j), grew.step(job.Job{}, j, actionIDs(j.Outstanding())); j.Version() > from {
		st := stepState(Step{Version: j.Version(), Created: true}, j)
		st.Waits, st.Grew = w, g
		for _, a := range j.Outstanding() {
			st.Dispatched = append(st.Dispatched, a.ID)
		}
		if c := j.Clock(); !c.IsZero() {
			c = c.UTC()
			st.Time = &c
		}
		st.Ignored = ignored[st.Version]
		out.Steps = append(out.Steps, st)
	}
	cancelID := job.CancelResult(j.ID(), "-").ActionID
	sig := newSignalTrack(j)
	for i, s := range h.Steps {
		if full() {
			// The rest only brings the job to its latest version.
			latest, err := job.Replay(j, h.Steps[i:])
			if err != nil {
				return History{}, err
			}
			j = latest
			break
		}
		tr, err := job.Restart(j, s.Results)
		if err != nil {
			return History{}, fmt.Errorf("job %s: step v%d: %w", j.ID(), s.Version, err)
		}
		if tr.Job.Version() != s.Version {
			return History{}, fmt.Errorf("job %s: step v%d replays as v%d", j.ID(), s.Version, tr.Job.Version())
		}
		if len(tr.Ignored) > 0 {
			return History{}, fmt.Errorf("job %s: step v%d does not apply as recorded: %d of %d results ignored (first: %s)",
				j.ID(), s.Version, len(tr.Ignored), len(s.Results), tr.Ignored[0])
		}
		prev := j
		j = tr.Job
		if grew != nil {
			// A map's copies and a loop's later iterations have paths the
			// first version lacks: their actions name them when dispatched.
			for _, a := range tr.Actions {
				if p, _, err := job.SplitActionID(a.ID); err == nil && names[p] == "" {
					names[p] = a.Name
				}
			}
		}
		w := waits(j)
		took := sig.step(j, s.Results)
		g := grew.step(prev, j, actionIDs(tr.Actions))
		if s.Version <= from {
			continue
		}
		st := stepState(Step{Version: s.Version}, j)
		st.Waits, st.Grew = w, g
		for _, a := range tr.Actions {
			st.Dispatched = append(st.Dispatched, a.ID)
		}
		var last time.Time
		for _, r := range s.Results {
			if r.At.After(last) {
				last = r.At
			}
			if r.ActionID == cancelID {
				st.Cancel = &Cancel{Reason: r.Error}
				if at, ok := utc(r.At); ok {
					st.Cancel.Time = at
				}
				continue
			}
			res := resultOf(r, names)
			switch {
			case res.Signal != nil:
				if wait, ok := took.arrived[res.Signal.Name+"/"+res.Signal.ID]; ok {
					res.Signal.Taken, res.Path = true, wait
				} else {
					res.Signal.Kept = true
				}
			case res.NodeCancel != nil:
				res.Path = pathOfName(j, named, res.NodeCancel.Node)
			}
			st.Results = append(st.Results, res)
		}
		st.Taken = took.earlier
		if !last.IsZero() {
			last = last.UTC()
			st.Time = &last
		}
		st.Ignored = ignored[st.Version]
		out.Steps = append(out.Steps, st)
	}
	out.Latest, out.Status = j.Version(), j.Status().String()
	return out, nil
}

func actionIDs(as []job.Action) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ID
	}
	return out
}

func stepState(st Step, j job.Job) Step {
	st.Status = j.Status().String()
	st.Settled, st.Total = j.Progress()
	if f, ok := j.Failure(); ok {
		st.Failure = FailureOf(f)
	}
	return st
}

func resultOf(r job.Result, names map[string]string) Result {
	out := Result{ActionID: r.ActionID, OK: !r.Failed(), Kind: r.Kind, Worker: r.Worker}
	if !r.At.IsZero() {
		at := r.At.UTC()
		out.At = &at
	}
	if sg, ok := r.AsSignal(); ok {
		out.Signal = &SignalApplied{Name: sg.Name, ID: sg.ID}
		out.Output, out.Clipped = Clip(string(sg.Payload), ClipBytes)
		return out
	}
	if name, ok := nodeCancelName(r.ActionID); ok {
		out.NodeCancel = &NodeCancelApplied{Node: name, Reason: r.Error}
		out.Kind = "" // a cancel's result carries no kind of its own
		return out
	}
	if strings.Contains(r.ActionID, "@") {
		out.Timer = true
		if out.Path = r.ActionID[:strings.IndexByte(r.ActionID, '@')]; out.Path == ast.RootPath {
			out.Path = ""
		}
		return out
	}
	if p, _, err := job.SplitActionID(r.ActionID); err == nil {
		out.Path, out.Action = p, names[p]
	}
	var c1, c2 bool
	out.Output, c1 = Clip(string(r.Output), ClipBytes)
	out.Error, c2 = Clip(r.Error, ClipBytes)
	out.Clipped = c1 || c2
	return out
}

// ignoredOf returns what the history shows of an ignored result.
func ignoredOf(x store.Ignored, names, named map[string]string) IgnoredResult {
	out := IgnoredResult{ActionID: x.ActionID, Reason: strings.ReplaceAll(x.Reason.String(), " ", "_"), Detail: x.Detail, OK: !x.Failed}
	if at, ok := utc(x.At); ok {
		out.At = at
	}
	switch {
	case x.ActionID == cancelActionID:
		out.Cancel = true
		out.Error = x.Error // the cancel's reason
		return out
	case isSignal(x.ActionID):
		sg, _ := job.Result{ActionID: x.ActionID}.AsSignal()
		out.Signal = &SignalApplied{Name: sg.Name, ID: sg.ID}
		return out
	case isNodeCancel(x.ActionID):
		name, _ := nodeCancelName(x.ActionID)
		out.NodeCancel = &NodeCancelApplied{Node: name, Reason: x.Error}
		out.Path = named[name]
		return out
	case strings.Contains(x.ActionID, "@"):
		out.Timer = true
		if out.Path = x.ActionID[:strings.IndexByte(x.ActionID, '@')]; out.Path == ast.RootPath {
			out.Path = ""
		}
		return out
	}
	if p, _, err := job.SplitActionID(x.ActionID); err == nil {
		out.Path, out.Action = p, names[p]
	}
	out.Error = x.Error
	return out
}

// cancelActionID is the action ID of a cancel (job.CancelResult).
var cancelActionID = job.CancelResult("-", "-").ActionID
