package placement

import (
	"errors"
	"fmt"
)

// Key is what an allocator is asked to place: a key's hash, as a queue
// entry's route token carries it (so a worker allocates from an entry's
// name alone; the key itself is in the entry's data, unread), and whether
// it is a pin.
type Key struct {
	Hash uint64
	Pin  bool
}

// Candidate is a worker an allocator may answer: one that can run the
// action now, leaving its load aside (live, available, with handlers for
// the names the action needs, quarantined for none of them).
type Candidate struct {
	Worker string // its name
	Free   int    // its free slots for the action, by its published load
}

// Allocator places keys on workers. Every worker runs it on its own view
// and claims only when the answer is itself, so an allocation is persisted
// only by the worker it names; an allocator must therefore be
// deterministic: the same key and candidates give the same answer in
// every process.
//
// Allocate is given the candidates in the key's preference order (Rank),
// never empty, and returns one of them, and whether the allocation is to
// be stored (a pin always is). A soft key's holder may be busy: Decide
// then spills its action after the key's wait, whatever the allocator
// said. An answer that is not among the candidates is an error: Decide
// reports it (Decision.Err) and lets Rendezvous answer instead.
type Allocator interface {
	Allocate(key Key, candidates []Candidate) (worker string, persist bool, err error)
}

// ErrNoCandidate is returned by Rendezvous.Allocate given no candidate.
var ErrNoCandidate = errors.New("placement: no candidate")

// Rendezvous is the default Allocator, weighted rendezvous hashing: a soft
// key goes to its first candidate and is not stored (any process computes
// it again from the registry); a pin goes to its first candidate with a
// free slot (the first candidate if none has one) and is stored.
type Rendezvous struct{}

var _ Allocator = Rendezvous{}

// Allocate implements Allocator.
func (Rendezvous) Allocate(key Key, candidates []Candidate) (string, bool, error) {
	if len(candidates) == 0 {
		return "", false, ErrNoCandidate
	}
	if !key.Pin {
		return candidates[0].Worker, false, nil
	}
	for _, c := range candidates {
		if c.Free > 0 {
			return c.Worker, true, nil
		}
	}
	return candidates[0].Worker, true, nil
}

// allocate asks a (nil: Rendezvous) and checks its answer.
func allocate(a Allocator, key Key, cs []Candidate) (worker string, persist bool, err error) {
	if a == nil {
		return Rendezvous{}.Allocate(key, cs)
	}
	w, p, err := a.Allocate(key, cs)
	if err == nil {
		for _, c := range cs {
			if c.Worker == w {
				if key.Pin {
					p = true // a pin is always stored
				}
				return w, p, nil
			}
		}
		err = fmt.Errorf("placement: allocator answered %q, not a candidate", w)
	} else {
		err = fmt.Errorf("placement: allocator: %w", err)
	}
	w, p, _ = Rendezvous{}.Allocate(key, cs)
	return w, p, err
}
