package placement_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/batonwf/baton/placement"
)

// allStates and allEvents include values outside the constants, so the
// table covers what a garbled registration or a bad call could pass.
var (
	allStates = []placement.State{placement.StateNone, placement.StateAvailable, placement.StateDraining, placement.StateDown, placement.StateQuarantined, 9}
	allEvents = []placement.Event{0, placement.EventRegister, placement.EventDrain, placement.EventUndrain, placement.EventDrained, placement.EventDrainTimeout, 9}
)

// TestTransitionTable runs every (state, live, event) through Transition
// and compares the whole table with testdata/transitions.txt, the table as
// the docs state it; then checks the rules that make it right whatever
// that file says, so -rewrite cannot bless a broken row.
func TestTransitionTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("# from      live   event          -> to         effect | error\n")
	for _, from := range allStates {
		for _, live := range []bool{false, true} {
			for _, ev := range allEvents {
				to, eff, err := placement.Transition(from, live, ev)
				row := fmt.Sprintf("%-11s %-6s %-14s -> ", from, liveWord(live), ev)
				if err != nil {
					row += "error: " + err.Error()
				} else {
					row += fmt.Sprintf("%-10s %s", to, eff)
				}
				b.WriteString(strings.TrimRight(row, " ") + "\n")
				checkTransitionRules(t, from, live, ev, to, eff, err)
			}
		}
	}
	golden(t, "transitions.txt", b.String())
}

func liveWord(live bool) string {
	if live {
		return "live"
	}
	return "down"
}

func checkTransitionRules(t *testing.T, from placement.State, live bool, ev placement.Event, to placement.State, eff placement.Effect, err error) {
	t.Helper()
	at := fmt.Sprintf("%s %s %s", from, liveWord(live), ev)
	stored := from == placement.StateNone || from == placement.StateAvailable || from == placement.StateDraining
	known := ev >= placement.EventRegister && ev <= placement.EventDrainTimeout
	switch {
	case !known:
		if !errors.Is(err, placement.ErrBadEvent) {
			t.Errorf("%s: an unknown event gives %v, want ErrBadEvent", at, err)
		}
	case !stored:
		if !errors.Is(err, placement.ErrBadState) {
			t.Errorf("%s: a derived or unknown state gives %v, want ErrBadState", at, err)
		}
	}
	if err != nil {
		if to != from || eff != 0 {
			t.Errorf("%s: an error must change nothing, got %s %s", at, to, eff)
		}
		return
	}
	if to != placement.StateNone && to != placement.StateAvailable && to != placement.StateDraining {
		t.Errorf("%s: moved to %s, which a registration never stores", at, to)
	}
	if (eff&placement.EffectRemove != 0) != (to == placement.StateNone) {
		t.Errorf("%s: -> %s %s: removal and StateNone go together", at, to, eff)
	}
	if from == placement.StateNone && ev != placement.EventRegister {
		t.Errorf("%s: only register leaves StateNone", at)
	}
	switch ev {
	case placement.EventRegister:
		if live {
			t.Errorf("%s: a live worker's name was given to a second process", at)
		}
		if from != placement.StateNone && (to != from || eff != 0) {
			t.Errorf("%s: a worker's process coming back must keep its state and pins, got %s %s", at, to, eff)
		}
	case placement.EventDrain:
		if to == placement.StateAvailable {
			t.Errorf("%s: a drain made the worker available", at)
		}
		if !live && eff != placement.EffectRemove|placement.EffectReleasePins {
			t.Errorf("%s: draining a down worker must remove it and release its pins, got %s", at, eff)
		}
		if live && eff&placement.EffectReleasePins != 0 {
			t.Errorf("%s: draining a live worker released its pins at once", at)
		}
	case placement.EventUndrain:
		if to != placement.StateAvailable || eff != placement.EffectLiftQuarantines {
			t.Errorf("%s: undrain must make it available and lift its quarantines, got %s %s", at, to, eff)
		}
	case placement.EventDrained:
		if from != placement.StateDraining || !live {
			t.Errorf("%s: only a live draining worker deregisters", at)
		}
	case placement.EventDrainTimeout:
		if to != placement.StateDraining || eff != placement.EffectReleasePins {
			t.Errorf("%s: a drain's timeout releases the pins and keeps draining, got %s %s", at, to, eff)
		}
	}
}

// Drain and undrain are idempotent: applied twice they give what once
// gives.
func TestTransitionIdempotentAdminEvents(t *testing.T) {
	for _, from := range []placement.State{placement.StateAvailable, placement.StateDraining} {
		for _, ev := range []placement.Event{placement.EventDrain, placement.EventUndrain} {
			once, _, err := placement.Transition(from, true, ev)
			if err != nil {
				t.Fatal(err)
			}
			twice, eff, err := placement.Transition(once, true, ev)
			if err != nil || twice != once || eff&placement.EffectRemove != 0 {
				t.Errorf("%s then %s twice: %s %s %v, want %s", from, ev, twice, eff, err, once)
			}
		}
	}
}

func TestStateNames(t *testing.T) {
	for _, s := range []placement.State{placement.StateAvailable, placement.StateDraining} {
		got, err := placement.ParseState(s.String())
		if err != nil || got != s {
			t.Errorf("ParseState(%q) = %v, %v", s.String(), got, err)
		}
	}
	for _, s := range []string{"", "down", "quarantined", "none", "Available"} {
		if _, err := placement.ParseState(s); err == nil {
			t.Errorf("ParseState(%q) accepted a state a registration never stores", s)
		}
	}
}
