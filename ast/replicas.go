package ast

import "strconv"

// Expand returns the tree rooted at n as the reducer runs it: every node
// with Replicas k becomes a race of k copies of itself. The race has the
// node's Name and Deadline (and, as a dag child, its After and its guard
// When), and keeps
// Replicas k to say it is made of copies; copy i is the node without
// them, Replicas 0. A name given inside the node is made unique per copy
// by appending "#i" (copy i): "got" in copy 1 is "got#1" ("got#1#0" in
// copy 0 of a node with replicas inside it), and an input naming it from
// inside the same copy names that copy's. '#' is in no valid name, so
// these never meet a name as written; the reducer strips the suffix from
// the input names it hands to handlers.
//
// A tree without replicas is returned as it is. The result shares
// payloads, retry policies and input lists that need no renaming with n;
// it is not for Validate (its names have '#'), and n must be valid.
func Expand(n Node) Node {
	if !HasReplicas(&n) {
		return n
	}
	return expand(n, "", nil)
}

// HasReplicas reports whether a node of the tree rooted at n has Replicas,
// that is whether Expand changes it. It allocates nothing.
func HasReplicas(n *Node) bool {
	if n.Replicas > 0 {
		return true
	}
	for i := range n.Children {
		if HasReplicas(&n.Children[i]) {
			return true
		}
	}
	for _, p := range [...]*Node{n.Body, n.Rescue, n.Finally} {
		if p != nil && HasReplicas(p) {
			return true
		}
	}
	return false
}

// expand expands n, inside copies whose suffix is suffix, renaming the
// names given inside them by ren (a name as written to its name).
func expand(n Node, suffix string, ren map[string]string) Node {
	if n.Replicas > 0 {
		var defined []string // the names given inside n
		Walk(n, func(path string, m *Node) bool {
			if path != "" && m.Name != "" {
				defined = append(defined, m.Name)
			}
			return true
		})
		race := Node{Kind: KindRace, Name: rename(n.Name, ren), After: n.After, Deadline: n.Deadline, Replicas: n.Replicas, When: renameGuard(n.When, ren)}
		race.Children = make([]Node, n.Replicas)
		for i := range race.Children {
			s := suffix + "#" + strconv.Itoa(i)
			inner := make(map[string]string, len(ren)+len(defined))
			for k, v := range ren {
				inner[k] = v
			}
			for _, k := range defined {
				inner[k] = k + s
			}
			c := n
			c.Name, c.After, c.Deadline, c.Replicas, c.When = "", nil, 0, 0, nil
			race.Children[i] = expand(c, s, inner)
		}
		return race
	}
	n.Name = rename(n.Name, ren)
	n.On = rename(n.On, ren)
	n.Over = rename(n.Over, ren)
	n.Until = renameGuard(n.Until, ren)
	n.When = renameGuard(n.When, ren)
	if len(n.Inputs) > 0 && len(ren) > 0 {
		ins := make([]string, len(n.Inputs))
		for k, in := range n.Inputs {
			ins[k] = rename(in, ren)
		}
		n.Inputs = ins
	}
	if len(n.Children) > 0 {
		kids := make([]Node, len(n.Children))
		for i := range n.Children {
			kids[i] = expand(n.Children[i], suffix, ren)
		}
		n.Children = kids
	}
	for _, p := range [...]**Node{&n.Body, &n.Rescue, &n.Finally} {
		if *p != nil {
			c := expand(**p, suffix, ren)
			*p = &c
		}
	}
	return n
}

// renameGuard returns g with its output renamed by ren (g itself when
// nothing changes).
func renameGuard(g *Guard, ren map[string]string) *Guard {
	if g == nil || len(ren) == 0 {
		return g
	}
	c := *g
	c.Output = rename(c.Output, ren)
	return &c
}

func rename(name string, ren map[string]string) string {
	if r, ok := ren[name]; ok {
		return r
	}
	return name
}

// WrittenName returns a name of a tree that Expand returned as it was
// written: without the suffix Expand gave it inside copies.
func WrittenName(name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] == '#' {
			return name[:i]
		}
	}
	return name
}
