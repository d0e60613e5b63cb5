package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/batonwf/baton/api"
)

// history is GET /api/v1/jobs/{id}/history?from=V&limit=N&wait=D. With
// wait, when no step follows from, it waits up to D for one, on the hub's
// watcher of the job (shared with its event streams: woken by the
// runner's notices, or polling that one job).
func (s *srv) history(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	from, err := intParam(r, "from", 0, 0, 1<<62)
	if err != nil {
		return err
	}
	limit, err := intParam(r, "limit", defaultLimit, 1, maxLimit)
	if err != nil {
		return err
	}
	var wait time.Duration
	if v := r.URL.Query().Get("wait"); v != "" {
		if wait, err = time.ParseDuration(v); err != nil || wait < 0 || wait > MaxWait {
			return newProblem(CodeBadQuery, fmt.Sprintf("query parameter wait=%q: want a duration from 0s to %s, like 10s", v, MaxWait))
		}
	}
	ctx := r.Context()
	if wait > 0 {
		if err := s.waitStep(r, id, uint64(from), wait); err != nil {
			return err
		}
	}
	h, err := s.historian.History(ctx, id)
	if err != nil {
		return s.storeProblem(err, id, "load the history of")
	}
	out, err := api.HistoryOf(h, uint64(from), int(limit))
	if err != nil {
		return s.storeProblem(fmt.Errorf("%w: %v", errCorrupt, err), id, "replay")
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
