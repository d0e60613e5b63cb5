package main

// How the commands read jobs: as the API's values (package api), whether
// the store is here (storeView, over backend.jobs) or behind 'baton
// serve' (serverBackend, over package client). status, history, inspect,
// cancel, delete and submit --wait print their text from these values
// only (describe.go), so the same job prints the same text either way,
// and --json prints the values themselves, as the API answers them.

import (
	"context"
	"fmt"
	"io"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/internal/render"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// viewer reads a backend's jobs as the API's values. Its errors name the
// job and the store (jobError).
type viewer interface {
	// viewJob returns job id with its nodes, now (version 0) or at
	// version.
	viewJob(ctx context.Context, id job.ID, version uint64) (api.Job, error)
	// viewSummary returns job id now, without its nodes.
	viewSummary(ctx context.Context, id job.ID) (api.Summary, error)
	// viewHistory returns every step of job id.
	viewHistory(ctx context.Context, id job.ID) (api.History, error)
	// viewGraph returns the drawing of job id (format dot, mermaid or
	// svg), now (version 0) or at version.
	viewGraph(ctx context.Context, id job.ID, version uint64, format string) (string, error)
	// viewList returns up to limit jobs whose IDs start with prefix,
	// after the ID after, sorted by ID.
	viewList(ctx context.Context, prefix string, after job.ID, limit int) ([]api.Summary, error)
}

// view returns how to read b's jobs: b itself when it reads them so (a
// server), else its store.
func view(b backend) viewer {
	if v, ok := b.(viewer); ok {
		return v
	}
	return storeView{b}
}

// storeView reads the jobs of a backend's store.
type storeView struct{ b backend }

func (v storeView) viewJob(ctx context.Context, id job.ID, version uint64) (api.Job, error) {
	j, err := loadJobAt(ctx, v.b, id, version)
	if err != nil {
		return api.Job{}, err
	}
	out := api.JobOf(j, true)
	if version == 0 {
		// A past version is the job as History.At made it, no more.
		out.Summary = v.stored(ctx, out.Summary)
	}
	return out, nil
}

// stored adds to sm the times of the job's first and last write, where
// the store tells them, as the server does: the CLI's JSON against a
// store is the API's, byte for byte.
func (v storeView) stored(ctx context.Context, sm api.Summary) api.Summary {
	if in, err := store.Stat(ctx, v.b.jobs(), job.ID(sm.ID)); err == nil {
		sm = sm.WithInfo(in)
	}
	return sm
}

func (v storeView) viewGraph(ctx context.Context, id job.ID, version uint64, format string) (string, error) {
	j, err := loadJobAt(ctx, v.b, id, version)
	if err != nil {
		return "", err
	}
	switch format {
	case "dot":
		return render.Dot(j), nil
	case "mermaid":
		return render.Mermaid(j), nil
	}
	out, err := render.SVG(j)
	if err != nil {
		return "", fmt.Errorf("job %s: %v", id, err)
	}
	return out, nil
}

// loadJobAt loads job id from b's store, now (version 0) or as it was at
// version, with a message that names the job and the store.
func loadJobAt(ctx context.Context, b backend, id job.ID, version uint64) (job.Job, error) {
	if version == 0 {
		return loadJob(ctx, b, id)
	}
	h, err := loadHistory(ctx, b, id)
	if err != nil {
		return job.Job{}, err
	}
	first, last := h.Origin.Version(), h.Origin.Version()+uint64(len(h.Steps))
	if version < first || version > last {
		return job.Job{}, versionError(b, id, first, last, version)
	}
	j, err := h.At(version)
	return j, jobError(b, err, id)
}

func (v storeView) viewSummary(ctx context.Context, id job.ID) (api.Summary, error) {
	j, err := loadJob(ctx, v.b, id)
	if err != nil {
		return api.Summary{}, err
	}
	return v.stored(ctx, api.SummaryOf(j)), nil
}

func (v storeView) viewHistory(ctx context.Context, id job.ID) (api.History, error) {
	h, err := loadHistory(ctx, v.b, id)
	if err != nil {
		return api.History{}, err
	}
	out, err := api.HistoryOf(h, 0, 0)
	if err != nil {
		return api.History{}, fmt.Errorf("job %s in %s: %v", id, v.b.where(), err)
	}
	return out, nil
}

func (v storeView) viewList(ctx context.Context, prefix string, after job.ID, limit int) ([]api.Summary, error) {
	infos, err := store.List(ctx, v.b.jobs(), store.Query{Prefix: prefix, After: after, Limit: limit})
	if err != nil {
		return nil, withCode(storeExit(err), fmt.Errorf("list jobs in %s: %v", v.b.where(), err))
	}
	out := make([]api.Summary, len(infos))
	for i, in := range infos {
		out[i] = api.SummaryOfInfo(in)
	}
	return out, nil
}

// versionError says that job id has no version v.
func versionError(b backend, id job.ID, first, last, v uint64) error {
	return fmt.Errorf("job %s in %s has versions %d to %d, not %d", id, b.where(), first, last, v)
}

// writeJSON prints v as the API answers it (api.Marshal), so that --json
// prints the API's bytes.
func writeJSON(w io.Writer, v any) error {
	b, err := api.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
