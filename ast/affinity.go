package ast

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// Affinity is a placement hint: where the actions under a node would
// rather run (see Node.Affinity). The reducer copies it, resolved, onto
// each action as plain data and gives it no other meaning; a runner that
// places work reads it (runner/inmem ignores it). Workflow format
// version 2.
type Affinity struct {
	// Key names what the actions share: a data set, a cache, a session.
	// 1 to MaxAffinityKey bytes of UTF-8. With ScopeJob it may be empty:
	// the key is then the node's own (the job and its path).
	Key string
	// Scope is ScopeGlobal (a key shared by every job) or ScopeJob (a key
	// of this job only).
	Scope AffinityScope
	// Wait is how long an action may wait for a busy holder of a soft
	// key before it runs elsewhere; 0 for the cluster's default.
	Wait time.Duration
	// Strict, when not nil, overrides the default strength: a global key
	// is soft (a preference), a job key strict (a pin: the actions stay on
	// one worker).
	Strict *bool
}

// AffinityScope says whose key an Affinity names.
type AffinityScope uint8

// The scopes of an affinity key.
const (
	ScopeGlobal AffinityScope = iota // a key of the whole cluster
	ScopeJob                         // a key of one job
)

// String returns the scope as written in JSON: "global" or "job".
func (s AffinityScope) String() string {
	switch s {
	case ScopeGlobal:
		return "global"
	case ScopeJob:
		return "job"
	}
	return "AffinityScope(" + strconv.Itoa(int(s)) + ")"
}

// MaxAffinityKey is the most bytes in an affinity key.
const MaxAffinityKey = 256

// IsStrict reports whether the affinity is a pin: Strict if set, else
// true for a job key and false for a global one.
func (a Affinity) IsStrict() bool {
	if a.Strict != nil {
		return *a.Strict
	}
	return a.Scope == ScopeJob
}

// WithAffinity returns n whose leaves, unless a node nearer to them sets
// its own, carry the placement hint a (no merging: the nearest decides).
func (n Node) WithAffinity(a Affinity) Node {
	n.Affinity = &a
	return n
}

// affinity checks n's Affinity, which is not nil.
func (v *validator) affinity(n *Node, path *pathRef) {
	a := n.Affinity
	switch {
	case a.Scope != ScopeGlobal && a.Scope != ScopeJob:
		v.add(path, "affinity scope %d is not a scope (want global or job)", a.Scope)
	case a.Key == "" && a.Scope == ScopeGlobal:
		v.add(path, "affinity key is empty (a global key names what the actions share; for a key of this subtree, use scope job)")
	case len(a.Key) > MaxAffinityKey:
		v.add(path, "affinity key is %d bytes long (at most %d)", len(a.Key), MaxAffinityKey)
	case !utf8.ValidString(a.Key):
		v.add(path, "affinity key %s is not valid UTF-8", quoteShort(a.Key))
	}
	if a.Wait < 0 {
		v.add(path, "affinity wait %s is negative", a.Wait)
	}
}

// writeAffinity writes the key "affinity" of n: a plain string for a
// global key with no wait and the default strength, else an object.
func writeAffinity(b *bytes.Buffer, a *Affinity) {
	b.WriteString(`,"affinity":`)
	if a.Scope == ScopeGlobal && a.Wait == 0 && a.Strict == nil {
		writeString(b, a.Key)
		return
	}
	b.WriteByte('{')
	sep := ""
	if a.Key != "" {
		b.WriteString(`"key":`)
		writeString(b, a.Key)
		sep = ","
	}
	if a.Scope == ScopeJob {
		b.WriteString(sep + `"scope":"job"`)
		sep = ","
	}
	if a.Wait != 0 {
		b.WriteString(sep + `"wait":`)
		writeString(b, a.Wait.String())
		sep = ","
	}
	if a.Strict != nil {
		b.WriteString(sep + `"strict":` + strconv.FormatBool(*a.Strict))
	}
	b.WriteByte('}')
}

// decodeAffinity reads an "affinity" value: a string (a global key), an
// object {"key","scope","wait","strict"}, or null for none.
func decodeAffinity(raw json.RawMessage, add func(string, ...any)) *Affinity {
	if string(raw) == "null" {
		return nil
	}
	if s, ok := readString(raw); ok {
		if s == "" {
			add("affinity key is empty")
			return nil
		}
		return &Affinity{Key: s}
	}
	fields, dups, ok := readObject(raw)
	if !ok {
		add(`affinity must be a key or an object like {"key":"dataset-42","wait":"2s"} or {"scope":"job"}, got %s`, DescribeJSON(raw))
		return nil
	}
	for _, k := range dups {
		add("%s in affinity (%s)", duplicate(k), onceOnly)
	}
	a := &Affinity{}
	for _, k := range sortedKeys(fields) {
		raw := fields[k]
		switch k {
		case "key":
			s, ok := readString(raw)
			if !ok || s == "" {
				add(`affinity "key" must be a non-empty string, got %s`, DescribeJSON(raw))
				return nil
			}
			a.Key = s
		case "scope":
			s, _ := readString(raw)
			switch s {
			case "global":
			case "job":
				a.Scope = ScopeJob
			default:
				add(`affinity scope %s is not a scope (want "global" or "job")`, showJSON(raw))
				return nil
			}
		case "wait":
			d, ok := decodeDuration(raw, "affinity wait", `"2s"`, add)
			if !ok {
				return nil
			}
			a.Wait = d
		case "strict":
			var b bool
			if err := json.Unmarshal(raw, &b); err != nil || string(raw) == "null" {
				add(`affinity "strict" must be true or false, got %s`, DescribeJSON(raw))
				return nil
			}
			a.Strict = &b
		default:
			add(`unknown field %q in affinity (allowed: key, scope, wait, strict)`, k)
			return nil
		}
	}
	if a.Key == "" && a.Scope == ScopeGlobal {
		add(`affinity has no "key" (a global key names what the actions share; for a key of this subtree, write {"scope":"job"})`)
		return nil
	}
	return a
}

// showJSON returns raw as written, shortened if long.
func showJSON(raw json.RawMessage) string {
	if len(raw) > maxShown {
		return string(raw[:maxShown]) + "..."
	}
	return string(raw)
}

func equalAffinity(a, b *Affinity) bool {
	if a == nil || b == nil {
		return a == b
	}
	sa, sb := a.Strict != nil, b.Strict != nil
	return a.Key == b.Key && a.Scope == b.Scope && a.Wait == b.Wait && sa == sb && (!sa || *a.Strict == *b.Strict)
}
