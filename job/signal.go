package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/batonwf/baton/ast"
)

// Signal is a message sent to a job from outside: a wait node of its name
// takes it and completes with its payload (see the package doc, "Waits,
// signals and sleeps"). A runner delivers it as a result, SignalResult,
// through Restart, like any result; Deliver does that for a batch.
type Signal struct {
	// Name is the signal's name, which a wait names: a valid node name
	// (ast.CheckSignalName).
	Name string
	// ID makes the signal idempotent: a second signal of the same name and
	// ID is ignored for the job's whole life. 1 to MaxSignalIDLen bytes of
	// valid UTF-8 without control characters.
	ID string
	// Payload is the signal's JSON payload, nil for null; at most
	// MaxSignalPayload bytes.
	Payload json.RawMessage
	// At is when the runner received the signal: it moves the job's
	// clock as a result's time does; the zero time leaves it.
	At time.Time
}

// Limits on signals.
const (
	// MaxKeptSignals is the most signals a job keeps for waits that have
	// not started: more are ignored (IgnoredQueueFull).
	MaxKeptSignals = 100
	// MaxSignalPayload is the largest payload a signal may carry, in
	// bytes.
	MaxSignalPayload = 64 << 10
	// MaxSignalIDLen is the longest signal ID, in bytes.
	MaxSignalIDLen = 200
)

// signalPrefix starts the ActionID of a signal's result:
// "@signal/NAME/ID".
const signalPrefix = "@signal/"

// Check returns what is wrong with s, or nil: a name that is not a valid
// name, an empty, overlong or unprintable ID, a payload that is not JSON
// or is larger than MaxSignalPayload. Restart ignores a signal that fails
// it (IgnoredUnknown); a runner checks it first, to refuse it to its
// sender.
func (s Signal) Check() error {
	if msg := ast.CheckSignalName(s.Name); msg != "" {
		return fmt.Errorf("job: signal %s", msg)
	}
	if s.ID == "" || len(s.ID) > MaxSignalIDLen || !utf8.ValidString(s.ID) || strings.ContainsFunc(s.ID, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("job: signal %s: ID %q is not 1 to %d bytes of printable UTF-8", s.Name, s.ID, MaxSignalIDLen)
	}
	if len(s.Payload) > MaxSignalPayload {
		return fmt.Errorf("job: signal %s/%s: payload of %d bytes is over the limit of %d", s.Name, s.ID, len(s.Payload), MaxSignalPayload)
	}
	if len(s.Payload) > 0 && !json.Valid(s.Payload) {
		return fmt.Errorf("job: signal %s/%s: payload is not JSON", s.Name, s.ID)
	}
	return nil
}

// SignalResult is the result by which signal s reaches job id: its
// ActionID is "@signal/NAME/ID", its Output the payload, its At the
// signal's time. A runner delivers it like any result (Restart), and a
// store journals it with its step.
func SignalResult(id ID, s Signal) Result {
	return Result{JobID: id, ActionID: signalPrefix + s.Name + "/" + s.ID, Output: s.Payload, At: s.At}
}

// AsSignal returns the signal r carries, and whether r is a signal's
// result (SignalResult).
func (r Result) AsSignal() (Signal, bool) {
	rest, ok := strings.CutPrefix(r.ActionID, signalPrefix)
	if !ok {
		return Signal{}, false
	}
	name, id, ok := strings.Cut(rest, "/")
	if !ok {
		return Signal{}, false
	}
	return Signal{Name: name, ID: id, Payload: r.Output, At: r.At}, true
}

// Deliver applies signals to j: Restart with their results.
func Deliver(j Job, signals ...Signal) (Transition, error) {
	rs := make([]Result, len(signals))
	for i, s := range signals {
		rs[i] = SignalResult(j.id, s)
	}
	return Restart(j, rs)
}

// KeptSignal is a signal a job keeps for a wait that has not started.
type KeptSignal struct {
	Name, ID string
	Payload  json.RawMessage // nil for null
	At       time.Time       // zero if it carried no time
}

// TakenSignal records which wait took which signal.
type TakenSignal struct {
	Path     string // the wait's path
	Name, ID string
}

// Signals returns the signals j keeps, oldest first, and which wait took
// which signal, in the order they were taken. The slices are the
// caller's.
func (j Job) Signals() (kept []KeptSignal, taken []TakenSignal) {
	if j.sig == nil {
		return nil, nil
	}
	for _, k := range j.sig.kept {
		kept = append(kept, KeptSignal{Name: k.name, ID: k.id, Payload: k.payload, At: timeOf(k.at)})
	}
	for _, t := range j.sig.taken {
		taken = append(taken, TakenSignal{Path: j.t.path(t.node), Name: t.name, ID: t.id})
	}
	return kept, taken
}

// SignalSeen reports whether j has applied the signal name/id: a wait
// took it, j keeps it for one, or j dropped it because its queue was
// full. The same signal sent again changes nothing (a duplicate), for the
// job's whole life, after it finished too.
func (j Job) SignalSeen(name, id string) bool {
	if j.sig == nil {
		return false
	}
	_, ok := slices.BinarySearch(j.sig.seen, name+"/"+id)
	return ok
}

// SignalNames returns the names of the signals j's waits take, sorted:
// every wait of the workflow, those of a map's template and a loop's
// body included (their copies and iterations take the same names). A
// signal of another name is kept for no wait, ever.
func (j Job) SignalNames() []string {
	if j.t == nil {
		return nil
	}
	names := make([]string, 0, len(j.t.waits))
	for name := range j.t.waits {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func timeOf(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// sigState is what a job knows of the signals sent to it. It is copied
// on write (engine.ownSig): signals are rare beside results.
type sigState struct {
	// seen holds every name/ID applied, kept, taken or dropped by a full
	// queue, as "NAME/ID", sorted: a repeat is a duplicate.
	seen []string
	// kept are the signals no wait took yet, oldest first.
	kept []keptSig
	// taken records each wait that took a signal, in the order taken.
	taken []takenSig
	// starts counts the waits begun, so that each knows its place
	// (nstate.attempt of a wait): the first begun takes a signal first.
	starts uint32
}

type keptSig struct {
	name, id string
	payload  []byte
	at       int64
}

type takenSig struct {
	node     int32
	name, id string
}

func (s *sigState) clone() *sigState {
	if s == nil {
		return &sigState{}
	}
	return &sigState{seen: slices.Clone(s.seen), kept: slices.Clone(s.kept), taken: slices.Clone(s.taken), starts: s.starts}
}

// ownSig makes the job's signal state this edit's own copy.
func (e *engine) ownSig() *sigState {
	if !e.ownSigs {
		e.j.sig = e.j.sig.clone()
		e.ownSigs = true
	}
	return e.j.sig
}

// keyedSignal is a signal of a batch, with its result.
type keyedSignal struct {
	s Signal
	r *Result
}

// compareSignals orders a batch's signals by time, then ID, then name.
func compareSignals(a, b keyedSignal) int {
	if c := a.s.At.Compare(b.s.At); c != 0 {
		return c
	}
	if c := strings.Compare(a.s.ID, b.s.ID); c != 0 {
		return c
	}
	return strings.Compare(a.s.Name, b.s.Name)
}

// applySignal applies the signal k (phase 1, after the batch's results)
// and reports whether it changed the job, and why it was ignored (0 when
// a wait took it or it was kept). A signal dropped by a full queue both
// changes the job (its ID is seen from then on) and is ignored.
func (e *engine) applySignal(k keyedSignal, done bool) (changed bool, ig Ignored) {
	s := k.s
	ig = Ignored{Result: *k.r}
	if done {
		ig.Reason = IgnoredJobSettled
		return false, ig
	}
	if err := s.Check(); err != nil {
		ig.Reason, ig.Detail = IgnoredUnknown, err.Error()
		return false, ig
	}
	key := s.Name + "/" + s.ID
	var seen []string
	if e.j.sig != nil {
		seen = e.j.sig.seen
	}
	i, dup := slices.BinarySearch(seen, key)
	if dup {
		ig.Reason, ig.Detail = IgnoredDuplicate, "signal "+key+" was applied already"
		return false, ig
	}
	st := e.ownSig()
	st.seen = slices.Insert(st.seen, i, key)
	// Compact, so that a payload kept reads back from an encoding as it
	// was applied.
	var payload []byte
	if len(s.Payload) > 0 {
		var c bytes.Buffer
		_ = json.Compact(&c, s.Payload) // Check found it valid
		if c.String() != "null" {
			payload = c.Bytes()
		}
	}
	if w := e.waitingFor(s.Name); w >= 0 {
		e.tick(s.At)
		e.takeSignal(w, s.Name, s.ID, payload)
		return true, Ignored{}
	}
	if len(st.kept) >= MaxKeptSignals {
		ig.Reason = IgnoredQueueFull
		return true, ig
	}
	e.tick(s.At)
	st.kept = append(st.kept, keptSig{name: s.Name, id: s.ID, payload: payload, at: unixNano(s.At)})
	return true, Ignored{}
}

// waitingFor returns the running wait for signal name that began first
// (the fewest starts before it; in one round, tree order), or -1.
func (e *engine) waitingFor(name string) int32 {
	best := int32(-1)
	for _, w := range e.j.t.waits[name] {
		s := e.get(w)
		if s.status != StatusRunning {
			continue
		}
		if best < 0 || s.attempt < e.get(best).attempt {
			best = w
		}
	}
	return best
}

// takeSignal completes the running wait w with the signal name/id.
func (e *engine) takeSignal(w int32, name, id string, payload []byte) {
	st := e.ownSig()
	st.taken = append(st.taken, takenSig{node: w, name: name, id: id})
	e.record(w, result{output: payload})
	if o := e.node(w).out; o >= 0 {
		e.setOutput(o, payload)
	}
	e.settle(w, StatusSucceeded, 0, 0)
}

// takeKept gives the running wait w the oldest kept signal of its name,
// if there is one, and reports whether there was.
func (e *engine) takeKept(w int32) bool {
	if e.j.sig == nil {
		return false
	}
	name := e.node(w).x.signal
	for i, k := range e.j.sig.kept {
		if k.name == name {
			st := e.ownSig()
			st.kept = slices.Delete(st.kept, i, i+1)
			e.takeSignal(w, k.name, k.id, k.payload)
			return true
		}
	}
	return false
}

// hasKept reports whether j keeps a signal called name.
func (j *Job) hasKept(name string) bool {
	if j.sig == nil {
		return false
	}
	for _, k := range j.sig.kept {
		if k.name == name {
			return true
		}
	}
	return false
}

// record appends the result r of node id to the edit's results, making
// the edit's chunk if no result made it yet.
func (e *engine) record(id int32, r result) {
	if e.res == nil {
		e.res = newResChunk(e.j.results, 1)
		e.j.results = e.res
	}
	e.res.entries = append(e.res.entries, resEntry{id, r})
}

// appendSignals appends the job's signal state to its encoding:
//
//	,"signals":{"starts":N,"seen":["NAME/ID",...],
//	 "kept":[[NAME,ID,PAYLOAD,AT],...],"taken":[[NODE,NAME,ID],...]}
//
// PAYLOAD is the JSON payload (null for none), AT Unix nanoseconds (0:
// none).
func appendSignals(b []byte, s *sigState) []byte {
	b = append(b, `,"signals":{"starts":`...)
	b = strconv.AppendUint(b, uint64(s.starts), 10)
	b = append(b, `,"seen":[`...)
	for i, k := range s.seen {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
	}
	b = append(b, `],"kept":[`...)
	for i, k := range s.kept {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendString(b, k.name)
		b = append(b, ',')
		b = appendString(b, k.id)
		b = append(b, ',')
		if len(k.payload) == 0 {
			b = append(b, "null"...)
		} else {
			b = append(b, k.payload...) // compacted when applied
		}
		b = append(b, ',')
		b = strconv.AppendInt(b, k.at, 10)
		b = append(b, ']')
	}
	b = append(b, `],"taken":[`...)
	for i, t := range s.taken {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(t.node), 10)
		b = append(b, ',')
		b = appendString(b, t.name)
		b = append(b, ',')
		b = appendString(b, t.id)
		b = append(b, ']')
	}
	return append(b, "]}"...)
}

// encodedSignals is the signal state as Decode reads it.
type encodedSignals struct {
	Starts uint32              `json:"starts"`
	Seen   []string            `json:"seen"`
	Kept   [][]json.RawMessage `json:"kept"`
	Taken  [][]json.RawMessage `json:"taken"`
}

// state returns the signal state e encodes; Job.check checks the rest.
func (e *encodedSignals) state() (*sigState, error) {
	s := &sigState{starts: e.Starts, seen: e.Seen}
	for i, k := range e.Kept {
		var ks keptSig
		if len(k) != 4 || json.Unmarshal(k[0], &ks.name) != nil || json.Unmarshal(k[1], &ks.id) != nil || json.Unmarshal(k[3], &ks.at) != nil {
			return nil, fmt.Errorf("kept[%d] is not [name, id, payload, at]", i)
		}
		if string(k[2]) != "null" {
			ks.payload = k[2]
		}
		s.kept = append(s.kept, ks)
	}
	for i, t := range e.Taken {
		var ts takenSig
		if len(t) != 3 || json.Unmarshal(t[0], &ts.node) != nil || json.Unmarshal(t[1], &ts.name) != nil || json.Unmarshal(t[2], &ts.id) != nil {
			return nil, fmt.Errorf("taken[%d] is not [node, name, id]", i)
		}
		s.taken = append(s.taken, ts)
	}
	return s, nil
}
