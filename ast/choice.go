package ast

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Case is one case of a choice: the values it matches. A case written
// {"when": V} matches V (Values holds V, Any is false); one written
// {"when": {"any": [V1, V2, ...]}} matches any of them (Any is true).
// Values are compact JSON, compared with the output by EqualJSON.
type Case struct {
	Values []json.RawMessage
	Any    bool
}

// Guard is the condition on a dag child ("when"): once the child is
// ready, it runs if the output of the leaf named Output equals Equals
// (EqualJSON), and is skipped otherwise.
type Guard struct {
	Output string
	Equals json.RawMessage
}

// ChoiceCase is a case given to Choice: When, WhenAny or Else.
type ChoiceCase struct {
	c      Case
	do     Node
	isElse bool
	err    error
}

// When returns the case of a choice that runs do when the output equals
// value. value is marshalled with encoding/json (json.RawMessage and
// []byte are taken as JSON text; nil is null).
func When(value any, do Node) ChoiceCase {
	v, err := jsonValue(value)
	return ChoiceCase{c: Case{Values: []json.RawMessage{v}}, do: do, err: err}
}

// WhenAny returns the case that runs do when the output equals any of
// values.
func WhenAny(values []any, do Node) ChoiceCase {
	cc := ChoiceCase{c: Case{Any: true, Values: make([]json.RawMessage, 0, len(values))}, do: do}
	for _, value := range values {
		v, err := jsonValue(value)
		if err != nil && cc.err == nil {
			cc.err = err
		}
		cc.c.Values = append(cc.c.Values, v)
	}
	return cc
}

// Else returns the else of a choice: it runs when no case matches. It
// comes last.
func Else(do Node) ChoiceCase { return ChoiceCase{do: do, isElse: true} }

// Choice returns a choice on the output of the leaf named on (sure to
// have succeeded before the choice starts): the first case in order whose
// value equals the output runs, the others and the else are skipped; no
// case matching, the else runs; no else, the choice fails with kind
// "no_case". AllMatching makes it run every matching case. A choice's
// output is null. Workflow format version 3.
func Choice(on string, cases ...ChoiceCase) Node {
	n := Node{Kind: KindChoice, On: on}
	hasElse := false
	for _, c := range cases {
		if c.err != nil && n.err == nil {
			n.err = c.err
		}
		if hasElse && n.err == nil {
			n.err = fmt.Errorf("choice has a case after its else (the else comes last)")
		}
		if c.isElse {
			hasElse = true
		} else {
			n.Cases = append(n.Cases, c.c)
		}
		n.Children = append(n.Children, c.do)
	}
	return n
}

// AllMatching returns the choice n made to run, together and as a par,
// every case matching any element of its output, which must then be an
// array (else the choice fails with kind "not_an_array").
func (n Node) AllMatching() Node {
	n.Multi = true
	return n
}

// End returns a node that ends the workflow when it starts: everything
// still running is stopped as a cancel stops it (finally blocks already
// entered run in full), and the job then ends succeeded. Workflow format
// version 3.
func End(reason string) Node { return Node{Kind: KindEnd, Reason: reason} }

// WithWhen returns the dag child n guarded: once ready, it runs only if
// the output of the leaf named output equals equals; otherwise it is
// skipped, which satisfies the After of its siblings as a success does.
func (n Node) WithWhen(output string, equals any) Node {
	v, err := jsonValue(equals)
	if err != nil && n.err == nil {
		n.err = err
	}
	n.When = &Guard{Output: output, Equals: v}
	return n
}

// WithNeed returns the race n that succeeds once k of its children have,
// or the map n that succeeds once k of its copies have (see Map).
func (n Node) WithNeed(k int) Node {
	n.Need = k
	return n
}

// WithLimit returns the par n running at most k children at once (or
// the map n running at most k copies); the others start in tree order
// as running ones settle. (A dag takes no
// limit yet.)
func (n Node) WithLimit(k int) Node {
	n.Limit = k
	return n
}

// jsonValue returns value as compact JSON; nil is null.
func jsonValue(value any) (json.RawMessage, error) {
	var raw []byte
	switch v := value.(type) {
	case nil:
		return json.RawMessage("null"), nil
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("value does not marshal to JSON: %w", err)
		}
		raw = b
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(json.RawMessage(nil), raw...), fmt.Errorf("value is not valid JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// HasElse reports whether the choice n has an else: Children[len(Cases)].
func (n *Node) HasElse() bool { return n.Kind == KindChoice && len(n.Children) == len(n.Cases)+1 }

// Choose returns which children of the choice n run for the output out of
// its On leaf (nil for null), as indexes into n.Children in order, or the
// kind of its failure: "no_case" (nothing matches and there is no else)
// or "not_an_array" (a multi choice whose output is not an array). An
// output that is not JSON matches nothing and is not an array.
func Choose(n *Node, out []byte) (run []int, failure string) {
	if len(out) == 0 {
		out = []byte("null")
	}
	if n.Multi {
		elems, ok := jsonArray(out)
		if !ok {
			return nil, "not_an_array"
		}
		for i := range n.Cases {
			if slices.ContainsFunc(elems, func(e any) bool { return n.Cases[i].matches(e) }) {
				run = append(run, i)
			}
		}
	} else if v, ok := decodeJSONValue(out); ok {
		for i := range n.Cases {
			if n.Cases[i].matches(v) {
				run = []int{i}
				break
			}
		}
	}
	if len(run) > 0 {
		return run, ""
	}
	if n.HasElse() {
		return []int{len(n.Cases)}, ""
	}
	return nil, "no_case"
}

// matches reports whether the decoded value v equals one of the case's.
func (c *Case) matches(v any) bool {
	for _, raw := range c.Values {
		if w, ok := decodeJSONValue(raw); ok && equalValue(v, w) {
			return true
		}
	}
	return false
}

// equalLang3 compares the fields of version 3.
func equalLang3(a, b *Node) bool {
	if a.Over != b.Over || a.Max != b.Max || (a.Until == nil) != (b.Until == nil) ||
		a.Until != nil && (a.Until.Output != b.Until.Output || !bytes.Equal(a.Until.Equals, b.Until.Equals)) {
		return false
	}
	if a.On != b.On || a.Multi != b.Multi || a.Need != b.Need || a.Limit != b.Limit || a.Reason != b.Reason ||
		a.Signal != b.Signal || a.Transient != b.Transient || a.Sleep != b.Sleep ||
		len(a.Cases) != len(b.Cases) || (a.When == nil) != (b.When == nil) {
		return false
	}
	if a.When != nil && (a.When.Output != b.When.Output || !bytes.Equal(a.When.Equals, b.When.Equals)) {
		return false
	}
	for i := range a.Cases {
		x, y := &a.Cases[i], &b.Cases[i]
		if x.Any != y.Any || !slices.EqualFunc(x.Values, y.Values, func(p, q json.RawMessage) bool { return bytes.Equal(p, q) }) {
			return false
		}
	}
	return true
}

// lang3 reports whether n uses a node or key of version 3.
func (n *Node) lang3() bool {
	return n.Kind == KindChoice || n.Kind == KindEnd || n.Kind == KindMap || n.Kind == KindLoop || n.Kind == KindWait || n.Kind == KindSleep || n.When != nil || n.Need != 0 || n.Limit != 0
}

// writeChoice writes {"choice":{"on":NAME,"cases":[{"when":V,"do":NODE},...],"else":NODE,"multi":true}
// without its closing brace.
func writeChoice(b *bytes.Buffer, n *Node) {
	b.WriteString(`{"choice":{"on":`)
	writeString(b, n.On)
	b.WriteString(`,"cases":[`)
	for i := range n.Cases {
		if i > 0 {
			b.WriteByte(',')
		}
		c := &n.Cases[i]
		b.WriteString(`{"when":`)
		if c.Any {
			b.WriteString(`{"any":[`)
			for k, v := range c.Values {
				if k > 0 {
					b.WriteByte(',')
				}
				b.Write(v)
			}
			b.WriteString(`]}`)
		} else if len(c.Values) > 0 {
			b.Write(c.Values[0])
		}
		b.WriteString(`,"do":`)
		if i < len(n.Children) {
			writeNode(b, &n.Children[i])
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	if n.HasElse() {
		b.WriteString(`,"else":`)
		writeNode(b, &n.Children[len(n.Cases)])
	}
	if n.Multi {
		b.WriteString(`,"multi":true`)
	}
	b.WriteByte('}')
}

// writeGuard writes "when":{"output":NAME,"equals":V}.
func writeGuard(b *bytes.Buffer, g *Guard) {
	b.WriteString(`"when":{"output":`)
	writeString(b, g.Output)
	b.WriteString(`,"equals":`)
	if len(g.Equals) == 0 {
		b.WriteString("null")
	} else {
		b.Write(g.Equals)
	}
	b.WriteByte('}')
}

// decodeChoice reads the value of a "choice" key into n.
func decodeChoice(raw json.RawMessage, n *Node, path string, depth int, d *decoder, add func(string, ...any)) {
	const shape = `{"on":"name","cases":[{"when":VALUE,"do":{...}},...],"else":{...},"multi":false}`
	fields, dups, ok := readObject(raw)
	if !ok {
		add(`"choice" must be an object like %s, got %s`, shape, DescribeJSON(raw))
		n.err = errReported
		return
	}
	for _, k := range dups {
		add("%s in choice (%s)", duplicate(k), onceOnly)
	}
	for _, k := range sortedKeys(fields) {
		if k != "on" && k != "cases" && k != "else" && k != "multi" {
			add("unknown field %q in choice (allowed: on, cases, else, multi)", k)
		}
	}
	if on, ok := fields["on"]; !ok {
		add(`choice has no "on" (the name of the leaf whose output it reads)`)
	} else if n.On, ok = readString(on); !ok {
		add(`"on" must be a string (a leaf's name), got %s`, DescribeJSON(on))
	}
	if m, ok := fields["multi"]; ok && string(m) != "null" {
		switch string(m) {
		case "true":
			n.Multi = true
		case "false":
		default:
			add(`"multi" must be true or false, got %s`, DescribeJSON(m))
		}
	}
	cases, ok := readArray(fields["cases"])
	if !ok {
		add(`"cases" must be an array like [{"when":VALUE,"do":{...}}], got %s`, DescribeJSON(fields["cases"]))
		n.err = errReported
		return
	}
	for i, c := range cases {
		cpath := ChildPath(path, KindChoice, i)
		cadd := func(format string, args ...any) {
			d.ps = append(d.ps, Problem{Path: cpath, Msg: fmt.Sprintf(format, args...)})
		}
		cf, dups, ok := readObject(c)
		if !ok {
			cadd(`want a case like {"when":VALUE,"do":{...}}, got %s`, DescribeJSON(c))
			n.Cases = append(n.Cases, Case{})
			n.Children = append(n.Children, Node{err: errReported})
			continue
		}
		for _, k := range dups {
			cadd("%s in choice case (%s)", duplicate(k), onceOnly)
		}
		for _, k := range sortedKeys(cf) {
			if k != "when" && k != "do" {
				cadd("unknown field %q in choice case (allowed: when, do)", k)
			}
		}
		var cs Case
		if w, ok := cf["when"]; !ok {
			cadd(`case has no "when" (the value it matches; null is written null)`)
		} else if obj, _, isObj := readObject(w); isObj && len(obj) == 1 && obj["any"] != nil {
			items, ok := readArray(obj["any"])
			if !ok {
				cadd(`"any" must be an array of values, got %s`, DescribeJSON(obj["any"]))
			}
			cs.Any = true
			for _, it := range items {
				cs.Values = append(cs.Values, compactJSON(it))
			}
		} else {
			cs.Values = []json.RawMessage{compactJSON(w)}
		}
		n.Cases = append(n.Cases, cs)
		if do, ok := cf["do"]; !ok || string(do) == "null" {
			cadd(`case has no "do" (the node to run)`)
			n.Children = append(n.Children, Node{err: errReported})
		} else {
			n.Children = append(n.Children, decodeNode(do, cpath, depth+1, d))
		}
	}
	if e, ok := fields["else"]; ok && string(e) != "null" {
		n.Children = append(n.Children, decodeNode(e, ChildPath(path, KindChoice, len(n.Cases)), depth+1, d))
	}
}

// compactJSON returns the valid JSON v compacted.
func compactJSON(v []byte) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return append(json.RawMessage(nil), v...)
	}
	return buf.Bytes()
}

// decodeGuard reads a dag entry's "when".
func decodeGuard(raw json.RawMessage, add func(string, ...any)) *Guard {
	const shape = `{"output":"name","equals":VALUE}`
	fields, dups, ok := readObject(raw)
	if !ok {
		add(`"when" must be an object like %s, got %s`, shape, DescribeJSON(raw))
		return nil
	}
	for _, k := range dups {
		add("%s in when (%s)", duplicate(k), onceOnly)
	}
	for _, k := range sortedKeys(fields) {
		if k != "output" && k != "equals" {
			add("unknown field %q in when (allowed: output, equals)", k)
		}
	}
	g := &Guard{}
	if o, ok := fields["output"]; !ok {
		add(`"when" has no "output" (the name of the leaf it reads)`)
	} else if g.Output, ok = readString(o); !ok {
		add(`"output" must be a string (a leaf's name), got %s`, DescribeJSON(o))
	}
	if e, ok := fields["equals"]; !ok {
		add(`"when" has no "equals" (the value the output must equal; null is written null)`)
	} else {
		g.Equals = compactJSON(e)
	}
	return g
}

// decodeCount reads "need" or "limit": a whole number of at least 1.
func decodeCount(raw json.RawMessage, field string, add func(string, ...any)) int {
	f, ok := decodeNumber(raw, field, "(at least 1)", add)
	switch {
	case !ok:
		return 0
	case f != float64(int64(f)):
		add("%s must be a whole number, got %s", field, showNumber(raw))
		return 0
	case f < 1 || f > 1e9:
		add("%s %s is out of range (at least 1; leave it out for none)", field, showNumber(raw))
		return 0
	}
	return int(f)
}

// lang3 checks, node by node, the fields of version 3 of node n.
func (v *validator) lang3(n *Node, path *pathRef) {
	if n.Kind != KindChoice && (n.On != "" || len(n.Cases) > 0 || n.Multi) {
		v.add(path, "on, cases or multi on a %s node (only a choice has them)", n.Kind)
	}
	v.waitSleep(n, path)
	if n.Kind != KindEnd && n.Reason != "" {
		v.add(path, "reason on a %s node (only an end has one)", n.Kind)
	}
	if n.When != nil {
		v.named = true
		if path == nil || path.kind != KindDag {
			v.add(path, "when on a node that is not a child of a dag (a guard decides whether a dag child runs)")
		}
		if n.When.Output == "" {
			v.add(path, `when has no output (the name of the leaf it reads)`)
		} else if msg := checkName(n.When.Output); msg != "" {
			v.add(path, "when: output %s", msg)
		}
		if !json.Valid(n.When.Equals) {
			v.add(path, "when: equals is not valid JSON")
		}
	}
	if n.Need != 0 {
		switch {
		case n.Kind == KindMap:
			if n.Need < 1 || n.Need > MaxCopies {
				v.add(path, "need %d is out of range (1 to %d, the most copies a map makes)", n.Need, MaxCopies)
			}
		case n.Kind != KindRace:
			v.add(path, "need on a %s node (only a race or a map has it)", n.Kind)
		case n.Need < 1 || n.Need > len(n.Children):
			v.add(path, "need %d is out of range (1 to the race's %d children)", n.Need, len(n.Children))
		}
	}
	if n.Limit != 0 {
		switch {
		case n.Kind == KindDag:
			v.add(path, "limit on a dag is not supported yet (a par takes one)")
		case n.Kind != KindPar && n.Kind != KindMap:
			v.add(path, "limit on a %s node (only a par or a map has it)", n.Kind)
		case n.Limit < 1:
			v.add(path, "limit %d is out of range (at least 1; leave it out for none)", n.Limit)
		}
	}
	if n.Kind != KindMap && n.Over != "" {
		v.add(path, "over on a %s node (only a map has it)", n.Kind)
	}
	if n.Kind != KindLoop && (n.Until != nil || n.Max != 0) {
		v.add(path, "until or max on a %s node (only a loop has them)", n.Kind)
	}
	switch n.Kind {
	case KindMap, KindLoop:
		v.mapLoop(n, path)
	case KindChoice:
		v.named = true
		if n.On == "" {
			v.add(path, `choice has no on (the name of the leaf whose output it reads)`)
		} else if msg := checkName(n.On); msg != "" {
			v.add(path, "on: %s", msg)
		}
		if len(n.Cases) == 0 {
			v.add(path, "choice has no cases")
		}
		if len(n.Children) != len(n.Cases) && len(n.Children) != len(n.Cases)+1 {
			v.add(path, "choice has %d cases and %d nodes (one per case, and one more for an else)", len(n.Cases), len(n.Children))
		}
		for i := range n.Cases {
			c := &n.Cases[i]
			switch {
			case len(c.Values) == 0 && c.Any:
				v.add(path, "case %d: any lists no value", i)
			case len(c.Values) == 0:
				v.add(path, "case %d has no value", i)
			case len(c.Values) > 1 && !c.Any:
				v.add(path, "case %d has %d values without any", i, len(c.Values))
			}
			for _, val := range c.Values {
				if !json.Valid(val) {
					v.add(path, "case %d: value is not valid JSON", i)
					break
				}
			}
		}
		if n.Action != "" || len(n.Payload) > 0 || n.Body != nil || n.Rescue != nil || n.Finally != nil {
			v.add(path, "choice node has fields of another kind (action, payload or try parts)")
		}
	case KindEnd:
		if n.Reason == "" {
			v.add(path, "end has no reason")
		}
		if n.Action != "" || len(n.Payload) > 0 || len(n.Children) > 0 || n.Body != nil || n.Rescue != nil || n.Finally != nil {
			v.add(path, "end node has fields of another kind (action, payload, children or try parts)")
		}
		if n.Replicas != 0 {
			v.add(path, "replicas on an end node")
		}
	}
}
