package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Delete deletes job id and its history, finished or not, as
// store.Deleter says: only the restarter that owns the job's partition
// writes it, so the request goes to that restarter (through the
// restarter topic, or to this runner's own loop), which stops the job's
// actions in flight, if any, and writes tombstones for the job's records
// (compaction then drops them). Delete returns once the job is gone, as
// this runner's store reads it; with no restarter running it waits for
// one until ctx ends. A missing job is an error wrapping
// store.ErrNotFound; a damaged one is deleted all the same.
func (r *Runner) Delete(ctx context.Context, id job.ID) error {
	if err := r.usable(); err != nil {
		return err
	}
	if err := id.Check(); err != nil {
		return err
	}
	var inc uint64 // 0: a damaged job, whichever incarnation it is
	j, err := r.st.Load(ctx, id)
	switch {
	case err == nil:
		inc = j.Incarnation()
	case !errors.Is(err, job.ErrCorrupt):
		return fmt.Errorf("job %s: %w", id, err)
	}
	in := input{in: inbound{id: id, kind: typeDelete, inc: inc}, offset: -1}
	if err := r.send(ctx, []input{in}, []kafka.Message{deleteMessage(id, inc)}); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("job %s: delete: %w", id, err)
	}
	return r.watch(ctx, id, func(j job.Job, err error) (bool, error) {
		switch {
		case errors.Is(err, store.ErrNotFound):
			return true, nil
		case err == nil:
			return inc != 0 && j.Incarnation() != inc, nil // made again since
		case errors.Is(err, job.ErrCorrupt):
			return false, nil // still there
		}
		return false, err
	})
}

// deleteJob applies a delete request in the loop of the job's partition.
func (r *Runner) deleteJob(ctx context.Context, log *slog.Logger, l *loop, in inbound) error {
	j, err := r.st.Load(ctx, in.id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		log.Info("delete of a job the partition does not hold: nothing to do", "job", in.id)
		return err
	case err == nil && in.inc != 0 && j.Incarnation() != in.inc:
		r.stats.stale.Add(1)
		log.Info("delete of an earlier incarnation of its job: ignored", "job", in.id,
			"incarnation", hexInc(in.inc), "job incarnation", hexInc(j.Incarnation()))
		return fmt.Errorf("job %s: %w", in.id, errStale)
	case err == nil && !j.Done():
		if acts := j.Outstanding(); len(acts) > 0 {
			r.stopActions(ctx, j, acts)
		}
	case err != nil && !errors.Is(err, job.ErrCorrupt):
		return err
	}
	if err := store.Delete(ctx, r.st, in.id); err != nil {
		return err
	}
	l.disarm(in.id)
	log.Info("job deleted", "job", in.id)
	return nil
}
