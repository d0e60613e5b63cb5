package ast

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Limits of maps and loops.
const (
	// MaxCopies is the most elements a map's array may have: a map over a
	// longer one fails as it starts, with kind "map_too_large".
	MaxCopies = 10000
	// MaxIterations is the largest Max of a loop.
	MaxIterations = 10000
)

// The inputs a leaf inside a map lists to read its copy's element (as
// compact JSON) and index (a number). No node may be named so.
const (
	InputItem  = "item"
	InputIndex = "index"
)

// reserved reports whether name is one of the map's reserved inputs.
func reserved(name string) bool { return name == InputItem || name == InputIndex }

// Map returns a map over the output of the leaf named over (sure to have
// succeeded before the map starts), which must be a JSON array of at most
// MaxCopies elements: the map runs one copy of do per element, at paths
// "map[0]" to "map[n-1]" below the map, together as a par (WithLimit
// bounds how many run at once; WithNeed makes it succeed once that many
// copies have). A leaf inside a copy reads the element and its index by
// listing the inputs "item" and "index". Its output is the array of the
// copies' outputs when do is a leaf, else null. An output that is not an
// array fails the map with kind "not_an_array"; an empty one makes it
// succeed as it starts. Workflow format version 3.
func Map(over string, do Node) Node {
	return Node{Kind: KindMap, Over: over, Children: []Node{do}}
}

// Loop returns a loop running do again and again (iteration i at path
// "loop[i]" below the loop) until, once an iteration has succeeded, the
// output of the leaf named output inside do equals equals (EqualJSON);
// after max iterations (1 to MaxIterations) without that, the loop fails
// with kind "loop_limit". An iteration that fails fails the loop. Its
// output is the last iteration's when do is a leaf, else null. Workflow
// format version 3.
func Loop(do Node, output string, equals any, max int) Node {
	v, err := jsonValue(equals)
	return Node{Kind: KindLoop, Children: []Node{do}, Until: &Guard{Output: output, Equals: v}, Max: max, err: err}
}

// Elements returns the elements of the array out (compact JSON, in
// order) that a map over it runs a copy for, or the kind of the map's
// failure: "not_an_array" (null, no output, or anything but a JSON
// array) or "map_too_large" (more than MaxCopies elements).
func Elements(out []byte) (elems []json.RawMessage, failure string) {
	var raw []json.RawMessage
	if len(out) == 0 || json.Unmarshal(out, &raw) != nil || raw == nil {
		return nil, "not_an_array"
	}
	if len(raw) > MaxCopies {
		return nil, "map_too_large"
	}
	for i := range raw {
		if bytes.ContainsAny(raw[i], " \t\r\n") {
			raw[i] = compactJSON(raw[i]) // else compact already
		}
	}
	return raw, ""
}

// inMap reports whether node id is inside a map.
func (c *checker) inMap(id int32) bool {
	for x := c.parent(id); x >= 0; x = c.parent(x) {
		if c.nodes[x].n.Kind == KindMap {
			return true
		}
	}
	return false
}

// until checks the until of the loop id: it names a leaf inside the
// body, sure to have succeeded when the body has.
func (c *checker) until(id int32) {
	name := c.nodes[id].n.Until.Output
	t, ok := c.names[name]
	switch {
	case reserved(name):
		c.problem(id, "until %q: item and index are inputs of a leaf inside a map, not names of nodes", name)
		return
	case !ok:
		c.problem(id, "until %q: no node has this name", name)
		return
	case c.nodes[t].n.Kind != KindAct:
		c.problem(id, "until %q (%s) is a %s, not a leaf (only a leaf has an output)", name, ShowPath(c.path(t)), c.nodes[t].n.Kind)
		return
	}
	body := t
	for body >= 0 && c.parent(body) != id {
		body = c.parent(body)
	}
	if body < 0 {
		c.problem(id, "until %q (%s) is not inside this loop's body (it is read in the iteration just finished)", name, ShowPath(c.path(t)))
		return
	}
	if why := c.notImplied(t, body); why != "" {
		c.problem(id, "until %q (%s) %s: not sure to have succeeded when an iteration has", name, ShowPath(c.path(t)), why)
	}
}

// mapLoop checks, node by node, the fields of the map or loop n.
func (v *validator) mapLoop(n *Node, path *pathRef) {
	v.named = true
	if len(n.Children) != 1 {
		v.add(path, "%s has %d nodes to run (want one: its %s)", n.Kind, len(n.Children), map[Kind]string{KindMap: "template", KindLoop: "body"}[n.Kind])
	}
	if n.Action != "" || len(n.Payload) > 0 || n.Body != nil || n.Rescue != nil || n.Finally != nil {
		v.add(path, "%s node has fields of another kind (action, payload or try parts)", n.Kind)
	}
	if n.Kind == KindMap {
		if n.Over == "" {
			v.add(path, `map has no over (the name of the leaf whose output, an array, it maps)`)
		} else if msg := checkName(n.Over); msg != "" {
			v.add(path, "over: %s", msg)
		}
		return
	}
	switch {
	case n.Until == nil:
		v.add(path, "loop has no until (the leaf of its body and the value that end it)")
	case n.Until.Output == "":
		v.add(path, "until has no output (the name of the leaf it reads)")
	case checkName(n.Until.Output) != "":
		v.add(path, "until: output %s", checkName(n.Until.Output))
	}
	if n.Until != nil && !json.Valid(n.Until.Equals) {
		v.add(path, "until: equals is not valid JSON")
	}
	if n.Max < 1 || n.Max > MaxIterations {
		if n.Max > MaxIterations {
			v.add(path, "loop max %d is out of range (1 to %d)", n.Max, MaxIterations)
		} else {
			v.add(path, "loop max %d is out of range (1 to %d; a loop must have one)", n.Max, MaxIterations)
		}
	}
}

// writeMap writes {"map":{"over":NAME,"do":NODE,"limit":K,"need":N}
// without its closing brace.
func writeMap(b *bytes.Buffer, n *Node) {
	b.WriteString(`{"map":{"over":`)
	writeString(b, n.Over)
	b.WriteString(`,"do":`)
	if len(n.Children) > 0 {
		writeNode(b, &n.Children[0])
	}
	if n.Limit != 0 {
		b.WriteString(`,"limit":`)
		b.WriteString(strconv.Itoa(n.Limit))
	}
	if n.Need != 0 {
		b.WriteString(`,"need":`)
		b.WriteString(strconv.Itoa(n.Need))
	}
	b.WriteByte('}')
}

// writeLoop writes {"loop":{"do":NODE,"until":{"output":NAME,"equals":V},"max":N}
// without its closing brace.
func writeLoop(b *bytes.Buffer, n *Node) {
	b.WriteString(`{"loop":{"do":`)
	if len(n.Children) > 0 {
		writeNode(b, &n.Children[0])
	}
	if n.Until != nil {
		b.WriteString(`,"until":{"output":`)
		writeString(b, n.Until.Output)
		b.WriteString(`,"equals":`)
		if len(n.Until.Equals) == 0 {
			b.WriteString("null")
		} else {
			b.Write(n.Until.Equals)
		}
		b.WriteByte('}')
	}
	b.WriteString(`,"max":`)
	b.WriteString(strconv.Itoa(n.Max))
	b.WriteByte('}')
}

// decodeMap reads the value of a "map" key into n.
func decodeMap(raw json.RawMessage, n *Node, path string, depth int, d *decoder, add func(string, ...any)) {
	const shape = `{"over":"name","do":{...},"limit":K,"need":N}`
	fields, dups, ok := readObject(raw)
	if !ok {
		add(`"map" must be an object like %s, got %s`, shape, DescribeJSON(raw))
		n.err = errReported
		return
	}
	for _, k := range dups {
		add("%s in map (%s)", duplicate(k), onceOnly)
	}
	for _, k := range sortedKeys(fields) {
		if k != "over" && k != "do" && k != "limit" && k != "need" {
			add("unknown field %q in map (allowed: over, do, limit, need)", k)
		}
	}
	if over, ok := fields["over"]; !ok {
		add(`map has no "over" (the name of the leaf whose output, an array, it maps)`)
	} else if n.Over, ok = readString(over); !ok {
		add(`"over" must be a string (a leaf's name), got %s`, DescribeJSON(over))
	}
	if raw, ok := fields["limit"]; ok {
		n.Limit = decodeCount(raw, "limit", add)
	}
	if raw, ok := fields["need"]; ok {
		n.Need = decodeCount(raw, "need", add)
	}
	decodeOnly(fields["do"], "map", "the node each copy runs", n, path, depth, d, add)
}

// decodeLoop reads the value of a "loop" key into n.
func decodeLoop(raw json.RawMessage, n *Node, path string, depth int, d *decoder, add func(string, ...any)) {
	const shape = `{"do":{...},"until":{"output":"name","equals":VALUE},"max":N}`
	fields, dups, ok := readObject(raw)
	if !ok {
		add(`"loop" must be an object like %s, got %s`, shape, DescribeJSON(raw))
		n.err = errReported
		return
	}
	for _, k := range dups {
		add("%s in loop (%s)", duplicate(k), onceOnly)
	}
	for _, k := range sortedKeys(fields) {
		if k != "do" && k != "until" && k != "max" {
			add("unknown field %q in loop (allowed: do, until, max)", k)
		}
	}
	if u, ok := fields["until"]; !ok {
		add(`loop has no "until" (like {"output":"name","equals":VALUE})`)
	} else {
		// The guard's messages name "when", its key on a dag entry.
		n.Until = decodeGuard(u, func(format string, args ...any) {
			add(strings.NewReplacer(`"when"`, `"until"`, "in when", "in until").Replace(format), args...)
		})
	}
	// A missing or out-of-range max is left to Validate, which names
	// the range; only a max that is not a whole number is reported here.
	if m, ok := fields["max"]; ok {
		if f, ok := decodeNumber(m, "max", fmt.Sprintf("(1 to %d)", MaxIterations), add); ok {
			if f != float64(int64(f)) {
				add("max must be a whole number, got %s", showNumber(m))
				n.Max = 1 // reported: Validate need not report it again
			} else {
				n.Max = int(max(min(f, MaxIterations+1), -1))
			}
		} else {
			n.Max = 1
		}
	}
	decodeOnly(fields["do"], "loop", "the body each iteration runs", n, path, depth, d, add)
}

// decodeOnly reads the "do" of a map or loop (kind) as its one child.
func decodeOnly(do json.RawMessage, kind, what string, n *Node, path string, depth int, d *decoder, add func(string, ...any)) {
	if len(do) == 0 || string(do) == "null" {
		add(`%s has no "do" (%s)`, kind, what)
		n.err = errReported
		return
	}
	k := KindMap
	if kind == "loop" {
		k = KindLoop
	}
	n.Children = []Node{decodeNode(do, ChildPath(path, k, 0), depth+1, d)}
}
