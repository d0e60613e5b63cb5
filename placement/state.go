package placement

import (
	"errors"
	"fmt"
	"strings"
)

// State is a worker's state. A registration stores StateAvailable or
// StateDraining (its admin state, changed only by the events of
// Transition); StateNone is no registration at all. StateDown and
// StateQuarantined are derived (Worker.Status), never stored.
type State uint8

const (
	// StateNone: no registration (or one that did not parse).
	StateNone State = iota
	// StateAvailable: the worker takes work.
	StateAvailable
	// StateDraining: the worker takes only its pins' actions, and leaves
	// for good once nothing runs and it holds no pin.
	StateDraining
	// StateDown (derived): the worker's live node is gone.
	StateDown
	// StateQuarantined (derived): live and available, and quarantined for
	// at least one action name.
	StateQuarantined
)

var stateNames = [...]string{"none", "available", "draining", "down", "quarantined"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", s)
}

// ParseState returns the stored state named s ("available" or
// "draining"), as a registration holds it.
func ParseState(s string) (State, error) {
	switch s {
	case "available":
		return StateAvailable, nil
	case "draining":
		return StateDraining, nil
	}
	return StateNone, fmt.Errorf("placement: unknown worker state %q (want available or draining)", s)
}

// Event is what happens to a worker's registration.
type Event uint8

const (
	// EventRegister: a process starts under the worker's name.
	EventRegister Event = iota + 1
	// EventDrain: `baton drain NAME`.
	EventDrain
	// EventUndrain: `baton undrain NAME`.
	EventUndrain
	// EventDrained: the draining worker runs nothing and holds no pin,
	// and deregisters.
	EventDrained
	// EventDrainTimeout: a draining worker's --timeout has passed.
	EventDrainTimeout
)

var eventNames = [...]string{"", "register", "drain", "undrain", "drained", "drain-timeout"}

func (e Event) String() string {
	if e > 0 && int(e) < len(eventNames) {
		return eventNames[e]
	}
	return fmt.Sprintf("Event(%d)", e)
}

// Effect is what a transition asks of the runner besides the new state,
// done in the same write as the state where the runner can (on ZooKeeper,
// one multi-op).
type Effect uint8

const (
	// EffectRemove: delete the registration (the worker leaves for good).
	EffectRemove Effect = 1 << iota
	// EffectReleasePins: delete the worker's pins, so they move.
	EffectReleasePins
	// EffectLiftQuarantines: delete the worker's quarantines.
	EffectLiftQuarantines
)

func (e Effect) String() string {
	if e == 0 {
		return "-"
	}
	var parts []string
	for _, f := range []struct {
		e    Effect
		name string
	}{{EffectRemove, "remove"}, {EffectReleasePins, "release-pins"}, {EffectLiftQuarantines, "lift-quarantines"}} {
		if e&f.e != 0 {
			parts = append(parts, f.name)
			e &^= f.e
		}
	}
	if e != 0 {
		parts = append(parts, fmt.Sprintf("Effect(%#x)", uint8(e)))
	}
	return strings.Join(parts, "+")
}

// Errors of Transition. Each means the event changes nothing.
var (
	// ErrUnknownWorker: the event names a worker that is not registered.
	ErrUnknownWorker = errors.New("placement: unknown worker")
	// ErrNameTaken: a second process would start under the name of a
	// live worker.
	ErrNameTaken = errors.New("placement: worker name taken by a live process")
	// ErrNotDraining: a drain's end or timeout for a worker that is not
	// draining.
	ErrNotDraining = errors.New("placement: worker is not draining")
	// ErrDown: the event needs a live worker (only the worker itself
	// deregisters once drained).
	ErrDown = errors.New("placement: worker is down")
	// ErrBadState: the state given is not one a registration stores.
	ErrBadState = errors.New("placement: not a stored state")
	// ErrBadEvent: the event is not one of the Event constants.
	ErrBadEvent = errors.New("placement: unknown event")
)

// Transition returns the state a registration in state from moves to on
// the event, given whether the worker is live, and what the runner must
// do besides. The table (placement's docs and testdata/transitions.txt
// hold it whole; a test checks every row):
//
//   - register: a new name becomes available; a down worker's process
//     coming back keeps its state (and, within its grace, its pins); a
//     live worker's name is refused (ErrNameTaken), also when its
//     registration is missing or garbled (StateNone) but its live node
//     is there.
//   - drain: an available live worker starts draining (draining again
//     changes nothing); a down worker is removed at once and its pins
//     released.
//   - undrain: the worker becomes available and its quarantines are
//     lifted, live or down.
//   - drained: a live draining worker is removed.
//   - drain-timeout: a draining worker's pins are released; it keeps
//     draining until what runs has ended.
//
// from must be StateNone, StateAvailable or StateDraining (a derived or
// unknown state is ErrBadState); every error changes nothing.
func Transition(from State, live bool, ev Event) (State, Effect, error) {
	if ev < EventRegister || ev > EventDrainTimeout {
		return from, 0, fmt.Errorf("%w %d", ErrBadEvent, ev)
	}
	switch from {
	case StateNone:
		switch {
		case ev != EventRegister:
			return from, 0, ErrUnknownWorker
		case live: // a live process under a name whose registration is garbled
			return from, 0, ErrNameTaken
		}
		return StateAvailable, 0, nil
	case StateAvailable, StateDraining:
	default:
		return from, 0, fmt.Errorf("%w: %s", ErrBadState, from)
	}
	switch ev {
	case EventRegister:
		if live {
			return from, 0, ErrNameTaken
		}
		return from, 0, nil
	case EventDrain:
		if !live {
			return StateNone, EffectRemove | EffectReleasePins, nil
		}
		return StateDraining, 0, nil
	case EventUndrain:
		return StateAvailable, EffectLiftQuarantines, nil
	case EventDrained:
		if from != StateDraining {
			return from, 0, ErrNotDraining
		}
		if !live {
			return from, 0, ErrDown
		}
		return StateNone, EffectRemove, nil
	default: // EventDrainTimeout
		if from != StateDraining {
			return from, 0, ErrNotDraining
		}
		return StateDraining, EffectReleasePins, nil
	}
}
