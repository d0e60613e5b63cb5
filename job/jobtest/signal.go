package jobtest

import (
	"errors"
	"fmt"

	"github.com/batonwf/baton/job"
)

// parseSignal reads the clause
//
//	signal NAME ID [data=JSON] [at=TIME] [job=JOB]
//
// into a signal's result (job.SignalResult).
func (e *Env) parseSignal(rest []word, results *[]job.Result) error {
	if len(rest) < 2 {
		return errors.New("signal needs a name and an ID")
	}
	s := job.Signal{Name: rest[0].s, ID: rest[1].s}
	jobID := e.j.ID()
	for _, w := range rest[2:] {
		key, val, isOpt := w.option()
		switch {
		case isOpt && key == "data":
			s.Payload = []byte(val)
		case isOpt && key == "at":
			t, err := e.parseTime(val)
			if err != nil {
				return fmt.Errorf("at=%s: %v", val, err)
			}
			s.At = t
		case isOpt && key == "job":
			jobID = job.ID(val)
		default:
			return fmt.Errorf("signal takes a name, an ID, data=, at= and job=, got %q", w.s)
		}
	}
	*results = append(*results, job.SignalResult(jobID, s))
	return nil
}

// isSignal reports whether r is a signal's result.
func isSignal(r job.Result) bool {
	_, ok := r.AsSignal()
	return ok
}

// formatSignal writes the signal's result r as a script clause.
func (e *Env) formatSignal(r job.Result) string {
	s, _ := r.AsSignal()
	out := "signal " + quoteArg(s.Name) + " " + quoteArg(s.ID)
	if len(s.Payload) > 0 {
		out += " " + quoteValue("data", string(s.Payload))
	}
	if !s.At.IsZero() {
		out += " at=" + e.formatTime(s.At)
	}
	return out
}

// queueFull counts the signals dropped by a full queue, which a step
// holds (their IDs are seen from then on) and Ignored lists.
func queueFull(ig []job.Ignored) int {
	n := 0
	for _, i := range ig {
		if i.Reason == job.IgnoredQueueFull {
			n++
		}
	}
	return n
}
