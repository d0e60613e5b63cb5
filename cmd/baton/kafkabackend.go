package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
	"github.com/batonwf/baton/store"
)

// kafkaBackend is the topics under a Kafka prefix: the restarters own
// the jobs, so a cancel or a delete goes to the one that owns the job,
// through a runner that neither restarts nor works.
type kafkaBackend struct {
	kj     *kafkaJobs
	empty  store.Deleter // the jobs when the prefix has no topics: none
	stderr io.Writer     // for the warning that no restarter runs
	log    *slog.Logger  // the runners'
}

var _ backend = (*kafkaBackend)(nil)

// openKafkaBackend connects to the brokers --kafka names and opens the
// prefix's topics; with create it makes those missing (worker, submit),
// without, a prefix without topics has no jobs.
func openKafkaBackend(ctx context.Context, k *kafkaFlags, create bool, stderr io.Writer, log *slog.Logger) (*kafkaBackend, error) {
	kj, err := k.open(ctx, log, create)
	if err != nil {
		return nil, withCode(engineExit(err), err)
	}
	return &kafkaBackend{kj: kj, empty: store.NewMemory(), stderr: stderr, log: log}, nil
}

func (b *kafkaBackend) where() string { return b.kj.f.where() }
func (b *kafkaBackend) hint() string  { return b.kj.f.hint() }

func (b *kafkaBackend) jobs() store.Store {
	if b.kj.st == nil {
		return b.empty
	}
	return b.kj.st
}

func (b *kafkaBackend) Close() error {
	b.kj.close()
	return nil
}

// canceller hands cancels to the restarters, and says when none runs.
func (b *kafkaBackend) canceller(ctx context.Context) (canceller, error) {
	if b.kj.st == nil {
		return noJobs{}, nil
	}
	r, stop, err := b.kj.client(b.log)
	if err != nil {
		return nil, err
	}
	b.kj.warnNoRestarter(ctx, b.stderr, "a cancel")
	return &runnerCanceller{r: r, st: b.kj.st, stop: stop}, nil
}

// deleter hands deletes to the restarters, and says when none runs.
func (b *kafkaBackend) deleter(ctx context.Context) (deleter, error) {
	if b.kj.st == nil {
		return storeDeleter{b.empty}, nil // no jobs to delete
	}
	r, stop, err := b.kj.client(b.log)
	if err != nil {
		return nil, err
	}
	b.kj.warnNoRestarter(ctx, b.stderr, "a delete")
	return runnerDeleter{r: r, stop: stop}, nil
}

// submitter hands jobs to the restarters, and says when none runs.
func (b *kafkaBackend) submitter(ctx context.Context) (submitter, error) {
	r, stop, err := b.kj.client(b.log)
	if err != nil {
		return nil, err
	}
	b.kj.warnNoRestarter(ctx, b.stderr, "the job")
	return &kafkaSubmitter{r: r, stop: stop, b: b}, nil
}

var _ applier = (*kafkaBackend)(nil)

// appliers is the number of restarters (-1 when the group cannot be
// described), and the error of a submit or a cancel sent while none
// runs.
func (b *kafkaBackend) appliers(ctx context.Context) (int, error) {
	n, err := b.kj.restarters(ctx)
	if err != nil {
		return -1, nil
	}
	return n, fmt.Errorf("no restarter runs in %s (group %s has no member), so nothing was sent: start one ('baton worker %s') and try again",
		b.where(), b.kj.restarterGroup(), b.hint())
}

// kafkaSubmitter submits through a runner that neither restarts nor
// works.
type kafkaSubmitter struct {
	r    *kafkarunner.Runner
	stop func()
	b    *kafkaBackend
}

func (s *kafkaSubmitter) submit(ctx context.Context, id job.ID, root ast.Node) error {
	if err := s.r.Submit(ctx, id, root); err != nil {
		return plainError{"kafka: ", err}
	}
	return nil
}

func (s *kafkaSubmitter) status(ctx context.Context, id job.ID) (api.Summary, error) {
	return summaries(s.r.Status)(ctx, id)
}

func (s *kafkaSubmitter) wait(ctx context.Context, id job.ID) (api.Job, error) {
	j, err := s.r.Wait(ctx, id)
	if err != nil {
		return api.Job{}, fmt.Errorf("job %s in %s: %w", id, s.b.where(), err)
	}
	return api.JobOf(j, true), nil
}

func (s *kafkaSubmitter) unserved(ctx context.Context, root ast.Node) string {
	missing, err := s.b.kj.unconsumed(ctx, root)
	if err != nil || len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("baton: no worker in %s consumes the topic of %s yet: the job waits for one ('baton worker %s' serves the built-in actions)",
		s.b.where(), quoteAll(missing), s.b.hint())
}

func (s *kafkaSubmitter) close() { s.stop() }

func (b *kafkaBackend) worker(o workerOptions) (workerRunner, error) {
	lease := o.claimLease
	if lease == 0 {
		lease = -1 // --claim-lease 0: never
	}
	r, err := kafkarunner.New(kafkarunner.Options{
		WorkerOptions: o.WorkerOptions,
		Store:         b.kj.st,
		Role:          kafkarunner.RoleAll,
		Capacity:      o.capacity,
		Limits:        o.limits,
		ClaimLease:    lease,
	})
	if err != nil {
		return nil, plainError{"kafka: ", err}
	}
	return kafkaWorker{r}, nil
}

// kafkaWorker is a restarter and a worker.
type kafkaWorker struct{ *kafkarunner.Runner }

func (w kafkaWorker) Run(ctx context.Context) error {
	if err := w.Runner.Run(ctx); err != nil {
		return plainError{"kafka: ", err}
	}
	return nil
}

func (kafkaWorker) role() string      { return ", as a restarter and a worker" }
func (w kafkaWorker) skipped() string { return skipped(w.Stats()) }

func (b *kafkaBackend) writeStatus(ctx context.Context, w io.Writer) error {
	return writeKafka(ctx, w, b)
}

// runnerDeleter deletes jobs through the restarter that owns each.
type runnerDeleter struct {
	r    *kafkarunner.Runner
	stop func()
}

func (d runnerDeleter) delete(ctx context.Context, id job.ID) error {
	err := d.r.Delete(ctx, id)
	return withCode(storeExit(err), err)
}

func (d runnerDeleter) close() { d.stop() }

// noJobs is the canceller of a prefix without topics, which has no job
// to cancel.
type noJobs struct{}

func (noJobs) cancel(_ context.Context, id job.ID, _ string) (string, error) {
	return "", fmt.Errorf("job %s: %w", id, store.ErrNotFound)
}

func (noJobs) signal(_ context.Context, id job.ID, _, _ string, _ json.RawMessage) (string, error) {
	return "", fmt.Errorf("job %s: %w", id, store.ErrNotFound)
}

func (noJobs) cancelNode(_ context.Context, id job.ID, _, _ string) (string, error) {
	return "", fmt.Errorf("job %s: %w", id, store.ErrNotFound)
}

func (noJobs) close() {}

// resume is not for Kafka (the command refuses --kafka first): a
// restarter that starts, or takes a partition over, dispatches again what
// its unfinished jobs miss.
func (b *kafkaBackend) resume(context.Context, *cli, []job.ID, resumeOptions) error {
	return fmt.Errorf("resume: not with --kafka: the restarters resume by themselves ('baton worker %s')", b.hint())
}

// listWorkers returns the members of the prefix's workers group, for
// 'baton serve --kafka' (GET /api/v1/workers): each with the name,
// capacity and join time it announced and the actions it serves. Busy is
// 0: the group tells who serves, not what runs.
func (b *kafkaBackend) listWorkers(ctx context.Context) ([]api.Worker, error) {
	if b.kj.st == nil {
		return []api.Worker{}, nil // no topics: no workers
	}
	infos, err := b.kj.st.Workers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.Worker, len(infos))
	for i, w := range infos {
		out[i] = api.Worker{Name: w.Name, Capacity: w.Capacity, Actions: w.Actions}
		if !w.Since.IsZero() {
			since := w.Since.UTC()
			out[i].Since = &since
		}
	}
	return out, nil
}

var _ workerLister = (*kafkaBackend)(nil)
