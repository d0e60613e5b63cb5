package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/batonwf/baton/ast"
)

// Format is the newest version of the job encoding this package writes.
// Encode writes the oldest format that can hold the job, so that an older
// baton can read every job that uses nothing it lacks. Decode reads every
// format up to Format and refuses newer ones with ErrFutureFormat.
//
//	1  the first format
//	2  adds "incarnation" (WithIncarnation), written when it is not 0
//	3  workflows with names, inputs and dags (the dag's state uses the
//	   node fields of a par, with pos counting the children started)
//	4  time: "clock" (Unix nanoseconds), pending "timers"
//	   [[node,kind,attempt,due],...] (kind 1 retry, 2 deadline), a tenth
//	   field in "nodes" (flags: 1 a leaf waiting for its retry), and a
//	   result's "kind"; written when the job has a clock, timers or
//	   kinds, or its workflow uses retries, timeouts, deadlines or
//	   at-most-once delivery; "cancel" (the reason a job was cancelled
//	   with), and flag 2 (a node whose deadline ran out, or the root of a
//	   cancelled job)
//	5  workflows with action priorities ("priority" on an act, which
//	   a format-4 reader's workflow decoder refuses); otherwise the same
//	   as format 4
//	6  flag 4: a leaf whose own deadline stopped its attempt in flight
//	   (so that a late result of it is told from a duplicate); written
//	   when a node has it
//	7  "cancel_at" (Unix nanoseconds: when the cancel was made, the time
//	   stamped on its result); written when the cancel carried a time
//	8  workflows with races or replicas (workflow version 2, which a
//	   format-7 reader's workflow decoder refuses); a race's state uses
//	   the node fields of a par, with pos 1 + the index of the child
//	   that won (0 while undecided)
//	9  workflows of version 3 (choice, end, dag guards, race need, par
//	   and dag limits); status 5 (skipped); flag 8 on a choice that
//	   failed because its output was not an array; "end" (the reason of
//	   the end node that stopped the job, which then ends succeeded)
//	10 workflows with maps or loops; "grown", the log of the changes
//	   of the tree, oldest first: [MAP,[ELEMENT,...]] for a map that
//	   started (its copies' elements), [LOOP] for a loop's next
//	   iteration (see maploop.go); flag 16 on a map that failed because
//	   its array was too large, flag 32 on a map whose need was met; a
//	   map's state uses the node fields of a par with a limit (pos the
//	   copies started), attempt counting the copies that succeeded
const Format = 10

// Errors returned by Decode, wrapped with details; test with errors.Is.
var (
	ErrCorrupt      = errors.New("job: corrupt encoded job")
	ErrFutureFormat = errors.New("job: encoded job has a newer format than this baton reads")
)

// Encode returns the canonical encoding of j: the same job always encodes
// to the same bytes. The form is JSON:
//
//	{"format":F,"id":ID,["incarnation":N,]"version":V,"workflow":NODE,
//	 "nodes":[[index,status,out,attempt,pos,done,nfail,cause,others],...],
//	 "results":[{"node":index,"output":JSON,"error":MSG},...]}
//
// An output that is not valid JSON is written base64 as "output_b64".
// listing only nodes whose state is not all zero (idle nodes cost nothing)
// and the results of settled actions. Encoding is O(tree); stores keep it
// for snapshots and append Steps in between.
func Encode(j Job) ([]byte, error) {
	if j.t == nil {
		return nil, errors.New("job: Encode of a zero Job")
	}
	workflow := ast.AppendJSON(nil, j.t.root)
	b := make([]byte, 0, 64+len(workflow)+16*len(j.t.nodes))
	format := j.format()
	b = append(b, `{"format":`...)
	b = strconv.AppendInt(b, int64(format), 10)
	b = append(b, `,"id":`...)
	b = appendString(b, string(j.id))
	if j.inc != 0 {
		b = append(b, `,"incarnation":`...)
		b = strconv.AppendUint(b, j.inc, 10)
	}
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, j.version, 10)
	if j.clock != 0 {
		b = append(b, `,"clock":`...)
		b = strconv.AppendInt(b, j.clock, 10)
	}
	if j.cancel != "" {
		b = append(b, `,"cancel":`...)
		b = appendString(b, j.cancel)
	}
	if j.cancelAt != 0 {
		b = append(b, `,"cancel_at":`...)
		b = strconv.AppendInt(b, j.cancelAt, 10)
	}
	if j.ended != "" {
		b = append(b, `,"end":`...)
		b = appendString(b, j.ended)
	}
	b = append(b, `,"workflow":`...)
	b = append(b, workflow...)
	b = append(b, `,"nodes":[`...)
	first := true
	j.st.each(func(i int32, s *nstate) {
		if s.status == StatusIdle && *s == (nstate{}) {
			return
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '[')
		fields := [...]int64{int64(i), int64(s.status), int64(s.out), int64(s.attempt),
			int64(s.pos), int64(s.done), int64(s.nfail), int64(s.cause), int64(s.others), int64(s.flags)}
		n := len(fields)
		if format < 4 {
			n-- // no flags before format 4
		}
		for k, v := range fields[:n] {
			if k > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, ']')
	})
	b = append(b, `],"results":[`...)
	first = true
	for i, res := range j.resultsByNode() {
		if res == nil {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"node":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		switch {
		case len(res.output) == 0:
		case rawJSON(res.output):
			b = append(b, `,"output":`...)
			b = append(b, res.output...)
		default:
			out, _ := json.Marshal(res.output) // base64 string; cannot fail
			b = append(b, `,"output_b64":`...)
			b = append(b, out...)
		}
		if res.err != "" {
			b = append(b, `,"error":`...)
			b = appendString(b, res.err)
		}
		if res.kind != "" {
			b = append(b, `,"kind":`...)
			b = appendString(b, res.kind)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if len(j.timers) > 0 {
		b = append(b, `,"timers":[`...)
		for i, p := range j.timers {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(p.node), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(p.kind), 10)
			b = append(b, ',')
			b = strconv.AppendUint(b, uint64(p.attempt), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, p.due, 10)
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	if j.sig != nil {
		b = appendSignals(b, j.sig)
	}
	if len(j.cancels) > 0 {
		b = appendNodeCancels(b, j.cancels)
	}
	if j.grown != nil {
		b = appendGrowth(b, j.grown)
	}
	b = append(b, '}')
	return b, nil
}

// format returns the oldest format that holds j (see Format).
func (j Job) format() int {
	switch {
	case j.t.grows:
		return 10
	case j.t.lang3 || j.sig != nil || len(j.cancels) > 0:
		return 9
	case j.t.raced:
		return 8
	case j.cancelAt != 0:
		return 7
	case j.hasStopped():
		return 6
	case j.t.prioritised:
		return 5
	case j.t.timed || j.clock != 0 || len(j.timers) > 0 || j.cancel != "" || j.hasKinds():
		return 4
	case j.t.graph:
		return 3
	case j.inc != 0:
		return 2
	}
	return 1
}

// hasStopped reports whether a leaf of j has flagStopped: only a leaf
// with a deadline can.
func (j Job) hasStopped() bool {
	if !j.t.timed {
		return false
	}
	for i := range j.t.nodes {
		if tn := &j.t.nodes[i]; tn.kind == ast.KindAct && tn.deadline > 0 && j.st.get(int32(i)).flags&flagStopped != 0 {
			return true
		}
	}
	return false
}

// hasKinds reports whether a result of j has a failure kind.
func (j Job) hasKinds() bool {
	for c := j.results; c != nil; c = c.prev {
		for _, e := range c.entries {
			if e.res.kind != "" {
				return true
			}
		}
	}
	return false
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // strings always marshal
	return append(b, q...)
}

type encoded struct {
	Format   *int                `json:"format"`
	ID       ID                  `json:"id"`
	Inc      *uint64             `json:"incarnation"`
	Version  uint64              `json:"version"`
	Clock    *int64              `json:"clock"`
	Cancel   *string             `json:"cancel"`
	CancelAt *int64              `json:"cancel_at"`
	End      *string             `json:"end"`
	Timers   [][]int64           `json:"timers"`
	Signals  *encodedSignals     `json:"signals"`
	Cancels  [][]json.RawMessage `json:"cancelled_nodes"`
	Grown    [][]json.RawMessage `json:"grown"`
	Workflow json.RawMessage     `json:"workflow"`
	Nodes    [][]int64           `json:"nodes"`
	Results  []struct {
		Node      int64           `json:"node"`
		Output    json.RawMessage `json:"output"`
		OutputB64 []byte          `json:"output_b64"`
		Error     string          `json:"error"`
		Kind      string          `json:"kind"`
	} `json:"results"`
}

// Decode reads a job written by Encode. A malformed, inconsistent or
// truncated encoding is an error wrapping ErrCorrupt that says what is
// wrong and where; a newer format wraps ErrFutureFormat. Decode checks
// every invariant of the job's state, so a job it returns is safe to
// Restart. It never panics.
func Decode(data []byte) (Job, error) {
	var enc encoded
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&enc); err != nil {
		return Job{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if rest := bytes.TrimSpace(data[dec.InputOffset():]); len(rest) > 0 {
		return Job{}, fmt.Errorf("%w: data after the job at byte %d", ErrCorrupt, dec.InputOffset())
	}
	switch {
	case enc.Format == nil:
		return Job{}, fmt.Errorf("%w: no format version", ErrCorrupt)
	case *enc.Format > Format:
		return Job{}, fmt.Errorf("%w: format %d (this baton reads up to %d)", ErrFutureFormat, *enc.Format, Format)
	case *enc.Format < 1:
		return Job{}, fmt.Errorf("%w: format %d", ErrCorrupt, *enc.Format)
	}
	corrupt := func(format string, args ...any) (Job, error) {
		return Job{}, fmt.Errorf("%w: job %q: %s", ErrCorrupt, enc.ID, fmt.Sprintf(format, args...))
	}
	if err := enc.ID.Check(); err != nil {
		return corrupt("%v", err)
	}
	if enc.Version < 1 {
		return corrupt("version %d", enc.Version)
	}
	var inc uint64
	if enc.Inc != nil {
		if *enc.Format < 2 || *enc.Inc == 0 {
			return corrupt("incarnation %d in format %d (format 2 holds incarnations other than 0)", *enc.Inc, *enc.Format)
		}
		inc = *enc.Inc
	}
	var root ast.Node
	if err := root.UnmarshalJSON(enc.Workflow); err != nil {
		return corrupt("workflow: %v", err)
	}
	t, err := compile(root)
	if err != nil {
		return corrupt("workflow: %v", err)
	}
	if t.graph && *enc.Format < 3 {
		return corrupt("a workflow with names, inputs or dags in format %d (format 3 holds them)", *enc.Format)
	}
	if *enc.Format < 4 && (t.timed || enc.Clock != nil || enc.Timers != nil || enc.Cancel != nil) {
		return corrupt("time (retries, timeouts, a clock or timers) in format %d (format 4 holds it)", *enc.Format)
	}
	if t.prioritised && *enc.Format < 5 {
		return corrupt("a workflow with action priorities in format %d (format 5 holds them)", *enc.Format)
	}
	if t.raced && *enc.Format < 8 {
		return corrupt("a workflow with races or replicas in format %d (format 8 holds them)", *enc.Format)
	}
	if t.lang3 && *enc.Format < 9 {
		return corrupt("a workflow of version 3 (choice, end, guards, need, limit) in format %d (format 9 holds it)", *enc.Format)
	}
	if t.grows && *enc.Format < 10 || enc.Grown != nil && !t.grows {
		return corrupt("a workflow with maps or loops in format %d (format 10 holds them), or a growth log without them", *enc.Format)
	}
	grown, t, err := replayGrowth(t, enc.Grown)
	if err != nil {
		return corrupt("grown: %v", err)
	}
	nfields := 9
	if *enc.Format >= 4 {
		nfields = 10
	}
	states := make([]nstate, len(t.nodes))
	last := int64(-1)
	for k, f := range enc.Nodes {
		if len(f) != nfields {
			return corrupt("nodes[%d] has %d fields, want %d", k, len(f), nfields)
		}
		i := f[0]
		if i <= last || i >= int64(len(t.nodes)) {
			return corrupt("nodes[%d] names node %d (want increasing indexes below %d)", k, i, len(t.nodes))
		}
		last = i
		for n, v := range f[1:] {
			if v < 0 || v > 1<<31-1 {
				return corrupt("nodes[%d] field %d is %d", k, n+1, v)
			}
		}
		top := int64(StatusCancelled)
		if *enc.Format >= 9 {
			top = int64(StatusSkipped)
		}
		if f[1] > top || f[2] > int64(StatusCancelled) {
			return corrupt("node %d has status %d/%d", i, f[1], f[2])
		}
		states[i] = nstate{status: Status(f[1]), out: Status(f[2]), attempt: uint32(f[3]), pos: int32(f[4]),
			done: int32(f[5]), nfail: int32(f[6]), cause: int32(f[7]), others: int32(f[8])}
		if nfields == 10 {
			known := int64(flagWaiting | flagExpired)
			if *enc.Format >= 6 {
				known |= flagStopped
			}
			if *enc.Format >= 9 {
				known |= flagNotArray
			}
			if *enc.Format >= 10 {
				known |= flagTooLarge | flagWon
			}
			if f[9]&^known != 0 {
				return corrupt("node %d has flags %d in format %d", i, f[9], *enc.Format)
			}
			states[i].flags = uint8(f[9])
		}
	}
	last = -1
	var results *resChunk
	if len(enc.Results) > 0 {
		results = newResChunk(nil, len(enc.Results))
	}
	for k, r := range enc.Results {
		if r.Node <= last || r.Node >= int64(len(t.nodes)) {
			return corrupt("results[%d] names node %d (want increasing indexes below %d)", k, r.Node, len(t.nodes))
		}
		last = r.Node
		if t.nodes[r.Node].kind != ast.KindAct && t.nodes[r.Node].kind != ast.KindWait {
			return corrupt("results[%d] is for node %d, a %s", k, r.Node, t.nodes[r.Node].kind)
		}
		if r.Output != nil && r.OutputB64 != nil {
			return corrupt("results[%d] has both output and output_b64", k)
		}
		out := []byte(r.Output)
		if r.OutputB64 != nil {
			out = r.OutputB64
		}
		if r.Kind != "" && (r.Error == "" || *enc.Format < 4) {
			return corrupt("results[%d] has a kind %q without a failure, or before format 4", k, r.Kind)
		}
		results.entries = append(results.entries, resEntry{int32(r.Node), result{output: out, err: r.Error, kind: r.Kind}})
	}
	j := Job{id: enc.ID, version: enc.Version, t: t, st: newSplitVec(t, states, nil), results: results, inc: inc, grown: grown}
	if enc.Clock != nil {
		if *enc.Clock == 0 {
			return corrupt("clock 0 written")
		}
		j.clock = *enc.Clock
	}
	if enc.Cancel != nil {
		if *enc.Cancel == "" {
			return corrupt("an empty cancel reason written")
		}
		j.cancel = *enc.Cancel
	}
	if enc.End != nil {
		if *enc.End == "" || !t.lang3 {
			return corrupt("an empty end reason, or an end in a workflow without end nodes")
		}
		j.ended = *enc.End
	}
	if enc.CancelAt != nil {
		switch {
		case *enc.Format < 7:
			return corrupt("a cancel's time in format %d (format 7 holds it)", *enc.Format)
		case *enc.CancelAt == 0 || enc.Cancel == nil:
			return corrupt("cancel_at %d without a cancel, or zero", *enc.CancelAt)
		}
		j.cancelAt = *enc.CancelAt
	}
	for k, f := range enc.Timers {
		if len(f) != 4 || f[0] < 0 || f[0] >= int64(len(t.nodes)) || (f[1] != timerRetry && f[1] != timerDeadline && f[1] != timerSleep) || f[2] < 0 || f[2] > 1<<31-1 {
			return corrupt("timers[%d] is %v (want [node, kind 1 or 2, attempt, due])", k, f)
		}
		p := pending{node: int32(f[0]), kind: uint8(f[1]), attempt: uint32(f[2]), due: f[3]}
		if k > 0 && comparePending(j.timers[k-1], p) >= 0 {
			return corrupt("timers[%d] is out of order or repeated", k)
		}
		j.timers = append(j.timers, p)
	}
	for k, c := range enc.Cancels {
		var nc nodeCancel
		if *enc.Format < 9 || len(c) != 2 || json.Unmarshal(c[0], &nc.node) != nil || json.Unmarshal(c[1], &nc.reason) != nil {
			return corrupt("cancelled_nodes[%d] is not [node, reason], or before format 9", k)
		}
		j.cancels = append(j.cancels, nc)
	}
	if enc.Signals != nil {
		if *enc.Format < 9 {
			return corrupt("signals in format %d (format 9 holds them)", *enc.Format)
		}
		sig, err := enc.Signals.state()
		if err != nil {
			return corrupt("signals: %v", err)
		}
		j.sig = sig
	}
	if results != nil && t.named > 0 {
		for _, e := range results.entries {
			if o := t.nodes[e.node].out; o >= 0 && e.res.err == "" {
				if j.outs == nil {
					j.outs = make([][]byte, t.named)
				}
				j.outs[o] = e.res.output
			}
		}
	}
	if t.raced && t.named > 0 {
		for i := range t.nodes {
			if o := t.nodes[i].out; o >= 0 && t.nodes[i].kind == ast.KindRace && states[i].pos > 0 && int(states[i].pos) <= len(t.nodes[i].kids) {
				if out := j.raceOutput(int32(i)); out != nil {
					if j.outs == nil {
						j.outs = make([][]byte, t.named)
					}
					j.outs[o] = out
				}
			}
		}
	}
	if t.grows && t.named > 0 {
		for i := range t.nodes {
			k := t.nodes[i].kind
			if o := t.nodes[i].out; o >= 0 && (k == ast.KindMap || k == ast.KindLoop) && !t.nodes[i].inert && states[i].status == StatusSucceeded && j.goodGrowing(int32(i)) {
				if out := j.growthOutput(int32(i)); out != nil {
					if j.outs == nil {
						j.outs = make([][]byte, t.named)
					}
					j.outs[o] = out
				}
			}
		}
	}
	for i := range states {
		if t.nodes[i].kind != ast.KindAct || t.nodes[i].inert {
			continue
		}
		switch states[i].status {
		case StatusRunning:
			if states[i].flags&flagWaiting == 0 {
				j.running++
			}
		case StatusSucceeded, StatusFailed:
			j.settled++
		}
	}
	if err := j.check(); err != nil {
		return corrupt("%v", err)
	}
	return j, nil
}

// rawJSON reports whether out can be embedded in the encoding as is and read
// back byte for byte: valid JSON without surrounding white space.
func rawJSON(out []byte) bool {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	return len(out) > 0 && !isSpace(out[0]) && !isSpace(out[len(out)-1]) && json.Valid(out)
}
