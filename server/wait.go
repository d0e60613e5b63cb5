package server

import (
	"errors"
	"net/http"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server/live"
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

// waitStep waits, for the history route, until job id has a step after
// version from, wait has passed, the request ends or the server shuts
// down; it shares the job's watcher with the job's streams. Only a store
// error is an error.
func (s *srv) waitStep(r *http.Request, id job.ID, from uint64, wait time.Duration) error {
	if _, err := s.hub.WaitStep(r.Context(), id, from, wait); err != nil && !errors.Is(err, live.ErrShutdown) {
		return s.storeProblem(err, id, "wait for")
	}
	return nil
}
