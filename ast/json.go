package ast

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Version is the newest version of the JSON workflow form this package
// reads and writes. It reads every version up to this one and refuses
// newer ones with a clear error; Encode writes the oldest version that
// holds the tree (VersionOf), so a workflow that uses nothing new is read
// by an older baton too.
//
//	1  act, seq, par, try and dag; names, inputs, retry, timeout,
//	   deadline, delivery and priority (added as optional keys)
//	2  race nodes, and "replicas" and "affinity" on any node
//	3  choice, end, map and loop nodes, "when" on a dag entry, "need"
//	   on a race, "limit" on a par or dag
//
// A document of an older version that uses a key of a newer one is
// refused, the message naming the key and the version that has it.
const Version = 3

// VersionOf returns the oldest version of the form that holds the tree
// rooted at n: 3 if it has a choice, an end, a map, a loop, a guard, a
// need or a limit,
// else 2 if it has a race, replicas or an affinity, else 1.
func VersionOf(n Node) int {
	v := 1
	Walk(n, func(_ string, m *Node) bool {
		if m.lang3() {
			v = 3
		} else if m.Kind == KindRace || m.Replicas != 0 || m.Affinity != nil {
			v = max(v, 2)
		}
		return v < 3
	})
	return v
}

// Encode returns the versioned JSON form of the workflow rooted at root:
//
//	{"version":1,"root":NODE}
//
// where NODE is one of
//
//	{"act":"name","payload":JSON,"name":"n","inputs":["a",...],"retry":RETRY,"timeout":"30s","deadline":"10m0s","delivery":"at-most-once","priority":5}
//	{"seq":[NODE,...],"name":"n","deadline":"10m0s"}
//	{"par":[NODE,...],"name":"n","deadline":"10m0s"}
//	{"try":NODE,"rescue":NODE,"finally":NODE,"name":"n","deadline":"10m0s"}
//	{"dag":[{"name":"a","after":["b",...],"do":NODE},...],"name":"n","deadline":"10m0s"}
//	{"race":[NODE,NODE,...],"name":"n","deadline":"10m0s"}
//
// and any NODE may end with "replicas":N and "affinity":AFFINITY (version
// 2, like race), AFFINITY being a key ("dataset-42") when it is a global
// key with no wait nor strict, else {"key":K,"scope":"job","wait":"2s",
// "strict":true} with its keys in that order, each left out when empty,
// and RETRY is
//
//	{"attempts":5,"initial":"1s","multiplier":2,"max":"1m0s","jitter":0.2,"non_retryable":["card_declined"]}
//
// Every key but the kind's own is optional and omitted when empty: payload,
// name, inputs, retry, timeout, deadline, delivery (omitted when
// "at-least-once", the default), priority (omitted when 0, the default),
// replicas (omitted when 0), rescue, finally and after; so is every
// key of a retry but attempts, when zero. On every kind of node,
// "deadline" comes after "name". A dag's children are written as entries: the
// child's Name and After are the entry's "name" and "after", and "do" is
// the child without them (its other keys, a deadline among them, stay in
// "do").
//
// The output is canonical: keys in this order, no spaces, compact payloads,
// durations as time.Duration's String writes them ("1m0s", "250ms"),
// multiplier and jitter as encoding/json writes a float64. Encode validates
// the tree first and returns Validate's error if any.
//
// Decode also reads what this form does not write: any order of keys,
// spaces, null for an optional key (none), an empty "inputs", "after" or
// "non_retryable" (none), "delivery":"at-least-once", "priority":0 (the
// default), a priority in any spelling of a whole number (5.0, 5e0), any
// duration time.ParseDuration reads ("1m", "1.5h", "90s"), and the name
// of a dag's child inside its "do" node rather than on the entry (not on
// both). It refuses a "timeout" or "deadline" of 0: written out, a limit
// of nothing is a mistake (leave the key out for no limit). It refuses a
// key written twice in any object of the form (the document, a node, a
// dag entry, a retry), naming the key and the node's path, where
// encoding/json would keep the last silently. A payload is not the
// form's: it reaches handlers as written (compacted), a key written twice
// in it included, and what that means is the handler's decoder's to say. Version 1
// gained names, inputs and dags, later retry, timeout, deadline and
// delivery, and then priority, as optional keys: a document without them
// reads as before, and a baton older than them refuses them as unknown
// fields.
func Encode(root Node) ([]byte, error) {
	if err := Validate(root); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"version":`)
	fmt.Fprint(&b, VersionOf(root))
	b.WriteString(`,"root":`)
	writeNode(&b, &root)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalJSON writes the node form of n (no version envelope), in the
// canonical form described at Encode. It fails for a tree Validate rejects.
func (n Node) MarshalJSON() ([]byte, error) {
	if err := Validate(n); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	writeNode(&b, &n)
	return b.Bytes(), nil
}

// AppendJSON appends the canonical node form of n to dst without
// validating it; n must be valid.
func AppendJSON(dst []byte, n Node) []byte {
	b := bytes.NewBuffer(dst)
	writeNode(b, &n)
	return b.Bytes()
}

func writeNode(b *bytes.Buffer, n *Node) {
	writeNodeAs(b, n, true)
}

// writeNodeAs writes n, with its name unless withName is false (the "do"
// node of a dag entry, whose name is the entry's).
func writeNodeAs(b *bytes.Buffer, n *Node, withName bool) {
	switch n.Kind {
	case KindAct:
		b.WriteString(`{"act":`)
		writeString(b, n.Action)
		if len(n.Payload) > 0 {
			b.WriteString(`,"payload":`)
			b.Write(n.Payload)
		}
	case KindSeq, KindPar, KindRace:
		b.WriteString(`{"`)
		b.WriteString(n.Kind.String())
		b.WriteString(`":[`)
		for i := range n.Children {
			if i > 0 {
				b.WriteByte(',')
			}
			writeNode(b, &n.Children[i])
		}
		b.WriteByte(']')
	case KindTry:
		b.WriteString(`{"try":`)
		writeNode(b, n.Body)
		if n.Rescue != nil {
			b.WriteString(`,"rescue":`)
			writeNode(b, n.Rescue)
		}
		if n.Finally != nil {
			b.WriteString(`,"finally":`)
			writeNode(b, n.Finally)
		}
	case KindDag:
		b.WriteString(`{"dag":[`)
		for i := range n.Children {
			c := &n.Children[i]
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('{')
			if c.Name != "" {
				b.WriteString(`"name":`)
				writeString(b, c.Name)
				b.WriteByte(',')
			}
			if len(c.After) > 0 {
				b.WriteString(`"after":`)
				writeStrings(b, c.After)
				b.WriteByte(',')
			}
			if c.When != nil {
				writeGuard(b, c.When)
				b.WriteByte(',')
			}
			b.WriteString(`"do":`)
			writeNodeAs(b, c, false)
			b.WriteByte('}')
		}
		b.WriteByte(']')
	case KindChoice:
		writeChoice(b, n)
	case KindMap:
		writeMap(b, n)
	case KindLoop:
		writeLoop(b, n)
	case KindEnd:
		b.WriteString(`{"end":`)
		writeString(b, n.Reason)
	case KindWait, KindSleep:
		writeWaitSleep(b, n)
	default:
		return // not a valid node: nothing is written
	}
	if withName && n.Name != "" {
		b.WriteString(`,"name":`)
		writeString(b, n.Name)
	}
	if n.Kind == KindAct && len(n.Inputs) > 0 {
		b.WriteString(`,"inputs":`)
		writeStrings(b, n.Inputs)
	}
	if n.timed() {
		writeTiming(b, n)
	}
	if n.Need != 0 && n.Kind != KindMap {
		b.WriteString(`,"need":`)
		b.WriteString(strconv.Itoa(n.Need))
	}
	if n.Limit != 0 && n.Kind != KindMap {
		b.WriteString(`,"limit":`)
		b.WriteString(strconv.Itoa(n.Limit))
	}
	if n.Priority != 0 {
		writePriority(b, n)
	}
	if n.Replicas != 0 {
		b.WriteString(`,"replicas":`)
		b.WriteString(strconv.Itoa(n.Replicas))
	}
	if n.Affinity != nil {
		writeAffinity(b, n.Affinity)
	}
	b.WriteByte('}')
}

func writeStrings(b *bytes.Buffer, list []string) {
	b.WriteByte('[')
	for i, s := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, s)
	}
	b.WriteByte(']')
}

func writeString(b *bytes.Buffer, s string) {
	// Valid action names need no escaping: write them as they are, which
	// keeps encoding a large tree free of an allocation per action.
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	if plain {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	q, _ := json.Marshal(s) // a string always marshals
	b.Write(q)
}

// Decode reads the versioned JSON form written by Encode. Every problem is
// reported, each with its node path; a JSON syntax error is reported with
// its line and column. The returned tree has passed Validate.
func Decode(data []byte) (Node, error) {
	return decodeDocument(data, &decoder{})
}

// decodeDocument is Decode, with d the decoder of the document.
func decodeDocument(data []byte, d *decoder) (Node, error) {
	if err := d.syntax(data); err != nil {
		return Node{}, err
	}
	// The envelope is read field by field, like the nodes, so that a field
	// of the wrong type is reported in JSON's words, not Go's.
	env, dups, ok := readObject(data)
	if !ok {
		return Node{}, fmt.Errorf(`workflow: want an object like {"version":1,"root":...}, got %s`, DescribeJSON(data))
	}
	if len(dups) > 0 {
		return Node{}, fmt.Errorf("workflow: %s in the document (%s)", duplicate(dups[0]), onceOnly)
	}
	for k := range env {
		if k == "version" || k == "root" {
			continue
		}
		// The first unknown field in sorted order is the one named.
		for _, k := range sortedKeys(env) {
			if k != "version" && k != "root" {
				return Node{}, fmt.Errorf("workflow: unknown field %q (allowed: version, root)", k)
			}
		}
	}
	rawVersion, ok := env["version"]
	if !ok || string(rawVersion) == "null" {
		return Node{}, fmt.Errorf(`workflow: missing "version" (this baton reads version %d)`, Version)
	}
	version, err := readInt(rawVersion)
	if err != nil {
		got := DescribeJSON(rawVersion)
		if got == "a number" && len(rawVersion) <= 20 {
			got = string(rawVersion)
		}
		return Node{}, fmt.Errorf(`workflow: "version" must be a whole number like %d, got %s`, Version, got)
	}
	root := env["root"]
	switch {
	case version > Version:
		return Node{}, fmt.Errorf("workflow: version %d is newer than this baton reads (%d)", version, Version)
	case version < 1:
		return Node{}, fmt.Errorf("workflow: version %d is not a valid version (this baton reads %d)", version, Version)
	case root == nil || string(root) == "null":
		return Node{}, errors.New(`workflow: missing "root" (the tree is empty)`)
	}
	d.version = version
	var n Node
	if err := n.unmarshal(root, d); err != nil {
		return Node{}, err
	}
	return n, nil
}

// UnmarshalJSON reads the node form (no version envelope). Problems are
// returned as an *Error listing each with its path.
func (n *Node) UnmarshalJSON(data []byte) error {
	d := decoder{version: Version}
	if err := d.syntax(data); err != nil {
		return err
	}
	return n.unmarshal(data, &d)
}

// decoder holds what decoding one document found, and the version the
// document says it is written in.
type decoder struct {
	ps      []Problem
	version int
	checks  int // syntax checks of the document made (syntax): one
}

// syntax checks that data, the whole document, is JSON: the one check of
// its syntax. Everything then read out of it (readObject, readArray,
// valueEnd) is a slice of valid JSON, and is not checked again.
func (d *decoder) syntax(data []byte) error {
	d.checks++
	return syntaxError(data)
}

// unmarshal reads the node form from data, valid JSON (d.syntax checked
// the document data is part of), of a document of d.version.
func (n *Node) unmarshal(data []byte, d *decoder) error {
	out := decodeNode(data, "", 1, d)
	ps := d.ps
	// Structural problems first, then what Validate finds in the parts that
	// did decode (nodes that could not be read are marked and skipped).
	if err := Validate(out); err != nil {
		var ve *Error
		if errors.As(err, &ve) {
			ps = append(ps, ve.Problems...)
		}
	}
	if len(ps) > 0 {
		sort.SliceStable(ps, func(a, b int) bool { return ComparePaths(ps[a].Path, ps[b].Path) < 0 })
		return &Error{Problems: ps}
	}
	*n = out
	return nil
}

// syntaxError returns a syntax error with line and column, or nil.
func syntaxError(data []byte) error {
	if json.Valid(data) {
		return nil
	}
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(data, se.Offset)
		if nestedTooDeep(data[:se.Offset]) {
			return fmt.Errorf("workflow: nested more than %d levels deep (the limit) at line %d, column %d", maxNesting, line, col)
		}
		return fmt.Errorf("workflow: JSON syntax error at line %d, column %d: %v", line, col, se)
	}
	if err == nil {
		err = errors.New("invalid JSON")
	}
	return fmt.Errorf("workflow: %w", err)
}

// maxNesting is how deeply objects and arrays may nest in a document,
// payloads included: encoding/json's limit, which it reports as a syntax
// error ("exceeded max depth") that does not say what the limit is.
const maxNesting = 10000

// nestedTooDeep reports whether objects and arrays nest more than
// maxNesting levels deep in data, the JSON read up to a syntax error.
func nestedTooDeep(data []byte) bool {
	depth := 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString: // brackets in strings do not nest
		case c == '{' || c == '[':
			if depth++; depth > maxNesting {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col = 1, 1
	for _, c := range data[:off] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	// encoding/json reports the offset after the offending byte.
	if col > 1 {
		col--
	}
	return line, col
}

var kindKeys = [...]struct {
	key  string
	kind Kind
}{{"act", KindAct}, {"seq", KindSeq}, {"par", KindPar}, {"try", KindTry}, {"dag", KindDag}, {"race", KindRace}, {"choice", KindChoice}, {"end", KindEnd}, {"map", KindMap}, {"loop", KindLoop}, {"wait", KindWait}, {"sleep", KindSleep}}

// nodeKeys are the keys each kind of node may have, the kind's key first.
var nodeKeys = map[Kind][]string{
	KindAct:    {"act", "payload", "name", "inputs", "retry", "timeout", "deadline", "delivery", "priority"},
	KindSeq:    {"seq", "name", "deadline"},
	KindPar:    {"par", "name", "deadline", "limit"},
	KindTry:    {"try", "rescue", "finally", "name", "deadline"},
	KindDag:    {"dag", "name", "deadline", "limit"},
	KindRace:   {"race", "name", "deadline", "need"},
	KindChoice: {"choice", "name", "deadline"},
	KindEnd:    {"end", "name"},
	KindMap:    {"map", "name", "deadline"},
	KindLoop:   {"loop", "name", "deadline"},
	KindWait:   {"wait", "transient", "name", "deadline"},
	KindSleep:  {"sleep", "name"},
}

// Which version of the form each key appeared in, for the keys that are
// not in version 1: a document of an older version that uses one is
// refused with a message naming the version that has it.
var keyVersion = map[string]int{"race": 2, "replicas": 2, "affinity": 2,
	"choice": 3, "end": 3, "when": 3, "need": 3, "limit": 3, "map": 3, "loop": 3,
	"wait": 3, "transient": 3, "sleep": 3}

func decodeNode(data []byte, path string, depth int, d *decoder) Node {
	add := func(format string, args ...any) {
		d.ps = append(d.ps, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	bad := Node{err: errReported}
	if depth > MaxDepth {
		add("tree is deeper than %d levels", MaxDepth)
		return bad
	}
	fields, dups, ok := readObject(data)
	if !ok {
		add("want a node object like {\"act\":...}, {\"seq\":[...]}, {\"par\":[...]}, {\"try\":...}, {\"dag\":[...]}, {\"race\":[...]}, {\"choice\":{...}}, {\"end\":...}, {\"map\":{...}}, {\"loop\":{...}}, {\"wait\":...} or {\"sleep\":...}, got %s", DescribeJSON(data))
		return bad
	}
	var kinds []string
	n := Node{}
	for _, kk := range kindKeys {
		if _, ok := fields[kk.key]; ok {
			kinds = append(kinds, kk.key)
			n.Kind = kk.kind
		}
	}
	switch len(kinds) {
	case 0:
		add("node has none of the keys act, seq, par, try, dag, race, choice, end, map, loop, wait, sleep (has: %s)", strings.Join(sortedKeys(fields), ", "))
		return bad
	case 1:
	default:
		add("node has more than one kind key: %s", strings.Join(kinds, ", "))
		return bad
	}
	for _, k := range dups {
		add("%s in %s node (%s)", duplicate(k), n.Kind, onceOnly)
	}
	allowed := nodeKeys[n.Kind]
	for _, k := range keysToReport(fields, allowed, d.version) {
		if v := keyVersion[k]; v > d.version {
			add("%q needs workflow version %d (this document is version %d)", k, v, d.version)
		}
		switch {
		case slices.Contains(allowed, k), k == "replicas", k == "affinity":
		case k == "inputs":
			add("unknown field %q in %s node (only an act takes inputs)", k, n.Kind)
		case k == "after" || k == "when":
			add("unknown field %q in %s node (%s belongs in a dag entry, beside name and do)", k, n.Kind, k)
		case k == "retry" || k == "timeout" || k == "delivery" || k == "priority":
			// Reported below, in the order of the keys.
		default:
			add("unknown field %q in %s node (allowed: %s)", k, n.Kind, strings.Join(allowed, ", "))
		}
	}
	if n.Kind != KindAct {
		for _, k := range [...]string{"retry", "timeout", "delivery"} {
			if _, ok := fields[k]; ok {
				add("%s", misplaced(k, n.Kind))
			}
		}
		if _, ok := fields["priority"]; ok {
			add("%s", misplacedPriority(n.Kind))
		}
	}
	if raw, ok := fields["name"]; ok {
		n.Name, n.badName = decodeName(raw, add)
	}
	decodeTiming(fields, &n, add)
	if raw, ok := fields["priority"]; ok && n.Kind == KindAct {
		n.Priority = decodePriority(raw, add)
	}
	if raw, ok := fields["replicas"]; ok {
		n.Replicas = decodeReplicas(raw, add)
	}
	if raw, ok := fields["affinity"]; ok {
		n.Affinity = decodeAffinity(raw, add)
	}
	if raw, ok := fields["need"]; ok && n.Kind == KindRace {
		n.Need = decodeCount(raw, "need", add)
	}
	if raw, ok := fields["limit"]; ok && (n.Kind == KindPar || n.Kind == KindDag) {
		n.Limit = decodeCount(raw, "limit", add)
	}
	switch n.Kind {
	case KindChoice:
		decodeChoice(fields["choice"], &n, path, depth, d, add)
	case KindMap:
		decodeMap(fields["map"], &n, path, depth, d, add)
	case KindLoop:
		decodeLoop(fields["loop"], &n, path, depth, d, add)
	case KindWait, KindSleep:
		decodeWaitSleep(fields, &n, add)
	case KindEnd:
		var ok bool
		if n.Reason, ok = readString(fields["end"]); !ok {
			add(`"end" must be a string (the reason), got %s`, DescribeJSON(fields["end"]))
			n.err = errReported
		}
	case KindAct:
		var ok bool
		if n.Action, ok = readString(fields["act"]); !ok {
			add(`"act" must be a string (the action name), got %s`, DescribeJSON(fields["act"]))
			n.err = errReported
		}
		if p, ok := fields["payload"]; ok && string(p) != "null" {
			n.Payload = compactValid(p)
		}
		if raw, ok := fields["inputs"]; ok {
			n.Inputs = decodeNames(raw, "inputs", "node names", add)
		}
	case KindSeq, KindPar, KindRace:
		kids, ok := readArray(fields[n.Kind.String()])
		if !ok {
			add(`%q must be an array of nodes, got %s`, n.Kind.String(), DescribeJSON(fields[n.Kind.String()]))
			n.err = errReported
			break
		}
		n.Children = make([]Node, len(kids))
		for i, k := range kids {
			n.Children[i] = decodeNode(k, ChildPath(path, n.Kind, i), depth+1, d)
		}
	case KindTry:
		for _, part := range [...]struct {
			key, name string
			dst       **Node
		}{{"try", PartBody, &n.Body}, {"rescue", PartRescue, &n.Rescue}, {"finally", PartFinally, &n.Finally}} {
			raw, ok := fields[part.key]
			if !ok {
				continue
			}
			if string(raw) == "null" {
				if part.key == "try" {
					add("try has no body (\"try\" is null)")
					n.Body = &Node{err: errReported}
				}
				continue
			}
			c := decodeNode(raw, PartPath(path, part.name), depth+1, d)
			*part.dst = &c
		}
	case KindDag:
		entries, ok := readArray(fields["dag"])
		if !ok {
			add(`"dag" must be an array of entries like {"name":"a","after":["b"],"do":{...}}, got %s`, DescribeJSON(fields["dag"]))
			n.err = errReported
			break
		}
		n.Children = make([]Node, len(entries))
		for i, e := range entries {
			n.Children[i] = decodeEntry(e, ChildPath(path, KindDag, i), depth+1, d)
		}
	}
	return n
}

// decodeEntry reads a dag entry, {"name":"a","after":["b"],"do":NODE},
// into the child node: NODE, with the entry's name and after.
func decodeEntry(data []byte, path string, depth int, d *decoder) Node {
	add := func(format string, args ...any) {
		d.ps = append(d.ps, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	fields, dups, ok := readObject(data)
	if !ok {
		add(`want a dag entry like {"name":"a","after":["b"],"do":{...}}, got %s`, DescribeJSON(data))
		return Node{err: errReported, badName: true}
	}
	for _, k := range dups {
		add("%s in dag entry (%s)", duplicate(k), onceOnly)
	}
	for _, k := range sortedKeys(fields) {
		switch {
		case k == "name" || k == "after" || k == "do":
		case k == "when":
			if d.version < keyVersion[k] {
				add("%q needs workflow version %d (this document is version %d)", k, keyVersion[k], d.version)
			}
		case k == "inputs" || k == "retry" || k == "timeout" || k == "deadline" || k == "delivery" || k == "priority" || k == "replicas" || k == "affinity":
			add("unknown field %q in dag entry (allowed: name, after, when, do; %s belongs in the \"do\" node)", k, k)
		default:
			add("unknown field %q in dag entry (allowed: name, after, when, do)", k)
		}
	}
	var name string
	var badName bool
	if raw, ok := fields["name"]; ok {
		name, badName = decodeName(raw, add)
	}
	var after []string
	if raw, ok := fields["after"]; ok {
		after = decodeNames(raw, "after", "names of siblings", add)
	}
	var n Node
	if raw, ok := fields["do"]; !ok || string(raw) == "null" {
		add(`dag entry has no "do" (the node to run)`)
		n = Node{err: errReported}
	} else {
		n = decodeNode(raw, path, depth, d)
	}
	switch {
	case name != "" && n.Name != "":
		add(`dag entry has two names: %q, and %q in its "do" node`, name, n.Name)
	case badName && n.Name == "":
		n.badName = true
	}
	if name != "" {
		n.Name = name
	}
	n.After = after
	if raw, ok := fields["when"]; ok && string(raw) != "null" && d.version >= keyVersion["when"] {
		n.When = decodeGuard(raw, add)
	}
	return n
}

// decodeName reads a "name" value: a string, or null for no name. It
// reports anything else, and the empty string, and then returns bad.
func decodeName(raw json.RawMessage, add func(string, ...any)) (name string, bad bool) {
	if string(raw) == "null" {
		return "", false
	}
	name, ok := readString(raw)
	if !ok {
		add(`"name" must be a string, got %s`, DescribeJSON(raw))
		return "", true
	}
	if name == "" {
		add("name is empty")
		return "", true
	}
	return name, false
}

// decodeNames reads the array of strings of the key key ("inputs" or
// "after"), what being what they name; null is none.
func decodeNames(raw json.RawMessage, key, what string, add func(string, ...any)) []string {
	if string(raw) == "null" {
		return nil
	}
	items, ok := readArray(raw)
	if !ok {
		add(`%q must be an array of strings (%s), got %s`, key, what, DescribeJSON(raw))
		return nil
	}
	var names []string
	for i, it := range items {
		s, ok := readString(it)
		if !ok {
			add(`%q must be an array of strings (%s), got %s at index %d`, key, what, DescribeJSON(it), i)
			return nil
		}
		names = append(names, s)
	}
	return names
}

// onceOnly ends the message about a duplicate field.
const onceOnly = "a field may appear once"

// duplicate names a field written twice in an object. encoding/json would
// keep the last and say nothing; the decoder refuses, since a workflow
// like {"act":"log","act":"fail"} has no meaning its writer can be sure of.
func duplicate(key string) string {
	return fmt.Sprintf("duplicate field %s", quoteShort(key))
}

// keysToReport returns the keys of a node's fields that the node's loop
// over its keys reports a problem of (of a newer version than the
// document's, not allowed, or misplaced): all of them, sorted, when one
// is; none when none is (a node as it should be costs no sorted copy of
// its keys).
func keysToReport(fields map[string]json.RawMessage, allowed []string, version int) []string {
	for k := range fields {
		if keyVersion[k] > version || !slices.Contains(allowed, k) && k != "replicas" && k != "affinity" {
			return sortedKeys(fields)
		}
	}
	return nil
}

// readInt reads the JSON number raw as an int, as json.Unmarshal into an
// int does (the same error for a fraction, an exponent, an overflow or
// another type), without its reflection for a plain whole number.
func readInt(raw []byte) (int, error) {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	plain := len(digits) > 0 && len(digits) <= 18
	for _, c := range digits {
		plain = plain && '0' <= c && c <= '9'
	}
	if plain {
		if v, err := strconv.Atoi(string(raw)); err == nil {
			return v, nil
		}
	}
	var v int
	err := json.Unmarshal(raw, &v)
	return v, err
}

// compactValid returns the valid JSON value p without the space between
// its tokens, as json.Compact writes it, in a slice of its own: p is part
// of a document whose syntax was checked, so it is not checked again.
func compactValid(p []byte) []byte {
	out := make([]byte, 0, len(p))
	inString, escaped := false, false
	for _, c := range p {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			continue
		}
		out = append(out, c)
	}
	return out
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// DescribeJSON names the JSON type of data for error messages: "an
// object", "an array", "a string", "a boolean", "null", "a number", or
// "nothing" for empty input. Only the first byte is looked at.
func DescribeJSON(data []byte) string {
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
