package api

import (
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Clipping bounds.
const (
	// ClipBytes bounds payloads, outputs and error messages in node lists
	// and failure messages in summaries.
	ClipBytes = 200
	// MaxNodeBytes bounds each of them in a single node (the node route).
	MaxNodeBytes = 1 << 20
)

// StatusDamaged is the status of a listed job whose stored record cannot
// be read.
const StatusDamaged = "damaged"

// Summary is a job without its tree: what a listing shows of each job.
type Summary struct {
	ID      string `json:"id"`
	Status  string `json:"status"` // running, succeeded, failed, cancelled, or damaged
	Version uint64 `json:"version"`
	// Settled and Total count the job's actions: settled so far, in the tree.
	Settled int `json:"settled"`
	Total   int `json:"total"`
	// Outstanding counts the actions dispatched and not yet settled; it is
	// omitted in listings, which do not load jobs.
	Outstanding *int `json:"outstanding,omitempty"`
	// Created and Updated are when the store wrote the job first and
	// last (store.Info), where the store tells. A summary made from a
	// job alone (SummaryOf) has no Created, and its Updated is the job's
	// clock: the time of the last result it applied; WithInfo adds the
	// store's.
	Created *time.Time `json:"created,omitempty"`
	Updated *time.Time `json:"updated,omitempty"`
	Failure *Failure   `json:"failure,omitempty"`
	Cancel  *Cancel    `json:"cancel,omitempty"`
	// Damaged says why a damaged job cannot be read.
	Damaged string `json:"damaged,omitempty"`
}

// Failure is why a job failed.
type Failure struct {
	Path    string `json:"path"`
	Action  string `json:"action,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Message string `json:"message"`
	Clipped bool   `json:"clipped,omitempty"`
	// Others counts further failures in parallel branches.
	Others int `json:"others"`
}

// Cancel is a job's cancel request.
type Cancel struct {
	Reason string `json:"reason"`
	// Time is when the cancel was made: the time stamped on the cancel
	// (job.Result.At, the clock of the runner or command that made it),
	// kept by the job beside the reason (job.Job.CancelTime) and by the
	// history's step that applied it. Absent where it is not known: a
	// job cancelled before jobs kept it.
	Time *time.Time `json:"time,omitempty"`
}

// Job is a job's summary and, unless asked without them, every node and
// the timers the job waits on.
type Job struct {
	Summary
	Nodes []Node `json:"nodes,omitempty"`
	// Timers are the retries and deadlines armed, in the job's order.
	Timers []Timer `json:"timers,omitempty"`
	// Signals are the signals the job keeps for waits to come and those
	// its waits took; nil when there are none. Only with the nodes.
	Signals *Signals `json:"signals,omitempty"`
}

// Timer is a wait of a job: "PATH@retry#N" starts attempt N of the leaf
// at PATH, "PATH@deadline" is the deadline of the node at PATH.
type Timer struct {
	ID  string    `json:"id"`
	Due time.Time `json:"due"`
}

// Node is one node of a job's tree.
type Node struct {
	// Path is the node's path as the CLI prints it; "" is the root.
	Path    string `json:"path"`
	Name    string `json:"name,omitempty"`
	Depth   int    `json:"depth"`
	Kind    string `json:"kind"`
	Action  string `json:"action,omitempty"`
	Status  string `json:"status"` // idle, running, succeeded, failed, cancelled
	Attempt int    `json:"attempt,omitempty"`
	// Retry is when a leaf waiting to run again is due.
	Retry   *time.Time `json:"retry,omitempty"`
	Payload string     `json:"payload,omitempty"`
	Output  string     `json:"output,omitempty"`
	Error   string     `json:"error,omitempty"`
	// Clipped says that payload, output or error was cut.
	Clipped bool `json:"clipped,omitempty"`
	// Failure is why a failed or cancelled node ended so: the failed
	// action under it (for a leaf, its own failure kind, or the message
	// of a deadline that ran out) and how many further failures its
	// parallel nodes counted.
	Failure *Failure `json:"failure,omitempty"`
	// Copies counts a started map's copies (its children, "map[0]" to
	// "map[N-1]") and how many are in each state; absent for a map not
	// started and for any other node. Only in node lists (NodesOf).
	Copies *Copies `json:"copies,omitempty"`
	// Iteration is a loop's current iteration, 1 for the first: the one
	// running, or the last one run once the loop has settled; its body
	// is the child "loop[Iteration-1]". 0 for any other node. Only in
	// node lists (NodesOf).
	Iteration int `json:"iteration,omitempty"`
	// Signal is the name of the signal a wait waits for; "" for any
	// other node. Only in node lists (NodesOf).
	Signal string `json:"signal,omitempty"`
	// Choice is, for a choice, the leaf it reads and, once it started,
	// what it read and chose; nil for any other node. Only in node lists
	// (NodesOf).
	Choice *Chosen `json:"choice,omitempty"`
}

// Copies counts a map's copies per state.
type Copies struct {
	Count     int `json:"count"`
	Idle      int `json:"idle,omitempty"`
	Running   int `json:"running,omitempty"`
	Succeeded int `json:"succeeded,omitempty"`
	Failed    int `json:"failed,omitempty"`
	Cancelled int `json:"cancelled,omitempty"`
	Skipped   int `json:"skipped,omitempty"`
}

// add counts one copy in state status.
func (c *Copies) add(status string) {
	c.Count++
	switch status {
	case job.StatusIdle.String():
		c.Idle++
	case job.StatusRunning.String():
		c.Running++
	case job.StatusSucceeded.String():
		c.Succeeded++
	case job.StatusFailed.String():
		c.Failed++
	case job.StatusCancelled.String():
		c.Cancelled++
	case job.StatusSkipped.String():
		c.Skipped++
	}
}

// List is a page of a listing.
type List struct {
	Jobs []Summary `json:"jobs"`
	// Next is the cursor of the next page (the after parameter), or ""
	// when this page is the last.
	Next string `json:"next,omitempty"`
}

// History is a page of a job's steps.
type History struct {
	ID string `json:"id"`
	// Latest is the job's newest version.
	Latest uint64 `json:"latest"`
	Status string `json:"status"`
	Steps  []Step `json:"steps"`
}

// Step is one version of a job: how it was made (version 1: created; later:
// the results applied), what it dispatched and where the job stood after.
type Step struct {
	Version uint64     `json:"version"`
	Time    *time.Time `json:"time,omitempty"`
	Created bool       `json:"created,omitempty"`
	Results []Result   `json:"results,omitempty"`
	// Dispatched lists the action IDs the step dispatched.
	Dispatched []string `json:"dispatched,omitempty"`
	// Cancel is the cancel request this step applied.
	Cancel  *Cancel `json:"cancel,omitempty"`
	Status  string  `json:"status"`
	Settled int     `json:"settled"`
	Total   int     `json:"total"`
	// Failure is why the job had failed after the step.
	Failure *Failure `json:"failure,omitempty"`
	// Waits are the timers the step armed (retries, deadlines).
	Waits []Timer `json:"waits,omitempty"`
	// Grew are the maps the step started, with their copies, and the
	// loops that began another iteration in it, in tree order.
	Grew []Growth `json:"grew,omitempty"`
	// Taken are the signals kept before this step (a signal sent before
	// its wait started) that a wait took in it, in the order taken. A
	// signal this step applied itself says where it went in its Result.
	Taken []TakenSignal `json:"taken,omitempty"`
	// Ignored are the results the reducer did not apply while the job
	// was at this version: those of the batch that made it, and of later
	// batches that applied nothing, oldest first. Only from a store that
	// journals them (store.IgnoreJournal), which keeps a job's newest
	// store.MaxIgnored.
	Ignored []IgnoredResult `json:"ignored,omitempty"`
}

// TakenSignal is a signal a wait took.
type TakenSignal struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	// Path is the path of the wait that took it ("" is the root).
	Path string `json:"path"`
}

// SignalApplied tells what a result that is a signal (job.Signal,
// job.Result.AsSignal) carried, and where it went: Taken by the wait at
// its result's Path, or Kept by the job for a wait to come. An ignored
// signal (IgnoredResult) has neither.
type SignalApplied struct {
	Name  string `json:"name"`
	ID    string `json:"id"`
	Taken bool   `json:"taken,omitempty"`
	Kept  bool   `json:"kept,omitempty"`
}

// NodeCancelApplied tells what a result that is a node's cancel
// (job.CancelNode) named: the node's name and the reason. The node's
// path is its result's Path.
type NodeCancelApplied struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
}

// IgnoredResult is a result the reducer did not apply, and why.
type IgnoredResult struct {
	ActionID string `json:"action_id"`
	// Path and Action name the node, when the result is an action's, a
	// timer's or a node cancel's; Timer marks a timer's firing, Cancel a
	// job's cancel, Signal a signal (its name and ID), NodeCancel a
	// node's cancel (its name and reason; Path is "" when the job has no
	// node of that name).
	Path       string             `json:"path"`
	Action     string             `json:"action,omitempty"`
	Timer      bool               `json:"timer,omitempty"`
	Cancel     bool               `json:"cancel,omitempty"`
	Signal     *SignalApplied     `json:"signal,omitempty"`
	NodeCancel *NodeCancelApplied `json:"node_cancel,omitempty"`
	// Reason is why it was ignored: duplicate, stale_attempt, stopped,
	// job_done, not_dispatched, timer_not_pending, unknown_action,
	// job_settled or signal_queue_full;
	// Detail says more (for unknown_action).
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
	OK     bool   `json:"ok"`
	// Error is a failure's message, clipped to store.MaxIgnoredError
	// bytes; outputs are not kept.
	Error string     `json:"error,omitempty"`
	At    *time.Time `json:"at,omitempty"`
}

// Result is one result a step applied: an action's, a timer's firing
// (Timer), a signal (Signal) or a node's cancel (NodeCancel).
type Result struct {
	ActionID string `json:"action_id"`
	// Path and Action name the node, when the result is an action's; Path
	// is the node of a timer, of a node's cancel, and the wait that took
	// a signal ("" for a signal kept).
	Path   string `json:"path"`
	Action string `json:"action,omitempty"`
	OK     bool   `json:"ok"`
	// Output is an action's output, or a signal's payload.
	Output string     `json:"output,omitempty"`
	Error  string     `json:"error,omitempty"`
	Kind   string     `json:"kind,omitempty"`
	At     *time.Time `json:"at,omitempty"`
	// Timer marks a retry's, deadline's or sleep's timer firing.
	Timer bool `json:"timer,omitempty"`
	// Signal is set for a signal: its name and ID, and whether a wait
	// took it (at Path) or the job kept it.
	Signal *SignalApplied `json:"signal,omitempty"`
	// NodeCancel is set for a node's cancel: the node's name (at Path)
	// and the reason.
	NodeCancel *NodeCancelApplied `json:"node_cancel,omitempty"`
	Clipped    bool               `json:"clipped,omitempty"`
	// Worker names the worker that ran the attempt (job.Result.Worker);
	// omitted for a result no worker made (a timer's firing, a lost
	// attempt) and for one journaled before results named their worker.
	Worker string `json:"worker,omitempty"`
}

// Validation is the answer of the validate route for a valid workflow.
type Validation struct {
	// Workflow is the normalized workflow (ast.Encode).
	Workflow any    `json:"workflow"`
	Nodes    []Node `json:"nodes"`
	// Unknown lists the actions no worker runs (empty when the server
	// cannot tell: see Known).
	Unknown []string `json:"unknown_actions"`
	Known   bool     `json:"known"`
}

// Workers lists the live workers.
type Workers struct {
	// Known is false when the runner cannot tell.
	Known   bool     `json:"known"`
	Workers []Worker `json:"workers"`
}

// Worker is one live worker.
type Worker struct {
	Name     string     `json:"name"`
	Capacity int        `json:"capacity"`
	Busy     int        `json:"busy"`
	Actions  []string   `json:"actions"`
	Since    *time.Time `json:"since,omitempty"`
}

// Actions lists the action names some worker runs.
type Actions struct {
	Known   bool     `json:"known"`
	Actions []string `json:"actions"`
}

// CancelRequest is the body of the cancel route.
type CancelRequest struct {
	Reason string `json:"reason"`
}

// NodeCancelled is the node cancel route's answer (its body is a
// CancelRequest): the node called Node, at Path, its status as stored
// after the cancel, and the job's summary. Sent says the cancel was sent:
// the node was running, and it fails with kind cancelled once what runs
// under it has settled, which a try around it may rescue (Status stays
// running until then, and on a runner that applies the cancel after
// answering). Not sent: the node was not running (idle, or settled:
// Status says which) and is left as it is. Failure is why the node
// failed, when it has (kind cancelled: by this cancel or an earlier one).
type NodeCancelled struct {
	Job     string   `json:"job"`
	Node    string   `json:"node"`
	Path    string   `json:"path"`
	Status  string   `json:"status"`
	Failure *Failure `json:"failure,omitempty"`
	Sent    bool     `json:"sent"`
	Summary Summary  `json:"summary"`
}

// SignalRequest is the body of the signal route; both fields may be
// left out: the server then makes an ID, and the payload is null.
type SignalRequest struct {
	// ID makes the signal idempotent: the same name and ID sent again
	// changes nothing, for the job's whole life.
	ID string `json:"id,omitempty"`
	// Payload is any JSON, at most 65536 bytes (job.MaxSignalPayload).
	Payload json.RawMessage `json:"payload,omitempty"`
}

// SignalSent is the signal route's answer: the signal as sent (its ID
// the one given, or the one the server made) and the job as stored
// after it. Taken is the path of the wait that took it; Kept says the
// job keeps it for a wait to come; neither: not applied yet (a runner
// that applies it later), or applied before (the ID was sent already).
type SignalSent struct {
	Job     string  `json:"job"`
	Name    string  `json:"name"`
	ID      string  `json:"id"`
	Taken   string  `json:"taken,omitempty"`
	Kept    bool    `json:"kept"`
	Summary Summary `json:"summary"`
}

// Marshal encodes v as the API answers: encoding/json's Marshal (HTML
// characters escaped) and a newline. The server writes its answers with
// it and 'baton ... --json' prints with it, so the two are the same
// bytes.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// SummaryOf returns the summary of a loaded job.
func SummaryOf(j job.Job) Summary {
	settled, total := j.Progress()
	out := j.Running()
	s := Summary{
		ID: string(j.ID()), Status: j.Status().String(), Version: j.Version(),
		Settled: settled, Total: total, Outstanding: &out,
	}
	if c := j.Clock(); !c.IsZero() {
		c = c.UTC()
		s.Updated = &c
	}
	if f, ok := j.Failure(); ok {
		s.Failure = FailureOf(f)
	}
	if why, ok := j.Cancelled(); ok {
		s.Cancel = &Cancel{Reason: why}
		if at, ok := j.CancelTime(); ok {
			s.Cancel.Time = &at
		}
	}
	return s
}

// FailureOf returns f with its message clipped to ClipBytes.
func FailureOf(f job.Failure) *Failure {
	msg, clipped := Clip(f.Message, ClipBytes)
	return &Failure{Path: f.Path, Action: f.Action, Kind: f.Kind, Message: msg, Clipped: clipped, Others: f.Others}
}

// TimersOf returns j's timers.
func TimersOf(j job.Job) []Timer {
	var out []Timer
	for _, t := range j.Timers() {
		out = append(out, Timer{ID: t.ID, Due: t.Due.UTC()})
	}
	return out
}

// SummaryOfInfo returns the summary a listing shows: what store.Info
// tells, without loading the job.
func SummaryOfInfo(in store.Info) Summary {
	if in.Damaged != nil {
		return Summary{ID: string(in.ID), Status: StatusDamaged, Damaged: in.Damaged.Error()}
	}
	s := Summary{ID: string(in.ID), Status: in.Status.String(), Version: in.Version, Settled: in.Settled, Total: in.Total}
	return s.WithInfo(in)
}

// WithInfo returns s with the times the store tells of the job (in, from
// store.List or store.Stat): Created, and Updated when in is of s's
// version (a summary of a past version keeps that version's clock).
func (s Summary) WithInfo(in store.Info) Summary {
	if in.ID != job.ID(s.ID) || in.Damaged != nil {
		return s
	}
	if t, ok := utc(in.Created); ok {
		s.Created = t
	}
	if t, ok := utc(in.Updated); ok && in.Version == s.Version {
		s.Updated = t
	}
	return s
}

// utc returns a pointer to t in UTC, and false for the zero time.
func utc(t time.Time) (*time.Time, bool) {
	if t.IsZero() {
		return nil, false
	}
	t = t.UTC()
	return &t, true
}

// JobOf returns a job's summary and, with nodes, every node, clipped.
func JobOf(j job.Job, nodes bool) Job {
	out := Job{Summary: SummaryOf(j)}
	if nodes {
		out.Nodes = NodesOf(j, ClipBytes)
		out.Timers = TimersOf(j)
		out.Signals = SignalsOf(j, ClipBytes)
	}
	return out
}

// NodesOf returns every node of j in pre-order, text clipped to limit
// bytes, with a started map's copies counted (Node.Copies), a loop's
// iteration (Node.Iteration), a wait's signal (Node.Signal) and what a
// choice read and chose (Node.Choice).
func NodesOf(j job.Job, limit int) []Node {
	var out []Node
	var named []namedOutput // the outputs of the named nodes that succeeded
	j.Walk(func(n job.NodeInfo) bool {
		out = append(out, NodeOf(n, limit))
		if n.Name != "" && n.Status == job.StatusSucceeded {
			named = append(named, namedOutput{n.Name, n.Path, n.Output})
		}
		return true
	})
	grown(out)
	readChoices(j, out, named, limit)
	return out
}

// grown sets Copies on the started maps and Iteration on the loops of
// nodes, a whole tree's in pre-order (NodesOf), from their children.
func grown(nodes []Node) {
	var open []int // the maps and loops above the node at hand, innermost last
	for i := range nodes {
		n := &nodes[i]
		for len(open) > 0 && nodes[open[len(open)-1]].Depth >= n.Depth {
			open = open[:len(open)-1]
		}
		if len(open) > 0 {
			if p := &nodes[open[len(open)-1]]; p.Depth == n.Depth-1 {
				switch p.Kind {
				case kindMap:
					if p.Copies != nil {
						p.Copies.add(n.Status)
					}
				case kindLoop:
					p.Iteration = iterationOf(n.Path)
				}
			}
		}
		switch n.Kind {
		case kindMap:
			if n.Status != job.StatusIdle.String() && n.Status != job.StatusSkipped.String() {
				n.Copies = &Copies{}
			}
			open = append(open, i)
		case kindLoop:
			n.Iteration = 1
			open = append(open, i)
		}
	}
}

var (
	kindMap  = ast.KindMap.String()
	kindLoop = ast.KindLoop.String()
)

// iterationOf returns the iteration, from 1, of the loop body at path
// ("...loop[I]"), or 1 when path does not end so.
func iterationOf(path string) int {
	if k := lastIndex(path, kindLoop); k >= 0 {
		return k + 1
	}
	return 1
}

// NodeOf returns n with its text clipped to limit bytes.
func NodeOf(n job.NodeInfo, limit int) Node {
	out := Node{Path: n.Path, Name: n.Name, Depth: n.Depth, Kind: n.Kind.String(), Status: n.Status.String()}
	if n.Kind == ast.KindAct {
		out.Action, out.Attempt = n.Action, n.Attempt
		var c1, c2, c3 bool
		out.Payload, c1 = Clip(string(n.Payload), limit)
		out.Output, c2 = Clip(string(n.Output), limit)
		out.Error, c3 = Clip(n.Error, limit)
		out.Clipped = c1 || c2 || c3
		if !n.Retry.IsZero() {
			r := n.Retry.UTC()
			out.Retry = &r
		}
	}
	if n.Failure != nil {
		out.Failure = FailureOf(*n.Failure)
	}
	return out
}

// Clip cuts s to at most limit bytes at a rune boundary, and says whether
// it cut.
func Clip(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	n := limit
	for n > 0 && n > limit-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}
