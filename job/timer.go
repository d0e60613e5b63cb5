package job

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batonwf/baton/ast"
)

// Timer is a wait the reducer asks the runner for: when Due comes, the
// runner delivers t.Fire(now) as a result. The reducer never reads a clock:
// the runner owns it, and the firing brings its time into the job.
//
// A timer a later transition withdraws (its leaf gave up, its node
// settled) is simply not pending any more: its firing is ignored
// (IgnoredTimer), so a runner need not cancel it.
type Timer struct {
	JobID ID
	// ID names the timer: "PATH@retry#N" starts attempt N of the leaf at
	// PATH; "PATH@deadline" is the deadline of the node at PATH.
	ID  string
	Due time.Time
}

// Fire returns the result a runner delivers when t is due: at is when it
// fired (at or after Due).
func (t Timer) Fire(at time.Time) Result {
	return Result{JobID: t.JobID, ActionID: t.ID, At: at}
}

func (t Timer) String() string {
	return string(t.JobID) + " " + t.ID + " at " + t.Due.UTC().Format(time.RFC3339Nano)
}

// Timer kinds, in a job's table of pending timers. A cancel (Cancel)
// travels like a firing, with the ID "@cancel" and its reason as Error.
const (
	timerRetry = 1 + iota
	timerDeadline
	timerCancel // never pending: not in the table
	timerSleep  // a sleep's: "PATH@sleep"
	// timerCancelNode is a node's cancel (CancelNode), applied with the
	// firings: never pending.
	timerCancelNode
)

// cancelID is the ActionID of the result Cancel applies.
const cancelID = "@cancel"

// pending is a timer a job waits for.
type pending struct {
	node    int32
	kind    uint8
	attempt uint32 // retry: the attempt it starts
	due     int64  // Unix nanoseconds
}

// timerID returns the ID of the pending timer p of a job of tree t.
func (t *tree) timerID(p pending) string {
	path := ast.ShowPath(t.path(p.node))
	if p.kind == timerRetry {
		return path + "@retry#" + strconv.FormatUint(uint64(p.attempt), 10)
	}
	if p.kind == timerSleep {
		return path + "@sleep"
	}
	return path + "@deadline"
}

// splitTimerID reads a timer ID: the node's path ("" for the root, which
// is written "root"), the kind, and for a retry the attempt. ok is false
// when id is not a timer ID.
func splitTimerID(id string) (path string, kind uint8, attempt int, ok bool) {
	i := strings.LastIndexByte(id, '@')
	if i < 0 {
		return "", 0, 0, false
	}
	path, rest := id[:i], id[i+1:]
	switch {
	case id == cancelID:
		return "", timerCancel, 0, true
	case path == "":
		return "", 0, 0, false // the root is "root", as in action IDs
	case path == ast.RootPath:
		path = ""
	}
	switch {
	case rest == "deadline":
		return path, timerDeadline, 0, true
	case rest == "sleep":
		return path, timerSleep, 0, true
	case strings.HasPrefix(rest, "retry#"):
		n, ok := atoi(rest[len("retry#"):])
		if !ok || n < 2 {
			return "", 0, 0, false
		}
		return path, timerRetry, n, true
	}
	return "", 0, 0, false
}

// Timers returns the timers the job waits for, in tree order: what a
// runner arms again when it takes the job over after a crash, beside the
// outstanding actions. The returned timers are the caller's.
func (j Job) Timers() []Timer {
	out := make([]Timer, len(j.timers))
	for i, p := range j.timers {
		out[i] = Timer{JobID: j.id, ID: j.t.timerID(p), Due: time.Unix(0, p.due).UTC()}
	}
	if j.t.rank != nil {
		out = j.t.sortTimers(out)
	}
	return out
}

// sortTimers puts ts, timers of a job of t sorted by node ID, in tree
// order: once a map added copies, IDs are not in pre-order (see order).
func (t *tree) sortTimers(ts []Timer) []Timer {
	type ranked struct {
		r int32
		k uint8
		t Timer
	}
	rs := make([]ranked, len(ts))
	for i, tm := range ts {
		path, kind, _, _ := splitTimerID(tm.ID)
		id, _ := t.lookup(path)
		rs[i] = ranked{t.order(id), kind, tm}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		if c := cmp.Compare(a.r, b.r); c != 0 {
			return c
		}
		return cmp.Compare(a.k, b.k)
	})
	for i := range rs {
		ts[i] = rs[i].t
	}
	return ts
}

// Clock returns the job's clock: its start time (StartedAt) or the latest
// time stamped on a result or firing it applied, whichever is later.
func (j Job) Clock() time.Time {
	if j.clock == 0 {
		return time.Time{}
	}
	return time.Unix(0, j.clock).UTC()
}

// StartedAt gives New the job's start time: its clock until results
// bring later times. Deadlines of nodes that start with the job count
// from it.
func StartedAt(t time.Time) Option {
	return func(o *origin) { o.start = unixNano(t) }
}

// unixNano converts t to Unix nanoseconds, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// backoff returns the wait before attempt next of the leaf at path of job
// id, under policy r: Initial * Multiplier^(next-2), capped at Max, then
// moved by up to ±Jitter of itself, drawn from a hash of the job, the path
// and the attempt, so the same job waits the same wherever it is replayed.
// The cap applies before the jitter.
func backoff(r *ast.Retry, id ID, path string, next int) time.Duration {
	d := float64(r.Initial)
	m := r.Multiplier
	if m == 0 {
		m = 1
	}
	d *= math.Pow(m, float64(next-2))
	if r.Max > 0 && d > float64(r.Max) {
		d = float64(r.Max)
	}
	if r.Jitter > 0 {
		h := fnv.New64a()
		h.Write([]byte(id))
		h.Write([]byte{0})
		h.Write([]byte(path))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(next)))
		// FNV-1a's high bits barely move with the last bytes written
		// (the attempt, the end of an ID): mix all 64 bits into each
		// (splitmix64's finaliser), so every job and attempt draws its
		// own factor.
		x := h.Sum64()
		x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
		x = (x ^ x>>27) * 0x94d049bb133111eb
		x ^= x >> 31
		u := float64(x>>11) / (1 << 53) // uniform in [0, 1)
		d *= 1 + r.Jitter*(2*u-1)
	}
	if d > math.MaxInt64/2 {
		d = math.MaxInt64 / 2
	}
	return time.Duration(d)
}

// timer returns the pending timer of the given kind for node id.
func (e *engine) timer(id int32, kind uint8) (pending, bool) {
	i, ok := findTimer(e.j.timers, id, kind)
	if !ok {
		return pending{}, false
	}
	return e.j.timers[i], true
}

// findTimer returns where the timer (id, kind) is, or would go, in ts.
func findTimer(ts []pending, id int32, kind uint8) (int, bool) {
	return slices.BinarySearchFunc(ts, pending{node: id, kind: kind}, comparePending)
}

// comparePending orders timers by node, in tree order, then kind.
func comparePending(a, b pending) int {
	if c := cmp.Compare(a.node, b.node); c != 0 {
		return c
	}
	return cmp.Compare(a.kind, b.kind)
}

// ownTimers makes the job's timer table this edit's own copy.
func (e *engine) ownTimers() {
	if !e.ownTime {
		e.j.timers = slices.Clone(e.j.timers)
		e.ownTime = true
	}
}

// addTimer arms p: it joins the job's table and the transition's timers.
func (e *engine) addTimer(p pending) {
	e.ownTimers()
	i, ok := findTimer(e.j.timers, p.node, p.kind)
	if ok {
		e.j.timers[i] = p
	} else {
		e.j.timers = slices.Insert(e.j.timers, i, p)
	}
	e.armed = append(e.armed, p)
}

// removeTimer withdraws the timer (id, kind), if pending.
func (e *engine) removeTimer(id int32, kind uint8) {
	if _, ok := findTimer(e.j.timers, id, kind); !ok {
		return
	}
	e.ownTimers()
	i, _ := findTimer(e.j.timers, id, kind)
	e.j.timers = slices.Delete(e.j.timers, i, i+1)
}

// pendingTimer returns the pending timer of the given kind for node id.
func (j *Job) pendingTimer(id int32, kind uint8) (pending, bool) {
	i, ok := findTimer(j.timers, id, kind)
	if !ok {
		return pending{}, false
	}
	return j.timers[i], true
}

// Cancel cancels the job j with a reason (which must not be empty): nothing
// new starts except finally blocks of tries already entered, the actions in
// flight are told to stop (Transition.Stops), and the job ends
// StatusCancelled once its finally blocks have settled; if nothing is left
// to settle, at once. Cancelling an ended job, or a cancelled one, changes
// nothing: the first reason stays. Cancel is pure: it is Restart with the
// cancel as a result (so a store's journal holds it, and Replay replays it).
func Cancel(j Job, reason string) (Transition, error) {
	if reason == "" {
		return Transition{}, fmt.Errorf("job %s: cancel without a reason", j.id)
	}
	return Restart(j, []Result{CancelResult(j.id, reason)})
}

// CancelResult is the result by which Cancel cancels job id: a runner that
// receives a cancel applies it like any result.
func CancelResult(id ID, reason string) Result {
	return Result{JobID: id, ActionID: cancelID, Error: reason}
}
