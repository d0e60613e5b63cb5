package kafka

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// wireFormat is the "v" of every JSON message baton writes.
const wireFormat = 1

// Message types ("type").
const (
	typeSubmit  = "submit"
	typeResult  = "result"
	typeCancel  = "cancel"
	typeSignal  = "signal"
	typeDelete  = "delete"
	typeAction  = "action"
	typeClaimed = "claimed"
	typeStop    = "stop"
)

// hexInc writes an incarnation as 16 hex digits.
func hexInc(n uint64) string {
	const digits = "0000000000000000"
	s := strconv.FormatUint(n, 16)
	return digits[len(s):] + s
}

func parseInc(s string) (uint64, error) {
	if len(s) != 16 {
		return 0, fmt.Errorf("incarnation %q is not 16 hex digits", s)
	}
	n, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("incarnation %q is not 16 hex digits", s)
	}
	return n, nil
}

// blob is bytes written as JSON when they are JSON, else base64 under a
// sibling key ending in "_b64".
func blob(b []byte) (raw json.RawMessage, b64 []byte) {
	switch {
	case len(b) == 0:
		return nil, nil
	case json.Valid(b):
		return json.RawMessage(b), nil
	}
	return nil, b
}

func unblob(raw json.RawMessage, b64 []byte) []byte {
	if len(raw) > 0 {
		return []byte(raw)
	}
	if len(b64) > 0 {
		return b64
	}
	return nil
}

// decodeStrict decodes one JSON object into v, refusing unknown fields and
// trailing data.
func decodeStrict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the JSON object")
	}
	return nil
}

// restarterMsg is a message of the restarter topic; the job ID is its key.
type restarterMsg struct {
	V           int             `json:"v"`
	Type        string          `json:"type"`
	Incarnation string          `json:"incarnation,omitempty"`
	Started     *time.Time      `json:"started,omitempty"`
	Workflow    json.RawMessage `json:"workflow,omitempty"`
	Action      string          `json:"action,omitempty"`
	Output      json.RawMessage `json:"output,omitempty"`
	OutputB64   []byte          `json:"output_b64,omitempty"`
	Error       string          `json:"error,omitempty"`
	Kind        string          `json:"kind,omitempty"`
	Final       bool            `json:"final,omitempty"`
	At          *time.Time      `json:"at,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	Worker      string          `json:"worker,omitempty"`  // a result's job.Result.Worker
	Node        string          `json:"node,omitempty"`    // a cancel's: the node cancelled (job.CancelNode)
	Name        string          `json:"name,omitempty"`    // a signal's name
	SignalID    string          `json:"id,omitempty"`      // a signal's ID
	Payload     json.RawMessage `json:"payload,omitempty"` // a signal's payload
}

// inbound is a decoded restarter message.
type inbound struct {
	id   job.ID
	kind string // typeSubmit, typeResult, typeCancel, typeSignal, typeDelete
	// submit; delete: the incarnation deleted (0: whichever is stored)
	inc      uint64
	started  time.Time
	workflow ast.Node
	// result (a cancel is job.CancelResult, or job.CancelNodeResult with
	// a node; a signal job.SignalResult)
	result job.Result
	hasInc bool // the result names its job's incarnation
}

func submitMessage(id job.ID, inc uint64, started time.Time, root ast.Node) (kafka.Message, error) {
	wf, err := ast.Encode(root)
	if err != nil {
		return kafka.Message{}, err
	}
	st := started.UTC()
	v, _ := json.Marshal(restarterMsg{V: wireFormat, Type: typeSubmit, Incarnation: hexInc(inc), Started: &st, Workflow: wf})
	return kafka.Message{Key: []byte(id), Value: v}, nil
}

func resultMessage(r job.Result, inc uint64) kafka.Message {
	m := restarterMsg{V: wireFormat, Type: typeResult, Action: r.ActionID, Error: r.Error, Kind: r.Kind, Final: r.Final, Worker: r.Worker}
	if inc != 0 {
		m.Incarnation = hexInc(inc)
	}
	m.Output, m.OutputB64 = blob(r.Output)
	if !r.At.IsZero() {
		at := r.At.UTC()
		m.At = &at
	}
	v, _ := json.Marshal(m)
	return kafka.Message{Key: []byte(r.JobID), Value: v}
}

func cancelMessage(id job.ID, reason string, at time.Time) kafka.Message {
	m := restarterMsg{V: wireFormat, Type: typeCancel, Reason: reason}
	if !at.IsZero() {
		at = at.UTC()
		m.At = &at
	}
	v, _ := json.Marshal(m)
	return kafka.Message{Key: []byte(id), Value: v}
}

// cancelNodeMessage cancels the node called node in job id (res is
// job.CancelNodeResult's, stamped).
func cancelNodeMessage(res job.Result, node string) kafka.Message {
	m := restarterMsg{V: wireFormat, Type: typeCancel, Reason: res.Error, Node: node}
	if !res.At.IsZero() {
		at := res.At.UTC()
		m.At = &at
	}
	v, _ := json.Marshal(m)
	return kafka.Message{Key: []byte(res.JobID), Value: v}
}

// signalMessage sends signal s to job id.
func signalMessage(id job.ID, s job.Signal) kafka.Message {
	m := restarterMsg{V: wireFormat, Type: typeSignal, Name: s.Name, SignalID: s.ID, Payload: s.Payload}
	if !s.At.IsZero() {
		at := s.At.UTC()
		m.At = &at
	}
	v, _ := json.Marshal(m)
	return kafka.Message{Key: []byte(id), Value: v}
}

// deleteMessage asks the owner of job id's partition to delete it: the
// incarnation inc, or whichever is stored if inc is 0 (a damaged job).
func deleteMessage(id job.ID, inc uint64) kafka.Message {
	m := restarterMsg{V: wireFormat, Type: typeDelete}
	if inc != 0 {
		m.Incarnation = hexInc(inc)
	}
	v, _ := json.Marshal(m)
	return kafka.Message{Key: []byte(id), Value: v}
}

// decodeInbound reads a restarter message. Its errors say what is wrong,
// not where: the caller names the partition and offset.
func decodeInbound(key, value []byte) (inbound, error) {
	id := job.ID(key)
	if err := id.Check(); err != nil {
		return inbound{}, fmt.Errorf("key: %w", err)
	}
	var m restarterMsg
	if err := decodeStrict(value, &m); err != nil {
		return inbound{}, fmt.Errorf("value is not a baton message: %v", err)
	}
	if m.V != wireFormat {
		return inbound{}, fmt.Errorf("message format %d, want %d", m.V, wireFormat)
	}
	in := inbound{id: id, kind: m.Type}
	switch m.Type {
	case typeSubmit:
		inc, err := parseInc(m.Incarnation)
		if err != nil || inc == 0 {
			return inbound{}, fmt.Errorf("submit: bad incarnation %q", m.Incarnation)
		}
		if m.Started == nil {
			return inbound{}, errors.New(`submit: no "started" time`)
		}
		root, err := ast.Decode(m.Workflow)
		if err != nil {
			return inbound{}, fmt.Errorf("submit: workflow: %w", err)
		}
		in.inc, in.started, in.workflow = inc, *m.Started, root
	case typeResult:
		if _, _, err := job.SplitActionID(m.Action); err != nil && !timerLike(m.Action) {
			return inbound{}, fmt.Errorf("result: %v", err)
		}
		if m.Incarnation != "" {
			inc, err := parseInc(m.Incarnation)
			if err != nil {
				return inbound{}, fmt.Errorf("result: %v", err)
			}
			in.inc, in.hasInc = inc, true
		}
		in.result = job.Result{JobID: id, ActionID: m.Action, Output: unblob(m.Output, m.OutputB64),
			Error: m.Error, Kind: m.Kind, Final: m.Final, Worker: m.Worker}
		if m.At != nil {
			in.result.At = *m.At
		}
	case typeCancel:
		if m.Reason == "" {
			return inbound{}, errors.New("cancel: no reason")
		}
		in.result = job.CancelResult(id, m.Reason)
		if m.Node != "" {
			if msg := ast.CheckSignalName(m.Node); msg != "" {
				return inbound{}, fmt.Errorf("cancel: node %s", msg)
			}
			in.result = job.CancelNodeResult(id, m.Node, m.Reason)
		}
		if m.At != nil {
			in.result.At = *m.At
		}
	case typeSignal:
		s := job.Signal{Name: m.Name, ID: m.SignalID, Payload: m.Payload}
		if m.At != nil {
			s.At = *m.At
		}
		if err := s.Check(); err != nil {
			return inbound{}, err
		}
		in.result = job.SignalResult(id, s)
	case typeDelete:
		if m.Incarnation != "" {
			inc, err := parseInc(m.Incarnation)
			if err != nil {
				return inbound{}, fmt.Errorf("delete: %v", err)
			}
			in.inc = inc
		}
	default:
		return inbound{}, fmt.Errorf("unknown message type %q", m.Type)
	}
	return in, nil
}

// timerLike reports whether an action ID names a timer ("PATH@..."): a
// firing delivered by hand is a result like any other.
func timerLike(id string) bool { return bytes.IndexByte([]byte(id), '@') >= 0 }

// actionMsg is a message of an action topic.
type actionMsg struct {
	V           int             `json:"v"`
	Type        string          `json:"type"`
	Job         string          `json:"job"`
	Incarnation string          `json:"incarnation"`
	ID          string          `json:"id"`
	Name        string          `json:"name,omitempty"`
	Attempt     int             `json:"attempt,omitempty"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Inputs      []inputMsg      `json:"inputs,omitempty"`
	TimeoutNS   int64           `json:"timeout_ns,omitempty"`
	AtMostOnce  bool            `json:"at_most_once,omitempty"`
	Priority    int             `json:"priority,omitempty"`
	Failure     *failureMsg     `json:"failure,omitempty"`
	Offset      int64           `json:"offset,omitempty"` // claimed: the action's offset
	Worker      string          `json:"worker,omitempty"` // claimed: who claimed it
}

type inputMsg struct {
	Name      string          `json:"name"`
	Output    json.RawMessage `json:"output,omitempty"`
	OutputB64 []byte          `json:"output_b64,omitempty"`
}

type failureMsg struct {
	Path    string `json:"path"`
	Action  string `json:"action,omitempty"`
	Message string `json:"message,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Others  int    `json:"others,omitempty"`
}

// actionKey is the key of an action's messages: "JOB/ACTION-ID".
func actionKey(id job.ID, actionID string) string { return string(id) + "/" + actionID }

func actionMessage(topic string, a job.Action) kafka.Message {
	m := actionMsg{V: wireFormat, Type: typeAction, Job: string(a.JobID), Incarnation: hexInc(a.Incarnation), ID: a.ID,
		Name: a.Name, Attempt: a.Attempt, Payload: json.RawMessage(a.Payload), TimeoutNS: int64(a.Timeout),
		AtMostOnce: a.AtMostOnce, Priority: a.Priority}
	if len(a.Payload) == 0 {
		m.Payload = nil
	}
	for _, in := range a.Inputs {
		im := inputMsg{Name: in.Name}
		im.Output, im.OutputB64 = blob(in.Output)
		m.Inputs = append(m.Inputs, im)
	}
	if f := a.Failure; f != nil {
		m.Failure = &failureMsg{Path: f.Path, Action: f.Action, Message: f.Message, Kind: f.Kind, Others: f.Others}
	}
	v, _ := json.Marshal(m)
	return kafka.Message{Topic: topic, Key: []byte(actionKey(a.JobID, a.ID)), Value: v, Headers: placeHeaders(a)}
}

func claimedMessage(topic string, a job.Action, offset int64, worker string) kafka.Message {
	v, _ := json.Marshal(actionMsg{V: wireFormat, Type: typeClaimed, Job: string(a.JobID), Incarnation: hexInc(a.Incarnation),
		ID: a.ID, Offset: offset, Worker: worker})
	return kafka.Message{Topic: topic, Key: []byte(actionKey(a.JobID, a.ID)), Value: v}
}

// outbound is a decoded action-topic message: an action, or a claim on
// one (claimed set, a.JobID, a.Incarnation and a.ID filled).
type outbound struct {
	a       job.Action
	claimed bool
	offset  int64 // claimed: the claimed action's offset
}

func decodeOutbound(key, value []byte) (outbound, error) {
	var m actionMsg
	if err := decodeStrict(value, &m); err != nil {
		return outbound{}, fmt.Errorf("value is not a baton action: %v", err)
	}
	if m.V != wireFormat {
		return outbound{}, fmt.Errorf("message format %d, want %d", m.V, wireFormat)
	}
	id := job.ID(m.Job)
	if err := id.Check(); err != nil {
		return outbound{}, err
	}
	inc, err := parseInc(m.Incarnation)
	if err != nil {
		return outbound{}, err
	}
	if _, _, err := job.SplitActionID(m.ID); err != nil {
		return outbound{}, err
	}
	if string(key) != actionKey(id, m.ID) {
		return outbound{}, fmt.Errorf("key %q, want %q", key, actionKey(id, m.ID))
	}
	a := job.Action{JobID: id, Incarnation: inc, ID: m.ID}
	switch m.Type {
	case typeClaimed:
		return outbound{a: a, claimed: true, offset: m.Offset}, nil
	case typeAction:
	default:
		return outbound{}, fmt.Errorf("unknown message type %q", m.Type)
	}
	if err := ast.Validate(ast.Act(m.Name, nil)); err != nil || m.Attempt < 1 {
		return outbound{}, fmt.Errorf("action %s: bad name %q or attempt %d", m.ID, m.Name, m.Attempt)
	}
	a.Name, a.Attempt, a.Timeout, a.AtMostOnce, a.Priority = m.Name, m.Attempt, time.Duration(m.TimeoutNS), m.AtMostOnce, m.Priority
	if len(m.Payload) > 0 {
		a.Payload = []byte(m.Payload)
	}
	for _, in := range m.Inputs {
		a.Inputs = append(a.Inputs, job.Input{Name: in.Name, Output: unblob(in.Output, in.OutputB64)})
	}
	if f := m.Failure; f != nil {
		a.Failure = &job.Failure{Path: f.Path, Action: f.Action, Message: f.Message, Kind: f.Kind, Others: f.Others}
	}
	return outbound{a: a}, nil
}

// stopMsg is a message of the stops topic; the job ID is its key.
type stopMsg struct {
	V           int      `json:"v"`
	Type        string   `json:"type"`
	Incarnation string   `json:"incarnation"`
	Actions     []string `json:"actions"`
}

func stopMessage(id job.ID, inc uint64, actions []string) kafka.Message {
	v, _ := json.Marshal(stopMsg{V: wireFormat, Type: typeStop, Incarnation: hexInc(inc), Actions: actions})
	return kafka.Message{Key: []byte(id), Value: v}
}

func decodeStop(key, value []byte) (id job.ID, inc uint64, actions []string, err error) {
	var m stopMsg
	if err := decodeStrict(value, &m); err != nil {
		return "", 0, nil, err
	}
	if m.V != wireFormat || m.Type != typeStop {
		return "", 0, nil, fmt.Errorf("not a stop notice (format %d, type %q)", m.V, m.Type)
	}
	inc, err = parseInc(m.Incarnation)
	if err != nil {
		return "", 0, nil, err
	}
	return job.ID(key), inc, m.Actions, nil
}

// headMsg is a job's head record in the state topic.
type headMsg struct {
	V           int    `json:"v"`
	Incarnation string `json:"incarnation"`
	Version     uint64 `json:"version"`
	Status      string `json:"status"`
	Settled     int    `json:"settled"`
	Total       int    `json:"total"`
	Dispatched  bool   `json:"dispatched"`
}

func headValue(j job.Job, dispatched bool) []byte {
	settled, total := j.Progress()
	v, _ := json.Marshal(headMsg{V: wireFormat, Incarnation: hexInc(j.Incarnation()), Version: j.Version(),
		Status: j.Status().String(), Settled: settled, Total: total, Dispatched: dispatched})
	return v
}

// claimMsg is a claim record's value.
type claimMsg struct {
	V         int       `json:"v"`
	Partition int       `json:"partition"`
	Owner     string    `json:"owner"`
	Epoch     string    `json:"epoch"`
	At        time.Time `json:"at"`
}

// size returns the bytes m takes in a record, overhead included.
func size(m kafka.Message) int {
	n := len(m.Key) + len(m.Value) + messageOverhead
	for _, h := range m.Headers {
		n += len(h.Key) + len(h.Value) + 8
	}
	return n
}
