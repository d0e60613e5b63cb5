package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

// boltBackend is a bolt store file: this process writes it, so a cancel
// or a delete is a commit to the file.
type boltBackend struct {
	st   *bolt.Store
	path string
}

var _ backend = (*boltBackend)(nil)

// openBoltBackend opens the store file --store names, with mode; with
// retain > 0 a runner on it deletes the settled jobs older than that.
func (c *cli) openBoltBackend(storeArg string, mode openMode, retain time.Duration) (*boltBackend, error) {
	st, path, err := c.openStore(storeArg, mode, retain)
	if err != nil {
		return nil, withCode(storeExit(err), err)
	}
	return &boltBackend{st: st, path: path}, nil
}

func (b *boltBackend) where() string                                { return b.path }
func (b *boltBackend) hint() string                                 { return "--store " + b.path }
func (b *boltBackend) jobs() store.Store                            { return b.st }
func (b *boltBackend) writeStatus(context.Context, io.Writer) error { return nil }
func (b *boltBackend) Close() error                                 { return b.st.Close() }

// local returns a runner of o's actions in this process, on the file:
// 'baton run', 'baton resume' and 'baton serve' run their jobs with it.
// It resumes nothing by itself (each command names its jobs); after
// Ctrl-C it lets the actions in flight finish for drainTimeout.
func (b *boltBackend) local(o workerOptions) (*inmem.Runner, error) {
	o.DrainTimeout = drainTimeout
	var st store.Store = b.st
	if o.timed != nil {
		st = o.timed(st)
	}
	return inmem.New(inmem.Options{
		WorkerOptions: o.WorkerOptions,
		Store:         st,
		NoResume:      true,
	})
}

// errNoWorkers is a store file's answer to what needs workers: 'baton
// run' and 'baton resume' run their jobs themselves.
var errNoWorkers = errors.New("a store file has no workers: 'baton run' and 'baton resume' run its jobs")

func (b *boltBackend) submitter(context.Context) (submitter, error) { return nil, errNoWorkers }
func (b *boltBackend) worker(workerOptions) (workerRunner, error)   { return nil, errNoWorkers }

func (b *boltBackend) canceller(context.Context) (canceller, error) { return b, nil }
func (b *boltBackend) deleter(context.Context) (deleter, error)     { return storeDeleter{b.st}, nil }
func (b *boltBackend) close()                                       {}

// cancel commits the cancel; the finally blocks it leaves wait for
// 'baton resume'.
func (b *boltBackend) cancel(ctx context.Context, id job.ID, reason string) (string, error) {
	j, err := b.st.Load(ctx, id)
	if err != nil {
		return "", withCode(storeExit(err), err)
	}
	// Stamped, as the runners stamp theirs: the job keeps when it was
	// cancelled, and its clock (and retention) counts from the cancel.
	res := job.CancelResult(id, reason)
	res.At = time.Now().UTC()
	tr, err := job.Restart(j, []job.Result{res})
	if err == nil {
		err = store.Commit(ctx, b.st, tr)
	}
	if err != nil {
		return "", withCode(storeExit(err), err)
	}
	if tr.Job.Done() {
		return fmt.Sprintf("job %s cancelled at v%d", j.ID(), tr.Job.Version()), nil
	}
	return fmt.Sprintf("job %s cancelled at v%d; its finally blocks have still to run: baton resume --store %s %s",
		j.ID(), tr.Job.Version(), b.path, j.ID()), nil
}

// signal applies the signal here; the actions it lets start wait for
// 'baton resume'.
func (b *boltBackend) signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) (string, error) {
	sg, err := runner.NewSignal(id, name, sigID, payload, time.Now())
	if err != nil {
		return "", err
	}
	j, err := b.st.Load(ctx, id)
	if err != nil {
		return "", withCode(storeExit(err), err)
	}
	if seen, err := runner.CheckSignalTo(j, name, sigID, "signal"); err != nil {
		return "", err
	} else if seen {
		return signalLine(j, name, sigID), nil // sent before: changes nothing
	}
	tr, err := job.Restart(j, []job.Result{job.SignalResult(id, sg)})
	if err == nil && tr.Changed() {
		err = store.Commit(ctx, b.st, tr)
	}
	if err != nil {
		return "", withCode(storeExit(err), err)
	}
	line := signalLine(tr.Job, name, sigID)
	if len(tr.Actions) > 0 && !tr.Job.Done() {
		line += fmt.Sprintf("; its next actions wait for: baton resume --store %s %s", b.path, id)
	}
	return line, nil
}

// cancelNode commits the node's cancel; the actions it lets start (a
// rescue, finally blocks) wait for 'baton resume'.
func (b *boltBackend) cancelNode(ctx context.Context, id job.ID, name, reason string) (string, error) {
	res, err := runner.NewCancelNode(id, name, reason, time.Now())
	if err != nil {
		return "", err
	}
	j, err := b.st.Load(ctx, id)
	if err != nil {
		return "", withCode(storeExit(err), err)
	}
	if j.Done() {
		return "", fmt.Errorf("job %s: %w (%s)", id, runner.ErrFinished, j.Status())
	}
	tr, err := job.Restart(j, []job.Result{res})
	if err == nil && tr.Changed() {
		err = store.Commit(ctx, b.st, tr)
	}
	if err != nil {
		return "", withCode(storeExit(err), err)
	}
	line := cancelNodeOutcome(id, name, tr)
	if tr.Changed() && len(tr.Actions) > 0 && !tr.Job.Done() {
		line += fmt.Sprintf("; its next actions wait for: baton resume --store %s %s", b.path, id)
	}
	return line, nil
}

// serveLocal is the runner of 'baton serve' on the file: it runs the jobs
// in this process, and resumes the unfinished ones first (a job naming
// actions it has no handler for is left as it is, with a message).
func (b *boltBackend) serveLocal(ctx context.Context, o workerOptions) (serving, error) {
	r, err := b.local(o)
	if err != nil {
		return nil, err
	}
	ids, err := unfinished(ctx, b.st)
	if err != nil {
		r.Close()
		return nil, withCode(storeExit(err), fmt.Errorf("list jobs: %v", err))
	}
	if err := r.Resume(ctx, ids...); err != nil {
		o.Logger.Warn("serve: some unfinished jobs were not resumed", "err", err)
	}
	return boltServing{r, server.Local{Runner: r, Registry: o.Registry, Name: o.Name, Capacity: o.Workers, Since: time.Now()}}, nil
}

// boltServing runs the jobs of a store file for 'baton serve'.
type boltServing struct {
	*inmem.Runner
	local server.Local
}

func (s boltServing) runner() any { return s.local }
