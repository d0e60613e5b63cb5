package job

import (
	"bytes"
	"cmp"
	"slices"
	"sort"

	"github.com/batonwf/baton/ast"
)

// Changed returns the nodes whose state differs between old and new, two
// versions of one job, as new's Walk gives them and in the same order
// (pre-order): exactly the nodes for which the NodeInfo of old's Walk and
// that of new's Walk differ. Either may be the older; a client holding
// old's nodes updates them to new's with the result. The returned slice
// is the caller's; its payloads and outputs are the job's (do not modify
// them).
//
// Versions of a job share the parts of their persistent tries that did
// not change, and Changed compares only the parts that are not shared
// (by pointer), so for new made from old by Restart (or by a chain of
// Restarts) it costs about O(nodes changed × depth): one result in a
// par of 100,000 actions costs about what it costs in a par of 10. The
// results of the nodes returned are found from the newest back, which is
// quick for those the steps between the two versions applied; a
// cancelled action that was in flight (it may hold the result of an
// earlier failed attempt) makes Changed read all of new's results, once.
// Versions that share nothing, such as two decoded separately, are
// compared node by node: O(tree). So are two versions either side of a
// loop's next iteration (whose trees differ in the iteration: the path
// of every node of the body changed) or of a map's start (whose trees
// differ in size): their Walks are compared place by place, and Changed
// returns new's node at every place where they differ, and every node
// past the end of old's Walk (for a map's start: the map, its copies,
// and every node after them in pre-order).
//
// If old is not a version of new's job (the zero Job, another ID,
// another incarnation, another workflow), Changed returns every node of
// new. If new is the zero Job, it returns nil.
func Changed(old, new Job) []NodeInfo {
	if new.t == nil {
		return nil
	}
	if !sameWorkflow(old, new) {
		if grownApart(old, new) {
			return walkDiff(old, new)
		}
		var all []NodeInfo
		new.Walk(func(n NodeInfo) bool {
			all = append(all, n)
			return true
		})
		return all
	}
	ids, _ := changedNodes(&old, &new)
	if len(ids) == 0 {
		return nil
	}
	resOf := new.resultsOf(ids)
	out := make([]NodeInfo, 0, len(ids))
	for _, id := range ids {
		depth := 0
		for p := new.t.nodes[id].parent; p >= 0; p = new.t.nodes[p].parent {
			depth++
		}
		out = append(out, new.nodeInfo(id, depth, new.t.path(id), resOf))
	}
	return out
}

// changedNodes returns, in pre-order, the nodes whose NodeInfo differs
// between old and new, two versions of one workflow, and how many pairs
// of trie nodes it compared to find them (see pvec.diff).
func changedNodes(old, new *Job) ([]int32, int) {
	var ids []int32
	t := new.t
	add := func(id int32) {
		if old.visible(id) != new.visible(id) {
			ids = append(ids, id)
		}
	}
	compared := old.st.main.diff(&new.st.main, func(slot int32) { add(t.nodeOfSlot(slot)) })
	main := len(ids)
	compared += old.st.wide.diff(&new.st.wide, func(slot int32) { add(t.wideIDs[slot]) })
	if t.rank != nil {
		// A map's copies come after every node: sort by place.
		slices.SortFunc(ids, func(a, b int32) int { return cmp.Compare(t.rank[a], t.rank[b]) })
	} else if len(ids) > main {
		// Each trie gives its nodes in pre-order; merge the two.
		slices.Sort(ids)
	}
	return ids, compared
}

// nodeOfSlot returns the node in slot of the main trie: the narrow nodes
// are in pre-order, with the wide ones (wideIDs, in pre-order) taken out.
func (t *tree) nodeOfSlot(slot int32) int32 {
	// wideIDs[k]-k narrow nodes come before the k-th wide node: the first
	// wide node with more before it than slot comes after the node.
	k := sort.Search(len(t.wideIDs), func(k int) bool { return t.wideIDs[k]-int32(k) > slot })
	return slot + int32(k)
}

// visibleState is what NodeInfo shows of a node's state. The fields of a
// NodeInfo that are not in it follow from it: an action's output and
// error are those of its newest result, which changes only when a result
// applies, which changes the action's status or attempt; a failure's
// text is fixed by its cause, once that has failed.
type visibleState struct {
	status        Status
	attempt       uint32 // actions
	waiting       bool   // actions
	retry         int64  // actions: the due time of the retry waited for
	cause, others int32  // failed nodes
	winner        int32  // races: the edge of the winner, plus 1
}

func (j *Job) visible(id int32) visibleState {
	s := j.st.get(id)
	v := visibleState{status: s.status}
	if j.t.nodes[id].kind == ast.KindAct {
		v.attempt, v.waiting = s.attempt, s.flags&flagWaiting != 0
		if p, ok := j.pendingTimer(id, timerRetry); ok {
			v.retry = p.due
		}
	}
	if s.status == StatusFailed {
		v.cause, v.others = s.cause, s.others
	}
	if j.t.nodes[id].kind == ast.KindRace {
		v.winner = int32(s.pos) // a race won goes on while its losers' finally blocks run
	}
	return v
}

// resultsOf returns a lookup of the newest results that nodeInfo reads
// for the nodes ids: those of the actions among them that show one (and
// of the waits that took a signal), and
// those of the actions that caused the failed ones (and, for a failure
// that a race's failure holds, those that caused its children's). It reads the results
// from the newest back and stops once it has found them all.
func (j *Job) resultsOf(ids []int32) func(int32) *result {
	want := map[int32]*result{}
	var causes func(id int32)
	causes = func(id int32) {
		s := j.st.get(id)
		c := s.cause - 1
		if s.status != StatusFailed || c < 0 {
			return
		}
		if j.t.nodes[c].kind == ast.KindAct {
			want[c] = nil
		}
		if !j.t.raced {
			return
		}
		if r := j.failedRaceOn(c, id); r >= 0 {
			// Its failure names each child's (raceFailure).
			for _, k := range j.t.nodes[r].kids {
				causes(k)
			}
		}
	}
	for _, id := range ids {
		s := j.st.get(id)
		switch k := j.t.nodes[id].kind; {
		case k == ast.KindAct && s.attempt > 0 && (s.status.Settled() || s.flags&flagWaiting != 0),
			k == ast.KindWait && s.status == StatusSucceeded: // the signal's payload
			want[id] = nil
		}
		causes(id)
	}
	missing := len(want)
	for c := j.results; c != nil && missing > 0; c = c.prev {
		for i := len(c.entries) - 1; i >= 0; i-- {
			e := &c.entries[i]
			if e.node < 0 {
				if r, ok := want[-e.node-1]; ok && r == nil {
					want[-e.node-1] = &tombstone
					missing--
				}
				continue
			}
			if r, ok := want[e.node]; ok && r == nil {
				want[e.node] = &e.res
				missing--
			}
		}
	}
	return func(id int32) *result {
		if r := want[id]; r != &tombstone {
			return r
		}
		return nil
	}
}

// grownApart reports whether old and new are versions of one job whose
// trees a map's start or a loop's iteration made differ: the same ID,
// incarnation and workflow as written.
func grownApart(old, new Job) bool {
	if old.t == nil || old.id != new.id || old.inc != new.inc || !old.t.grows || !new.t.grows {
		return false
	}
	return ast.Equal(old.t.root, new.t.root)
}

// walkDiff returns the nodes of new's Walk whose NodeInfo differs from
// the one at the same place in old's Walk (every node past the end of
// old's): O(tree).
func walkDiff(old, new Job) []NodeInfo {
	var was []NodeInfo
	old.Walk(func(n NodeInfo) bool {
		was = append(was, n)
		return true
	})
	var diff []NodeInfo
	i := 0
	new.Walk(func(n NodeInfo) bool {
		if i >= len(was) || !sameInfo(&was[i], &n) {
			diff = append(diff, n)
		}
		i++
		return true
	})
	return diff
}

// sameInfo reports whether a and b show the same (an empty output or
// payload is none).
func sameInfo(a, b *NodeInfo) bool {
	if a.Path != b.Path || a.Name != b.Name || a.Depth != b.Depth || a.Kind != b.Kind || a.Action != b.Action ||
		a.Status != b.Status || a.Attempt != b.Attempt || !a.Retry.Equal(b.Retry) || a.Error != b.Error ||
		a.Index != b.Index || a.Winner != b.Winner || a.Iteration != b.Iteration || a.Copies != b.Copies ||
		!bytes.Equal(a.Payload, b.Payload) || !bytes.Equal(a.Output, b.Output) {
		return false
	}
	if a.Failure == nil || b.Failure == nil {
		return a.Failure == b.Failure
	}
	return *a.Failure == *b.Failure
}

// sameWorkflow reports whether old and new are versions of one job: the
// same ID, incarnation and workflow (the same compiled tree, or, for
// versions decoded apart, trees of the same shape).
func sameWorkflow(old, new Job) bool {
	if old.t == nil || old.id != new.id || old.inc != new.inc {
		return false
	}
	a, b := old.t, new.t
	if a == b {
		return true
	}
	if len(a.nodes) != len(b.nodes) || a.narrow != b.narrow || a.wides != b.wides || !slices.Equal(a.iters, b.iters) {
		return false
	}
	for i := range a.nodes {
		x, y := &a.nodes[i], &b.nodes[i]
		if x.kind != y.kind || x.parent != y.parent || x.edge != y.edge || x.wide != y.wide || x.slot != y.slot {
			return false
		}
		if x.act != nil && x.act.Action != y.act.Action {
			return false
		}
	}
	return true
}
