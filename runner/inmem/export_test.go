package inmem

import "github.com/batonwf/baton/job"

// Waiting returns how many Waits for job id are blocked.
func (r *Runner) Waiting(id job.ID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiters[id].len()
}

// Workers returns how many actions r runs at once.
func (r *Runner) Workers() int { return r.o.Workers }
