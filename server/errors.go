package server

import (
	"errors"
	"fmt"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// storeProblem is the answer to a store's (or runner's) error about job id.
func (s *srv) storeProblem(err error, id job.ID, doing string) *problem {
	var p *problem
	switch {
	case errors.As(err, &p):
		return p
	case errors.Is(err, store.ErrNotFound):
		p = newProblem(CodeJobNotFound, fmt.Sprintf("job %s not found", id))
	case errors.Is(err, job.ErrCorrupt):
		p = newProblem(CodeJobDamaged, fmt.Sprintf("job %s is damaged in the store: %v", id, err))
	case s.isClosing():
		p = newProblem(CodeShuttingDown, fmt.Sprintf("the server is shutting down: %s job %s was not done", doing, id))
	default:
		p = newProblem(CodeStoreUnavailable, fmt.Sprintf("%s job %s: %v", doing, id, err))
	}
	return p.forJob(string(id))
}
