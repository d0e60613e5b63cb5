package ast

import (
	"bytes"
	"encoding/json"
	"time"
)

// MaxSleep is the longest sleep a workflow may write.
const MaxSleep = maxDuration

// Wait returns a leaf that no worker runs: it completes with the payload
// of a signal called signal sent to its job (the oldest kept one when it
// starts, else the first to arrive). A deadline on it is its timeout.
// Workflow format version 3.
func Wait(signal string) Node { return Node{Kind: KindWait, Signal: signal} }

// OnlyWhileRunning returns the wait n made transient: it takes only a
// signal that arrives while it runs, never one kept from before it started.
func (n Node) OnlyWhileRunning() Node {
	n.Transient = true
	return n
}

// Sleep returns a durable timer as a step: the node succeeds, with a null
// output, once d has passed on the job's clock since it started. Workflow
// format version 3.
func Sleep(d time.Duration) Node { return Node{Kind: KindSleep, Sleep: d} }

// writeWaitSleep writes {"wait":NAME,"transient":true} or
// {"sleep":"48h"} without its closing brace.
func writeWaitSleep(b *bytes.Buffer, n *Node) {
	if n.Kind == KindSleep {
		b.WriteString(`{"sleep":"`)
		b.WriteString(n.Sleep.String())
		b.WriteByte('"')
		return
	}
	b.WriteString(`{"wait":`)
	writeString(b, n.Signal)
	if n.Transient {
		b.WriteString(`,"transient":true`)
	}
}

// decodeWaitSleep reads the keys of a wait or a sleep node.
func decodeWaitSleep(fields map[string]json.RawMessage, n *Node, add func(string, ...any)) {
	if n.Kind == KindSleep {
		raw := fields["sleep"]
		d, ok := decodeDuration(raw, "sleep", `"48h"`, add)
		if ok && (string(raw) == "null" || d == 0) {
			add(`sleep must be a duration of at least %s, got %s`, minDuration, DescribeJSON(raw))
			ok = false
		}
		if !ok {
			n.err = errReported
		}
		n.Sleep = d
		return
	}
	var ok bool
	if n.Signal, ok = readString(fields["wait"]); !ok {
		add(`"wait" must be a string (the signal's name), got %s`, DescribeJSON(fields["wait"]))
		n.err = errReported
	}
	if raw, ok := fields["transient"]; ok {
		switch string(raw) {
		case "true":
			n.Transient = true
		case "false", "null":
		default:
			add(`transient must be true or false, got %s`, DescribeJSON(raw))
			n.err = errReported
		}
	}
}

// waitSleep checks the fields of a wait or a sleep, and that no other
// node has them.
func (v *validator) waitSleep(n *Node, path *pathRef) {
	if n.Kind != KindWait && (n.Signal != "" || n.Transient) {
		v.add(path, "wait or transient on a %s node (only a wait has them)", n.Kind)
	}
	if n.Kind != KindSleep && n.Sleep != 0 {
		v.add(path, "sleep on a %s node (only a sleep has it)", n.Kind)
	}
	if n.Kind != KindWait && n.Kind != KindSleep {
		return
	}
	if n.Action != "" || len(n.Payload) > 0 || len(n.Children) > 0 || n.Body != nil || n.Rescue != nil || n.Finally != nil || len(n.Inputs) > 0 {
		v.add(path, "%s node has fields of another kind (action, payload, inputs, children or try parts)", n.Kind)
	}
	if n.Replicas != 0 {
		v.add(path, "replicas on a %s node", n.Kind)
	}
	if n.Kind == KindWait {
		if n.Signal == "" {
			v.add(path, "wait has no signal name")
		} else if msg := CheckSignalName(n.Signal); msg != "" {
			v.add(path, "wait: signal %s", msg)
		}
		return
	}
	switch {
	case n.Sleep < minDuration:
		v.add(path, "sleep %s is less than %s", n.Sleep, minDuration)
	case n.Sleep > MaxSleep:
		v.add(path, "sleep %s is more than %s", n.Sleep, MaxSleep)
	}
	if n.Deadline != 0 {
		v.add(path, "deadline on a sleep (its duration is its time)")
	}
}

// CheckSignalName returns what is wrong with name as a signal's name, or
// "": a signal is named as a node is.
func CheckSignalName(name string) string { return checkName(name) }
