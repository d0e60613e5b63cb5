package server

import (
	"net/http"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

var errCorrupt = job.ErrCorrupt

// statJob returns the version of job id as stored.
func (s *srv) statJob(r *http.Request, id job.ID) (uint64, error) {
	in, err := store.Stat(r.Context(), s.st, id)
	if err != nil {
		return 0, s.storeProblem(err, id, "load")
	}
	if in.Damaged != nil {
		return 0, s.storeProblem(in.Damaged, id, "load")
	}
	return in.Version, nil
}

// waitPast waits until job id is past version from, wait has passed, the
// request ends or the server closes. Only a store error is an error.
func (s *srv) waitPast(r *http.Request, id job.ID, from uint64, wait time.Duration) error {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	tick := time.NewTicker(s.poll)
	defer tick.Stop()
	for {
		var changed <-chan struct{}
		stop := func() {}
		if s.notifier != nil {
			changed, stop = s.notifier.Watch(id)
		}
		v, err := s.statJob(r, id)
		if err != nil || v > from {
			stop()
			return err
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-timer.C:
			stop()
			return nil
		case <-r.Context().Done():
			stop()
			return nil
		case <-s.closing:
			stop()
			return nil
		}
		stop()
	}
}
