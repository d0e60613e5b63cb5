package job

import (
	"slices"
	"time"

	"github.com/batonwf/baton/ast"
)

// Placement is an action's placement hint (ast.Affinity), resolved from
// the tree and the job ID: plain data for a runner that places work. The
// reducer gives it no meaning: hints never change what it decides, and
// runner/inmem ignores them.
type Placement struct {
	// Key is the resolved key: a global key as written; a job key
	// "ID/key:KEY", or, for a node's own pin ({"scope":"job"}),
	// "ID/path:PATH" (PATH "" for the root), ID being the job's.
	Key string
	// Strict is true for a pin, false for a soft key.
	Strict bool
	// Wait is how long the action may wait for a busy holder of a soft
	// key; 0 for the cluster's default.
	Wait time.Duration `json:",omitempty"`
	// Names are, for a pin, the sorted action names of the leaves under
	// every node of the workflow that names it: a worker must be able to
	// run them all to hold it. Nil for a soft key. Shared: do not modify.
	Names []string `json:",omitempty"`
}

// pinID names the pin of the affinity a on the node at path, before the
// job ID resolves it: what resolve appends to the job ID.
func pinID(a *ast.Affinity, path string) string {
	switch {
	case a.Scope == ast.ScopeJob && a.Key == "":
		return "path:" + path
	case a.Scope == ast.ScopeJob:
		return "key:" + a.Key
	}
	return a.Key
}

// linkPins records the action names under each pin of the tree.
func (t *tree) linkPins() {
	for i := range t.nodes {
		a := t.nodes[i].affinity
		if a == nil || !a.IsStrict() {
			continue
		}
		if t.pinNames == nil {
			t.pinNames = map[string][]string{}
		}
		id := pinID(a, t.path(int32(i)))
		names := t.pinNames[id]
		for k := int32(i); k < int32(len(t.nodes)) && (k == int32(i) || t.under(k, int32(i))); k++ {
			if tn := &t.nodes[k]; tn.kind == ast.KindAct && !slices.Contains(names, tn.act.Action) {
				names = append(names, tn.act.Action)
			}
		}
		slices.Sort(names)
		t.pinNames[id] = names
	}
}

// under reports whether node a lies in the subtree of node b.
func (t *tree) under(a, b int32) bool {
	for ; a >= 0; a = t.nodes[a].parent {
		if a == b {
			return true
		}
	}
	return false
}

// placement returns the placement hint of the leaf id: the nearest
// affinity above it, itself included, resolved; nil if none.
func (j *Job) placement(id int32) *Placement {
	for n := id; n >= 0; n = j.t.nodes[n].parent {
		a := j.t.nodes[n].affinity
		if a == nil {
			continue
		}
		p := &Placement{Key: a.Key, Strict: a.IsStrict(), Wait: a.Wait}
		pid := pinID(a, j.t.path(n))
		if a.Scope == ast.ScopeJob {
			p.Key = string(j.id) + "/" + pid
		}
		if p.Strict {
			p.Names = j.t.pinNames[pid]
		}
		return p
	}
	return nil
}

// Pins returns the resolved keys of the job's own pins (strict
// affinities of scope job), sorted, each once: what a runner that stored
// them releases when the job ends. Global strict keys are not listed:
// they outlive the job.
func Pins(j Job) []string {
	if j.t == nil {
		return nil
	}
	var keys []string
	for i := range j.t.nodes {
		a := j.t.nodes[i].affinity
		if a == nil || !a.IsStrict() || a.Scope != ast.ScopeJob {
			continue
		}
		k := string(j.id) + "/" + pinID(a, j.t.path(int32(i)))
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
