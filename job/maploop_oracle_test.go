package job_test

// The oracle of oracle_test.go taught maps, loops, waits and sleeps,
// written from the team's note on the language's rules (maps 13-18,
// loops 19-21, signals, waits and sleeps 8-12) and sharing no code with
// the reducer. It grows the tree as it goes, naively:
//
//   - A map, when it begins, reads its over leaf (the one of the same
//     copy, else of the enclosing ones, else outside every map) and builds
//     one copy of its template per element, at "map[i]", each with its
//     own names and the element and index that item and index read. Not
//     an array: it fails once its round is over (not_an_array); more
//     than 10,000 elements: so too (map_too_large); empty: it succeeds
//     once its round is over. Its copies run as a par's children (a limit
//     bounds how many run; a failure freezes the others) or, with need N,
//     as a race's (won once N copies have succeeded, the rest stopped).
//   - A loop begins with iteration 0 at "loop[0]"; when iteration i has
//     succeeded and its until leaf (of that iteration) does not match,
//     iteration i+1 is built and starts at once, unless it is the max-th:
//     then the loop fails (loop_limit). A failed iteration fails it.
//   - A wait begins; it takes the oldest kept signal of its name once its
//     round is over (unless transient), or the first signal of its name
//     to come while it runs (of several waits, the one begun first). A
//     sleep begins with a timer due at the clock plus its duration; its
//     firing succeeds it. Under a freeze, or in a race's loser, a running
//     wait or sleep is withdrawn: it fails (withdrawn), after the other
//     failures of its step.

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// wantedGrowing is wanted for a map or a loop n: a map's copies as a
// par's children (frozen by a failed copy), or, with need, as a race's
// (frozen once won), at most limit of them running; a loop's last
// iteration, and, once it has succeeded without ending the loop, the
// next, built now.
func (n *oracleNode) wantedGrowing(frozen bool, ws *[]oracleWant, in func(k *oracleNode, frozen bool)) {
	if n.kind == ast.KindLoop {
		last := n.kids[len(n.kids)-1]
		if last.entered && !last.cancelled && last.status() == job.StatusSucceeded && !n.untilMatches(last) && len(n.kids) < n.choice.Max {
			last = n.o.iterate(n)
		}
		in(last, frozen)
		return
	}
	kf := frozen || n.winner != nil || n.anyFailed()
	running := 0
	for _, k := range n.kids {
		if k.entered && !k.status().Settled() {
			running++
		}
	}
	for _, k := range n.kids {
		switch {
		case !k.entered && n.choice.Limit > 0 && running >= n.choice.Limit:
			return // no more copies than the limit
		case !k.entered:
			running++
			in(k, kf)
		default:
			in(k, kf)
		}
	}
}

// anyFailed reports whether a child of n has failed.
func (n *oracleNode) anyFailed() bool {
	return slices.ContainsFunc(n.kids, func(k *oracleNode) bool { return k.status() == job.StatusFailed })
}

// mapNeedStatus is the status of the map n with need: a copy's failure
// freezes it as a par's does, and it fails once its running copies have
// settled; else it is won the moment need copies have succeeded (all of
// them when it has fewer), and succeeds once the copies it stopped have
// settled.
func (n *oracleNode) mapNeedStatus() job.Status {
	switch {
	case len(n.kids) == 0:
		return job.StatusSucceeded // over an empty array
	case n.winner != nil:
		for _, k := range n.kids {
			if !k.status().Settled() {
				return job.StatusRunning
			}
		}
		return job.StatusSucceeded
	case !n.anyFailed() && n.succeeded() >= n.need():
		return job.StatusRunning // won: about to be decided
	}
	return n.parStatus()
}

// expand builds the copies of the map n as it begins, or marks it to
// settle once its round is over.
func (o *oracle) expand(n *oracleNode) {
	src := n.scope.lookup(n.choice.Over)
	out := src.out.Output
	elems, ok := oracleElements(out)
	switch {
	case !ok && len(out) > 0 && oracleIsArray(out):
		n.failKind = "map_too_large"
		n.failMsg = fmt.Sprintf("the output of %s has more than %d elements", n.choice.Over, ast.MaxCopies)
	case !ok:
		n.failKind = job.KindNotAnArray
		shown := string(out)
		if len(out) == 0 {
			shown = "null"
		}
		n.failMsg = "the output of " + n.choice.Over + " is not an array: " + shown
	}
	if !ok || len(elems) == 0 {
		n.late = true
		return
	}
	for i, e := range elems {
		sc := &oracleScope{names: map[string]*oracleNode{}, parent: n.scope, copy: true, item: e, index: i}
		k := o.build(n.tmpl, propJoin(n.path, fmt.Sprintf("map[%d]", i)), sc)
		k.parent = n
		n.kids = append(n.kids, k)
	}
}

// oracleIsArray reports whether out is a JSON array, of any length.
func oracleIsArray(out []byte) bool {
	var raw []json.RawMessage
	return json.Unmarshal(out, &raw) == nil && raw != nil
}

// iterate builds the next iteration of the loop n and returns it.
func (o *oracle) iterate(n *oracleNode) *oracleNode {
	sc := &oracleScope{names: map[string]*oracleNode{}, parent: n.scope}
	k := o.build(n.tmpl, propJoin(n.path, fmt.Sprintf("loop[%d]", len(n.kids))), sc)
	k.parent = n
	n.kids = append(n.kids, k)
	return k
}

// markLoops gives the loops under n that ran max iterations without a
// match their failure, loop_limit.
func (o *oracle) markLoops(n *oracleNode) {
	for _, k := range n.children() {
		o.markLoops(k)
	}
	if n.kind != ast.KindLoop || !n.entered || n.cancelled || n.failKind != "" {
		return
	}
	last := n.kids[len(n.kids)-1]
	if len(n.kids) >= n.choice.Max && last.status() == job.StatusSucceeded && !n.untilMatches(last) {
		n.failKind = "loop_limit"
		n.failMsg = fmt.Sprintf("%d iterations, and the output of %s never equalled %s", n.choice.Max, n.choice.Until.Output, n.choice.Until.Equals)
		n.at = o.step
	}
}

// withdrawOne withdraws a running wait or sleep under n that a freeze
// stops (a par, dag, multi choice or map without need with a failed
// child above it, no finally block between them), and reports whether it
// found one.
func (o *oracle) withdrawOne(n *oracleNode) bool {
	var found *oracleNode
	var walk func(n *oracleNode, frozen bool)
	walk = func(n *oracleNode, frozen bool) {
		if found != nil || !n.entered || n.cancelled || n.skipped {
			return
		}
		if (n.kind == ast.KindWait || n.kind == ast.KindSleep) && !n.done {
			if frozen {
				found = n
			}
			return
		}
		kf := frozen
		switch n.kind {
		case ast.KindPar, ast.KindDag, ast.KindChoice:
			kf = kf || slices.ContainsFunc(n.kids, func(k *oracleNode) bool { return k.status() == job.StatusFailed })
		case ast.KindMap:
			kf = kf || n.anyFailed()
		}
		for _, k := range n.children() {
			if n.kind == ast.KindTry && k == n.finally {
				walk(k, false) // a finally block entered runs in full
				continue
			}
			walk(k, kf)
		}
	}
	walk(n, false)
	if found == nil {
		return false
	}
	found.withdraw()
	return true
}

// stale reports whether n is in an iteration of a loop that has moved on
// to another.
func (n *oracleNode) stale() bool {
	for c := n; c.parent != nil; c = c.parent {
		if p := c.parent; p.kind == ast.KindLoop && c != p.kids[len(p.kids)-1] {
			return true
		}
	}
	return false
}

// withdraw fails the running wait or sleep n: withdrawn, after the other
// failures of its step.
func (n *oracleNode) withdraw() {
	n.done, n.out, n.at, n.gaveUp = true, propOutcome{Fail: true}, n.o.step, true
	n.failKind = job.KindWithdrawn
	if n.kind == ast.KindWait {
		n.failMsg = "the wait for signal " + n.signal + " was withdrawn"
	} else {
		n.failMsg = "the sleep of " + n.sleep.String() + " was withdrawn"
	}
}

// output is the output of the map or loop n once it has succeeded: a
// map's, the array of its copies' outputs in index order (null for a
// copy that did not succeed), when its template is a leaf or a wait; a
// loop's, its last iteration's when its body is. Otherwise nothing.
func (n *oracleNode) output() []byte {
	if n.status() != job.StatusSucceeded || n.tmpl.Kind != ast.KindAct && n.tmpl.Kind != ast.KindWait {
		return nil
	}
	if n.kind == ast.KindLoop {
		return n.kids[len(n.kids)-1].out.Output
	}
	b := []byte{'['}
	for i, k := range n.kids {
		if i > 0 {
			b = append(b, ',')
		}
		if k.status() != job.StatusSucceeded || len(k.out.Output) == 0 || !json.Valid(k.out.Output) {
			b = append(b, "null"...)
			continue
		}
		b = append(b, k.out.Output...)
	}
	return append(b, ']')
}
