package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/placement"
)

// The control topic, PREFIX.workers (one partition, compacted), holds
// what is said of each worker by name, so that it outlives the process:
//
//	NAME        its admin state, written by Store.Drain and Store.Undrain:
//	            {"v":1,"type":"admin","state":"draining","at":TIME}
//	NAME/load   what it runs and its counters, written by the worker when
//	            they changed, at most once a second:
//	            {"v":1,"type":"load","capacity":4,"running":2,
//	             "names":{"ship":{"running":1,"succeeded":10,"failed":2,
//	             "quarantined_until":TIME}},"at":TIME}
//
// A null value (a tombstone) deletes the record: a drained worker deletes
// both of its own when it exits.

// controlTopic is the control topic's name.
func (c *Config) controlTopic() string { return c.Prefix + ".workers" }

// controlSpec is the control topic's spec: compacted, one partition (so
// that one read in order gives the latest record of every key), with
// segments rolled every 10 minutes and compacted once a tenth of the log
// is dirty, so that what a runner reads at its start stays near two
// records per worker (busy workers write a load record a second).
func (a *admin) controlSpec() topicSpec {
	return topicSpec{name: a.cfg.controlTopic(), partitions: 1, compacted: true,
		configs: map[string]string{"cleanup.policy": "compact", "segment.ms": "600000", "min.cleanable.dirty.ratio": "0.1"}}
}

// loadSuffix ends the key of a worker's load record.
const loadSuffix = "/load"

// controlMsg is a control-topic record's value.
type controlMsg struct {
	V        int                 `json:"v"`
	Type     string              `json:"type"`
	State    string              `json:"state,omitempty"`
	Capacity int                 `json:"capacity,omitempty"`
	Running  int                 `json:"running,omitempty"`
	Names    map[string]nameLoad `json:"names,omitempty"`
	At       time.Time           `json:"at"`
}

// nameLoad is a worker's load and counters for one action name.
type nameLoad struct {
	Running     int        `json:"running,omitempty"`
	Succeeded   uint64     `json:"succeeded,omitempty"`
	Failed      uint64     `json:"failed,omitempty"`
	Quarantined *time.Time `json:"quarantined_until,omitempty"`
}

// ControlState is what the control topic says of one worker.
type ControlState struct {
	// Name is the worker's name.
	Name string
	// State is its admin state: placement.StateAvailable,
	// placement.StateDraining, or placement.StateNone when only its
	// load was written.
	State placement.State
	// Capacity and Running are from its last load record (zero if none);
	// Load its counters per action name; LoadAt when it wrote them, by
	// its clock.
	Capacity, Running int
	Load              map[string]placement.NameLoad
	// Quarantined maps an action name to when its quarantine for it ends,
	// as its last load record said.
	Quarantined map[string]time.Time
	LoadAt      time.Time
}

// errControl is wrapped by decodeControl's errors.
var errControl = errors.New("kafka: control record")

// decodeControl reads a control record: the worker it is about, whether
// it is a load record, and what it says; a tombstone returns a nil msg.
func decodeControl(key, value []byte) (name string, load bool, m *controlMsg, err error) {
	k := string(key)
	name, load = strings.CutSuffix(k, loadSuffix)
	if name == "" || strings.Contains(name, "/") {
		return "", false, nil, fmt.Errorf("%w: key %q is not a worker's name", errControl, clip(key))
	}
	if len(value) == 0 {
		return name, load, nil, nil
	}
	var cm controlMsg
	dec := json.NewDecoder(strings.NewReader(string(value)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cm); err != nil {
		return "", false, nil, fmt.Errorf("%w: key %q: %v", errControl, k, err)
	}
	switch {
	case cm.V != wireFormat:
		return "", false, nil, fmt.Errorf("%w: key %q: format %d, want %d", errControl, k, cm.V, wireFormat)
	case load && cm.Type != "load", !load && cm.Type != "admin":
		return "", false, nil, fmt.Errorf("%w: key %q: type %q", errControl, k, cm.Type)
	case !load:
		if st, err := placement.ParseState(cm.State); err != nil || st == placement.StateNone {
			return "", false, nil, fmt.Errorf("%w: key %q: state %q", errControl, k, cm.State)
		}
	case cm.Capacity < 0 || cm.Running < 0:
		return "", false, nil, fmt.Errorf("%w: key %q: negative capacity or running", errControl, k)
	}
	return name, load, &cm, nil
}

// controlView is the control topic as read so far: the latest record of
// every worker.
type controlView map[string]*ControlState

// apply applies one record; a record that does not parse is an error,
// and changes nothing.
func (v controlView) apply(key, value []byte) error {
	name, load, m, err := decodeControl(key, value)
	if err != nil {
		return err
	}
	cs := v[name]
	if cs == nil {
		cs = &ControlState{Name: name}
	}
	switch {
	case m == nil && load:
		cs.Capacity, cs.Running, cs.Load, cs.Quarantined, cs.LoadAt = 0, 0, nil, nil, time.Time{}
	case m == nil:
		cs.State = placement.StateNone
	case load:
		cs.Capacity, cs.Running, cs.LoadAt = m.Capacity, m.Running, m.At
		cs.Load, cs.Quarantined = map[string]placement.NameLoad{}, map[string]time.Time{}
		for n, nl := range m.Names {
			cs.Load[n] = placement.NameLoad{Running: nl.Running, Succeeded: nl.Succeeded, Failed: nl.Failed}
			if nl.Quarantined != nil {
				cs.Quarantined[n] = *nl.Quarantined
			}
		}
	default:
		cs.State, _ = placement.ParseState(m.State)
	}
	if cs.State == placement.StateNone && cs.LoadAt.IsZero() {
		delete(v, name)
		return nil
	}
	v[name] = cs
	return nil
}

func adminMessage(name string, st placement.State, at time.Time) kafka.Message {
	v, _ := json.Marshal(controlMsg{V: wireFormat, Type: "admin", State: st.String(), At: at.UTC()})
	return kafka.Message{Key: []byte(name), Value: v}
}

func loadMessage(name string, capacity int, names map[string]nameLoad, at time.Time) kafka.Message {
	m := controlMsg{V: wireFormat, Type: "load", Capacity: capacity, Names: names, At: at.UTC()}
	for _, nl := range names {
		m.Running += nl.Running
	}
	v, _ := json.Marshal(m)
	return kafka.Message{Key: []byte(name + loadSuffix), Value: v}
}

// tombstones are the records that delete what the control topic says of
// a worker.
func tombstones(name string) []kafka.Message {
	return []kafka.Message{{Key: []byte(name)}, {Key: []byte(name + loadSuffix)}}
}

// controlWriter returns the store's writer of the control topic, once it
// exists (made, or checked, now).
func (s *Store) controlWriter(ctx context.Context) (*producer, error) {
	if _, err := s.adm.ensure(ctx, s.adm.controlSpec()); err != nil {
		return nil, err
	}
	return s.cw, nil
}

// Control reads the control topic to its end and returns what it says
// of each worker, and how many records did not parse (each logged). A
// prefix whose control topic does not exist has none.
func (s *Store) Control(ctx context.Context) (map[string]ControlState, int, error) {
	v, bad, _, err := s.readControl(ctx, 0, nil)
	if err != nil {
		return nil, 0, err
	}
	out := make(map[string]ControlState, len(v))
	for n, cs := range v {
		out[n] = *cs
	}
	return out, bad, nil
}

// readControl reads the control topic from offset from to its end into
// v (a new view if nil), and returns it, the records that did not parse
// and the offset after the last one read. A control topic that does not
// exist reads as empty.
func (s *Store) readControl(ctx context.Context, from int64, v controlView) (controlView, int, int64, error) {
	if v == nil {
		v = controlView{}
	}
	topic := s.cfg.controlTopic()
	// Checked (made, without Config.NoCreate) first, so that the
	// client's metadata waits for it.
	var missing *MissingTopicsError
	if _, err := s.adm.ensure(ctx, s.adm.controlSpec()); errors.As(err, &missing) {
		return v, 0, from, nil
	} else if err != nil {
		return nil, 0, from, err
	}
	end, err := s.endOffset(ctx, topic, 0)
	if err != nil {
		return nil, 0, from, err
	}
	bad := 0
	next, err := s.readRange(ctx, topic, 0, from, end, func(off int64, m kafka.Message) {
		if err := v.apply(m.Key, m.Value); err != nil {
			bad++
			s.log.Warn("malformed record on the control topic: skipped", "topic", topic, "offset", off, "err", err)
		}
	})
	return v, bad, next, err
}

// UnknownWorkerError is the error of Drain and Undrain for a name that
// is neither a live worker nor in the control topic.
type UnknownWorkerError struct {
	Name  string
	Known []string // the workers' names, sorted
}

func (e *UnknownWorkerError) Error() string {
	known := "none"
	if len(e.Known) > 0 {
		known = strings.Join(e.Known, ", ")
	}
	return fmt.Sprintf("kafka: no worker is named %q (known: %s)", e.Name, known)
}

// Is makes errors.Is(err, placement.ErrUnknownWorker) true.
func (e *UnknownWorkerError) Is(target error) bool { return target == placement.ErrUnknownWorker }

// Drain marks worker name draining in the control topic. The worker, if
// it runs, stops taking actions, finishes those it runs, commits, leaves
// its groups and exits (Run returns nil), deleting its records. A worker
// that is not live has its records deleted at once (it is removed). An
// unknown name is an *UnknownWorkerError.
func (s *Store) Drain(ctx context.Context, name string) error {
	return s.setState(ctx, name, placement.EventDrain)
}

// Undrain marks worker name available in the control topic. A worker
// still draining goes on draining: it had begun to leave (see Drain). An
// unknown name is an *UnknownWorkerError.
func (s *Store) Undrain(ctx context.Context, name string) error {
	return s.setState(ctx, name, placement.EventUndrain)
}

func (s *Store) setState(ctx context.Context, name string, ev placement.Event) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	live, err := s.Workers(ctx)
	if err != nil {
		return err
	}
	v, _, _, err := s.readControl(ctx, 0, nil)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	isLive := false
	for _, w := range live {
		known[w.Name] = true
		isLive = isLive || w.Name == name
	}
	for n := range v {
		known[n] = true
	}
	if !known[name] {
		return &UnknownWorkerError{Name: name, Known: slices.Sorted(maps.Keys(known))}
	}
	from := placement.StateAvailable
	if cs := v[name]; cs != nil && cs.State == placement.StateDraining {
		from = placement.StateDraining
	}
	to, eff, err := placement.Transition(from, isLive, ev)
	if err != nil {
		return fmt.Errorf("kafka: worker %s: %w", name, err)
	}
	w, err := s.controlWriter(ctx)
	if err != nil {
		return err
	}
	msgs := []kafka.Message{adminMessage(name, to, time.Now())}
	if eff&placement.EffectRemove != 0 {
		msgs = tombstones(name)
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		return fmt.Errorf("kafka: worker %s: write to %s: %w", name, s.cfg.controlTopic(), writeError(err))
	}
	return nil
}
