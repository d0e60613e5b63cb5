package job

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/batonwf/baton/ast"
)

// ID names a job. It is 1 to MaxIDLen bytes of printable UTF-8 without
// spaces, '/' or the characters U+FFF0 to U+FFFF, and neither "." nor
// "..", so every runner can use it as it is in znode names (ZooKeeper
// refuses those), Kafka keys and file names.
type ID string

// MaxIDLen is the longest job ID accepted, in bytes.
const MaxIDLen = 200

// Check returns what is wrong with id, or nil.
func (id ID) Check() error {
	s := string(id)
	switch {
	case s == "":
		return fmt.Errorf("job: empty job ID")
	case len(s) > MaxIDLen:
		return fmt.Errorf("job: job ID is %d bytes long (at most %d)", len(s), MaxIDLen)
	case !utf8.ValidString(s):
		return fmt.Errorf("job: job ID %q is not valid UTF-8", s)
	case s == "." || s == "..":
		return fmt.Errorf("job: job ID %q is not allowed (a relative path in ZooKeeper and file systems)", s)
	}
	for i, r := range s {
		if r == '/' || unicode.IsSpace(r) || !unicode.IsPrint(r) || r >= 0xFFF0 && r <= 0xFFFF {
			return fmt.Errorf("job: job ID %q has %q at byte %d (no spaces, '/' or control characters)", s, r, i)
		}
	}
	return nil
}

// Status is the state of a node or of a whole job.
type Status uint8

// Node and job states. A job is only ever Running, Succeeded, Failed or,
// once cancelled (Cancel), Cancelled.
const (
	StatusIdle      Status = iota // not started
	StatusRunning                 // started, not settled
	StatusSucceeded               // settled: done
	StatusFailed                  // settled: failed
	StatusCancelled               // settled: stopped by a frozen par or dag, a deadline above it, or a cancel
	// StatusSkipped: settled, never run: a case a choice did not select,
	// a dag child whose guard was false, or a node under one. It is done
	// for the node around it as a success is, its output is null, and it
	// is never sure to have succeeded for inputs.
	StatusSkipped
)

var statusNames = [...]string{"idle", "running", "succeeded", "failed", "cancelled", "skipped"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// ParseStatus returns the Status whose String is s: "idle", "running",
// "succeeded", "failed", "cancelled" or "skipped". Any other string is an error
// naming it.
func ParseStatus(s string) (Status, error) {
	for i, n := range statusNames {
		if n == s {
			return Status(i), nil
		}
	}
	return 0, fmt.Errorf("job: unknown status %q (want one of %s)", s, strings.Join(statusNames[:], ", "))
}

// Settled reports whether s is a final state.
func (s Status) Settled() bool { return s >= StatusSucceeded && s <= StatusSkipped }

// Job is one run of a workflow: the compiled tree and the state of every
// node. A Job is an immutable value: Restart returns a new Job and never
// changes the one it is given, so a Job may be read from any number of
// goroutines. Versions of a job share unchanged state, so keeping old
// versions is cheap.
//
// The zero Job is not a job; New and Decode make Jobs.
type Job struct {
	id      ID
	version uint64
	t       *tree
	st      splitVec
	results *resChunk // the results applied so far, newest first
	running int       // leaves running (actions outstanding)
	settled int       // leaves settled
	inc     uint64    // incarnation (WithIncarnation)
	// outs holds the outputs of the named leaves that succeeded, indexed
	// by tnode.out (nil until one did). Copied on write: versions share it.
	outs [][]byte
	// timers are the timers the job waits for, sorted by node then kind.
	// Copied on write.
	timers []pending
	clock  int64  // Unix nanoseconds: the latest time applied (Clock)
	cancel string // the reason the job was cancelled with; "" if it was not
	// cancelAt is when the cancel was made (its result's At), Unix
	// nanoseconds; 0 when the cancel carried no time, or there was none.
	cancelAt int64
	// ended is the reason of the end node that stopped the job ("" if
	// none did): like a cancel, the root is expired, but the job ends
	// succeeded.
	ended string
	// sig is what the job knows of signals (nil: none sent, no wait
	// begun). Copied on write.
	sig *sigState
	// cancels are the nodes CancelNode stopped, in the order it did;
	// nil for none. Appended to a clipped copy: versions share it.
	cancels []nodeCancel
	// grown is the log of the changes of the tree by maps and loops,
	// newest first (see maploop.go); nil for none.
	grown *growth
}

// ID returns the job's ID.
func (j Job) ID() ID { return j.id }

// Version counts the state changes of the job: 1 after New, one more for
// each Restart that applied at least one result. Stores use it for
// optimistic concurrency.
func (j Job) Version() uint64 { return j.version }

// Workflow returns the job's tree. The caller must not modify it.
func (j Job) Workflow() ast.Node {
	if j.t == nil {
		return ast.Node{}
	}
	return j.t.root
}

// Status returns StatusRunning until the root settles, then StatusSucceeded,
// StatusFailed, or StatusCancelled for a job cancelled (Cancel) before it
// ended.
func (j Job) Status() Status {
	if j.t == nil {
		return StatusIdle
	}
	return j.st.get(0).status
}

// Cancelled returns the reason the job was cancelled with, and whether it
// was. A cancelled job may still be running its finally blocks; it ends
// with StatusCancelled.
func (j Job) Cancelled() (reason string, ok bool) { return j.cancel, j.cancel != "" }

// CancelTime returns when the job was cancelled: the time stamped on the
// cancel that applied (the At of its CancelResult, which runners set to
// their clock), and whether there is one. A job not cancelled, or
// cancelled by a result with no time (one stored before jobs kept it),
// has none.
func (j Job) CancelTime() (time.Time, bool) {
	if j.cancelAt == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, j.cancelAt).UTC(), true
}

// Ended returns the reason of the end node that stopped the job, and
// whether one did. Such a job may still be running its finally blocks;
// it ends with StatusSucceeded.
func (j Job) Ended() (reason string, ok bool) { return j.ended, j.ended != "" }

// Done reports whether the job has finished, well or badly.
func (j Job) Done() bool { return j.Status().Settled() }

// Progress returns how many actions have settled and how many the tree
// holds. A failure can leave actions that never run, so settled may stay
// below total in a finished job.
func (j Job) Progress() (settled, total int) {
	if j.t == nil {
		return 0, 0
	}
	return j.settled, j.t.leaves
}

// Running returns the number of actions dispatched and not yet settled.
func (j Job) Running() int { return j.running }

// Outstanding returns the actions dispatched and not yet settled, in tree
// order: what a runner dispatches again when it recovers the job after a
// crash (a stored job does not say which of its actions reached a worker).
// It visits only running subtrees, so it costs O(running work), not
// O(tree). The returned actions are the caller's.
func (j Job) Outstanding() []Action {
	if j.t == nil {
		return nil
	}
	return j.outstanding()
}

// Pending returns the action with ID id if it is one of Outstanding's,
// finding it from its path in O(depth) rather than listing them all: a
// runner holding the job checks one action of a large par with it.
func (j Job) Pending(id string) (Action, bool) {
	if j.t == nil {
		return Action{}, false
	}
	path, attempt, err := SplitActionID(id)
	if err != nil {
		return Action{}, false
	}
	n, _ := j.t.lookup(path)
	if n < 0 || j.t.nodes[n].kind != ast.KindAct {
		return Action{}, false
	}
	s := j.st.get(n)
	if s.status != StatusRunning || s.flags&flagWaiting != 0 || int(s.attempt) != attempt {
		return Action{}, false
	}
	// Outstanding visits running subtrees only.
	for p := j.t.nodes[n].parent; p >= 0; p = j.t.nodes[p].parent {
		if j.st.get(p).status != StatusRunning {
			return Action{}, false
		}
	}
	return actionOf(&j, n, attempt), true
}

// Incarnation returns the number given to New with WithIncarnation, which
// tells this job apart from others made under the same ID.
func (j Job) Incarnation() uint64 { return j.inc }

// Output returns the output of the leaf called name (ast.Node.Named), and
// true once that leaf has succeeded. It returns false for an unknown name,
// a name of an inner node (only leaves have outputs), and a leaf that has
// not succeeded. The bytes are the job's: do not modify them.
func (j Job) Output(name string) (json.RawMessage, bool) {
	if j.t == nil {
		return nil, false
	}
	id, ok := j.t.names[name]
	if !ok || j.t.nodes[id].out < 0 || j.st.get(id).status != StatusSucceeded {
		return nil, false
	}
	return j.outputOf(id), true
}

// outputOf returns the output of the named leaf id, nil if it has none yet.
func (j *Job) outputOf(id int32) []byte {
	if o := j.t.nodes[id].out; o >= 0 && int(o) < len(j.outs) {
		return j.outs[o]
	}
	return nil
}

// OutputAs decodes the JSON output of the leaf called name into a T. It
// fails, naming the leaf, when the leaf has not succeeded (see Output) or
// its output does not decode into a T.
func OutputAs[T any](j Job, name string) (T, error) {
	var v T
	out, ok := j.Output(name)
	if !ok {
		return v, fmt.Errorf("job %s: no output named %q (no such leaf, or it has not succeeded)", j.id, name)
	}
	if len(out) == 0 {
		return v, fmt.Errorf("job %s: the leaf %q succeeded with no output", j.id, name)
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return v, fmt.Errorf("job %s: output of %q: %v", j.id, name, err)
	}
	return v, nil
}

// nstate flags.
const (
	// flagWaiting marks a running leaf whose last attempt failed and that
	// waits for its retry timer: no action of it is outstanding.
	flagWaiting = 1 << iota
	// flagExpired marks a node whose deadline ran out, or the root of a
	// cancelled job: nothing new starts under it (finally blocks of tries
	// already entered excepted), and it fails (the root of a cancelled job:
	// ends cancelled) once what still runs under it has settled.
	flagExpired
	// flagStopped marks a leaf whose own deadline ran out while its
	// attempt ran: the attempt was stopped (Transition.Stops), and the
	// leaf failed by its deadline. It tells a late result of that attempt
	// (ignored as stopped) from a repeat of an attempt whose result
	// applied before the leaf gave up its retries (a duplicate). Other
	// stopped leaves are cancelled, which says it already.
	flagStopped
	// flagNotArray marks a multi choice that failed as it started because
	// the output it read is not an array (kind not_an_array; without the
	// flag, a choice that failed as it started found no case: no_case).
	flagNotArray
)

// Failure describes why a node, or a job, failed.
type Failure struct {
	Path    string // path of the failed action that caused it ("" is the root)
	Action  string // its action name
	Message string // its error message
	Kind    string `json:",omitempty"` // its kind (Result.Kind), "" for a plain failure
	Others  int    // further failures counted by the parallel nodes on the way
}

// maxFailureText bounds the message in a Failure's String: a failure is a
// one-line summary, whatever its action returned.
const maxFailureText = 200

// String returns the failure on one line, its message clipped to 200
// bytes: "par[1] (fail): boom (and 2 more failures)", or, for a node whose
// deadline ran out, "seq[0]: deadline of 5s exceeded".
func (f Failure) String() string {
	action := ""
	if f.Action != "" {
		action = " (" + f.Action + ")"
	}
	s := fmt.Sprintf("%s%s: %s", ast.ShowPath(f.Path), action, clip(f.Message, maxFailureText))
	if f.Others > 0 {
		s += fmt.Sprintf(" (and %d more failure", f.Others)
		if f.Others > 1 {
			s += "s"
		}
		s += ")"
	}
	return s
}

// Failure returns why the job failed, and false if it has not failed. It
// finds the failed action's message among the results applied so far, so
// it costs O(results); Walk and Describe look messages up once for the
// whole tree.
func (j Job) Failure() (Failure, bool) {
	if j.Status() != StatusFailed {
		return Failure{}, false
	}
	return j.failure(0, nil), true
}

// failure describes the failure of node id. It finds the message with
// resOf if given, else by walking the results, O(results).
func (j Job) failure(id int32, resOf func(int32) *result) Failure {
	s := j.st.get(id)
	f := Failure{Others: int(s.others)}
	if s.cause > 0 {
		c := s.cause - 1
		f.Path = j.t.path(c)
		if reason, ok := j.cancelledNode(c); ok {
			f.Kind, f.Message = KindCancelled, "cancelled: "+reason
			return f
		}
		if cs := j.st.get(c); cs.flags&flagExpired != 0 {
			// A deadline: the node that ran out, no action.
			f.Kind = KindDeadline
			f.Message = "deadline of " + j.t.nodes[c].deadline.String() + " exceeded"
			return f
		}
		if j.t.nodes[c].kind == ast.KindChoice {
			// A choice that selected nothing: no action.
			f.Kind, f.Message = j.choiceFailure(c)
		} else if k := j.t.nodes[c].kind; k == ast.KindMap || k == ast.KindLoop {
			f.Kind, f.Message = j.growingFailure(c)
		} else if isWaitOrSleep(j.t.nodes[c].kind) {
			f.Kind, f.Message = j.waitFailure(c)
		} else {
			f.Action = j.t.nodes[c].act.Action
			var res *result
			if resOf != nil {
				res = resOf(c)
			} else {
				res = j.resultOf(c)
			}
			if res != nil {
				f.Message, f.Kind = res.err, res.kind
			}
		}
		if j.t.raced {
			if r := j.failedRaceOn(c, id); r >= 0 {
				f.Message, f.Kind = j.raceFailure(r, resOf)
			}
		}
	}
	return f
}

// failedRaceOn returns the outermost race on the way from the failed
// action c up to node id (id included) that failed because every child
// did (not by its own deadline), or -1.
func (j Job) failedRaceOn(c, id int32) int32 {
	r := int32(-1)
	for n := c; n >= 0; n = j.t.nodes[n].parent {
		if j.t.nodes[n].kind == ast.KindRace {
			if s := j.st.get(n); s.status == StatusFailed && s.flags&flagExpired == 0 {
				r = n
			}
		}
		if n == id {
			break
		}
	}
	return r
}

// maxRaceChildText bounds each child's message in a race's failure.
const maxRaceChildText = 80

// raceFailure returns the message and kind of the race r, which failed
// because every child did: each child's failure in tree order, clipped
// ("every child failed: race[0] (fetch): down; race[1]: stopped"), and
// the kind they all share, if they share one.
func (j Job) raceFailure(r int32, resOf func(int32) *result) (msg, kind string) {
	var b strings.Builder
	if need := j.t.nodes[r].needN(); need > 1 {
		fmt.Fprintf(&b, "fewer than %d children succeeded: ", need)
	} else {
		b.WriteString("every child failed: ")
	}
	shared, first := "", true
	for i, k := range j.t.nodes[r].kids {
		if i > 0 {
			b.WriteString("; ")
		}
		if j.st.get(k).status != StatusFailed {
			// Stopped by a freeze, a deadline or a cancel around the race.
			b.WriteString(ast.ShowPath(j.t.path(k)) + ": " + j.st.get(k).status.String())
			shared, first = "", false
			continue
		}
		sub := j.failure(k, resOf)
		b.WriteString(ast.ShowPath(sub.Path))
		if sub.Action != "" {
			b.WriteString(" (" + sub.Action + ")")
		}
		b.WriteString(": " + clip(sub.Message, maxRaceChildText))
		if first {
			shared = sub.Kind
		} else if sub.Kind != shared {
			shared = ""
		}
		first = false
	}
	return b.String(), shared
}

// NodeInfo is the state of one node, as given to Walk.
type NodeInfo struct {
	Path    string // "" for the root
	Name    string // the node's name (ast.Node.Named), or ""
	Depth   int    // 0 for the root
	Kind    ast.Kind
	Action  string // for actions
	Payload []byte // for actions; do not modify
	Status  Status
	Attempt int // for actions: dispatches so far
	// Retry is, for a leaf whose last attempt failed and that waits to
	// run again, when its next attempt is due; the zero time otherwise.
	Retry   time.Time
	Output  []byte // for settled actions; do not modify
	Error   string // for failed actions
	Failure *Failure
	// Index is the node's position in pre-order, stable for a workflow.
	Index int
	// Winner is, for a race that a child won, the path of that child;
	// "" otherwise.
	Winner string
	// Iteration is, for a loop, the iteration that runs or ran last
	// (from 0; its body's path ends loop[Iteration]). Copies is, for a
	// map that started, its number of copies (at map[0] to
	// map[Copies-1]). Both are 0 for other nodes.
	Iteration, Copies int
}

// Walk calls f for every node in pre-order (a node before its children, a
// try's body before its rescue and finally) until f returns false.
func (j Job) Walk(f func(NodeInfo) bool) {
	if j.t == nil {
		return
	}
	byRes := j.resultsByNode()
	j.walk(0, 0, "", f, func(id int32) *result { return byRes[id] })
}

func (j Job) walk(id int32, depth int, path string, f func(NodeInfo) bool, resOf func(int32) *result) bool {
	if !f(j.nodeInfo(id, depth, path, resOf)) {
		return false
	}
	tn := &j.t.nodes[id]
	for i, k := range tn.kids {
		if k < 0 {
			continue
		}
		if tn.kind == ast.KindLoop {
			i = int(j.t.iters[tn.loopIx])
		}
		p := ast.ChildPath(path, tn.kind, i)
		if !j.walk(k, depth+1, p, f, resOf) {
			return false
		}
	}
	return true
}

// nodeInfo returns the state of node id, which is at depth and path.
// resOf returns the newest result of an action, nil if it has none; it
// must know at least those of id and, if id failed, of the action that
// caused it.
func (j *Job) nodeInfo(id int32, depth int, path string, resOf func(int32) *result) NodeInfo {
	tn := &j.t.nodes[id]
	s := j.st.get(id)
	ni := NodeInfo{Path: path, Depth: depth, Kind: tn.kind, Status: s.status, Index: int(id), Name: tn.name}
	if tn.act != nil {
		ni.Action, ni.Payload, ni.Attempt = tn.act.Action, tn.act.Payload, int(s.attempt)
		if res := resOf(id); res != nil && (s.status.Settled() || s.flags&flagWaiting != 0) {
			ni.Output, ni.Error = res.output, res.err
		}
		if p, ok := j.pendingTimer(id, timerRetry); ok {
			ni.Retry = time.Unix(0, p.due).UTC()
		}
	}
	if tn.kind == ast.KindWait && s.status == StatusSucceeded {
		if res := resOf(id); res != nil {
			ni.Output = res.output
		}
	}
	switch tn.kind {
	case ast.KindLoop:
		ni.Iteration = int(j.t.iters[tn.loopIx])
	case ast.KindMap:
		ni.Copies = len(tn.kids)
	}
	if tn.kind == ast.KindRace && s.pos > 0 {
		ni.Winner = ast.ChildPath(path, ast.KindRace, int(s.pos-1))
	}
	if (tn.kind == ast.KindRace || tn.kind == ast.KindMap || tn.kind == ast.KindLoop) && tn.out >= 0 && s.status == StatusSucceeded {
		ni.Output = j.outputOf(id)
	}
	if s.status == StatusFailed {
		fl := j.failure(id, resOf)
		ni.Failure = &fl
	}
	return ni
}

// String returns a one-line summary: ID, version, status.
func (j Job) String() string {
	if j.t == nil {
		return "job <zero>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "job %s v%d %s", j.id, j.version, j.Status())
	if f, ok := j.Failure(); ok {
		fmt.Fprintf(&b, ": %s", f)
	} else if !j.Done() {
		fmt.Fprintf(&b, ", %d outstanding", j.running)
	}
	return b.String()
}

// nstate is the state of one node. Which fields are used depends on the
// node's kind; unused fields stay zero so encodings are canonical. It holds
// no pointers (results live in Job.results), so the trie's leaves are
// copied without write barriers and never scanned by the garbage collector.
type nstate struct {
	status  Status
	out     Status // try: the outcome so far; par: StatusCancelled once a child was cancelled
	flags   uint8  // act: flagWaiting
	attempt uint32 // act: dispatches so far
	pos     int32  // seq: index of the child running; try: the part running
	done    int32  // par: children settled
	nfail   int32  // par: children failed
	cause   int32  // failed nodes: 1 + index of the failed action that caused it; 0 otherwise
	others  int32  // failed nodes: further failures counted on the way
}
