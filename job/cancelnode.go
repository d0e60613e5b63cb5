package job

import (
	"fmt"
	"slices"
	"strings"
)

// CancelNode stops the running node called name in j as its deadline
// would (see the package doc, "Time"): nothing new starts under it, its
// actions in flight are listed in Transition.Stops, its waits and sleeps
// are withdrawn, finally blocks already entered run in full; once
// everything under it has settled it fails with kind cancelled
// (KindCancelled) and the reason, which an enclosing try may rescue. A
// node that is not running (idle, settled, or stopped already) is left as
// it is and the cancel ignored. The reason must not be empty. CancelNode
// is pure: it is Restart with CancelNodeResult.
func CancelNode(j Job, name, reason string) (Transition, error) {
	if reason == "" {
		return Transition{}, fmt.Errorf("job %s: cancel of node %q without a reason", j.id, name)
	}
	return Restart(j, []Result{CancelNodeResult(j.id, name, reason)})
}

// cancelNodePrefix starts the ActionID of a node's cancel:
// "@cancel/NAME".
const cancelNodePrefix = "@cancel/"

// CancelNodeResult is the result by which CancelNode cancels the node
// called name in job id: its ActionID is "@cancel/NAME", its Error the
// reason. A runner applies it like any result; it applies with the
// batch's timer firings, in tree order.
func CancelNodeResult(id ID, name, reason string) Result {
	return Result{JobID: id, ActionID: cancelNodePrefix + name, Error: reason}
}

// nodeCancel records a node stopped by CancelNode, and why.
type nodeCancel struct {
	node   int32
	reason string
}

// cancelledNode returns the reason node id was cancelled with by
// CancelNode, and whether it was.
func (j *Job) cancelledNode(id int32) (string, bool) {
	for _, c := range j.cancels {
		if c.node == id {
			return c.reason, true
		}
	}
	return "", false
}

// applyCancelNode applies the cancel r of the node called name, with the
// batch's firings, and reports why it was ignored (0: applied).
func (e *engine) applyCancelNode(name string, r *Result) (IgnoreReason, string) {
	id, ok := e.j.t.names[name]
	switch {
	case e.j.Done():
		return IgnoredJobDone, ""
	case !ok:
		return IgnoredUnknown, "no node is called " + name
	case r.Error == "":
		return IgnoredUnknown, "a node's cancel without a reason"
	case e.get(id).status != StatusRunning || e.get(id).flags&flagExpired != 0:
		return IgnoredDuplicate, "node " + name + " is " + e.get(id).status.String() + ", or stopped already"
	}
	e.tick(r.At)
	e.j.cancels = append(slices.Clip(e.j.cancels), nodeCancel{node: id, reason: r.Error})
	e.expire(id)
	return 0, ""
}

// appendNodeCancels appends the nodes CancelNode stopped to a job's
// encoding: ,"cancelled_nodes":[[NODE,REASON],...].
func appendNodeCancels(b []byte, cs []nodeCancel) []byte {
	b = append(b, `,"cancelled_nodes":[`...)
	for i, c := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = fmt.Appendf(b, "%d,", c.node)
		b = appendString(b, c.reason)
		b = append(b, ']')
	}
	return append(b, ']')
}

// checkNodeCancels checks the nodes CancelNode stopped: each names a node
// once, with a reason, and is expired.
func (j Job) checkNodeCancels() error {
	seen := map[int32]bool{}
	for _, c := range j.cancels {
		if c.node < 0 || int(c.node) >= len(j.t.nodes) || seen[c.node] || c.reason == "" || j.st.get(c.node).flags&flagExpired == 0 {
			return fmt.Errorf("node cancel %d %q", c.node, c.reason)
		}
		seen[c.node] = true
	}
	return nil
}

// splitCancelNode returns the name a node's cancel names, and whether id
// is one.
func splitCancelNode(id string) (string, bool) {
	return strings.CutPrefix(id, cancelNodePrefix)
}
