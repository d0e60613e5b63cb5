package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

func resumeCommand() command {
	return command{
		name:    "resume",
		summary: "finish unfinished jobs in the store",
		usage:   "baton resume [--store PATH] [--workers N] [--retain D] [--verbose] [JOB...]\n       baton resume --zk HOST:PORT[,...] [--root PATH] [JOB...]",
		about: `
Runs unfinished jobs to their end: jobs interrupted by Ctrl-C or a crash
continue where they stopped, without repeating actions whose results were
saved. With JOB arguments, only those; without, every unfinished job.

A job whose workflow uses actions this command has no handler for (made by
a Go program with its own handlers) is left untouched, with a line saying
so: resume it with that program. A job whose stored state is damaged is
reported and left as it is; the others are resumed ('baton delete JOB'
removes one for good). Prints a summary line per job. Exit status: 0 if
all resumed jobs succeeded, 1 if any failed, 2 for bad usage or a named
job that cannot be resumed, 3 if the store is damaged or fails, 130 when
interrupted.

With --zk, it runs nothing itself: the workers run the jobs (see 'baton
worker'). It queues again the actions of the jobs that have no queue entry
(left out by a crash in the middle of a large step, or deleted by hand) and
re-creates their missing timers, prints a line per job, and says whether a
live worker is there to run them. Exit status: 0, or 2 if a named job was
not found or cannot be resumed, 3 if ZooKeeper cannot be reached.

Not with --kafka: there the restarters resume by themselves. One that
starts, or takes a partition over from one that stopped, dispatches again
what the unfinished jobs of the partition are missing; start or restart
'baton worker --kafka'. ('baton status --kafka' shows actions waiting on a
topic that no worker consumes.)`,
		run: (*cli).resume,
	}
}

func (c *cli) resume(ctx context.Context, args []string) error {
	cmd := resumeCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	z := c.addZKFlags(fset, true)
	k := c.addKafkaFlags(fset, z, true)
	workers := fset.Int("workers", 4, "run at most `N` actions at once (not with --zk: the workers run them)")
	verbose := fset.Bool("verbose", false, "log each action's start and end and each job's end (failed actions are logged without it; not with --zk)")
	retain := retainFlag(fset)
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case *workers < 1:
		return c.usageError(cmd, "--workers must be at least 1, got %d", *workers)
	case *retain < 0:
		return c.usageError(cmd, "--retain must not be negative, got %v", *retain)
	}
	if err := checkEngines(z, k, false); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	if k.on() {
		return c.usageError(cmd, "not with --kafka: there the restarters resume by themselves: one that starts, or takes a partition over, dispatches again what the unfinished jobs of the partition are missing (start or restart 'baton worker %s'; 'baton status %s' shows the queues)", k.hint(), k.hint())
	}
	if z.on() && given(fset, "retain") {
		return c.usageError(cmd, "--retain goes with the bolt store (--store), not with --zk")
	}
	if z.on() && given(fset, "workers") {
		return c.usageError(cmd, "--workers does not go with --zk: the workers run the jobs ('baton worker --workers N')")
	}
	named := make([]job.ID, len(pos))
	for i, p := range pos {
		if err := checkID(job.ID(p)); err != nil {
			return c.usageError(cmd, "%v", err)
		}
		named[i] = job.ID(p)
	}
	b, err := c.openBackend(ctx, *storeArg, z, k, openOptions{mode: readWrite, retain: *retain})
	if err != nil {
		return err
	}
	defer b.Close()
	return b.resume(ctx, c, named, resumeOptions{workers: *workers, verbose: *verbose})
}

// resume on a store file runs the jobs in this process until they end.
func (b *boltBackend) resume(ctx context.Context, c *cli, named []job.ID, o resumeOptions) error {
	st, path := b.st, b.path
	var err error
	ids := named
	if len(named) == 0 {
		if ids, err = unfinished(ctx, st); err != nil {
			return withCode(storeExit(err), fmt.Errorf("list jobs in %s: %v", path, err))
		}
		if len(ids) == 0 {
			fmt.Fprintf(c.stdout, "no unfinished jobs in %s\n", path)
			return nil
		}
	}

	ctx, stopSignals := c.interruptible(ctx)
	defer stopSignals()
	con := newConsole(c.stdout, c.stderr)
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	reg := builtins(con.Stdout(), client)

	// Sort the jobs out before anything runs: only jobs this command can
	// finish are resumed; every other one is left as it is, with the reason.
	status := exitOK
	worse := func(code int) {
		if code > status && status != exitInterrupted {
			status = code
		}
	}
	var run []job.ID
	for _, id := range ids {
		j, err := st.Load(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			c.errorf("job %s not found in %s (run 'baton status --store %s' for the list)", id, path, path)
			worse(exitError)
			continue
		case err != nil:
			c.errorf("job %s in %s cannot be loaded; left as it is ('baton delete %s' removes it): %v", id, path, id, err)
			worse(storeExit(err))
			continue
		case j.Done():
			fmt.Fprintf(con.Stdout(), "job %s has already finished: %s\n", id, j.Status())
			continue
		}
		if missing := reg.Missing(j.Workflow()); len(missing) > 0 {
			fmt.Fprintf(con.Stdout(), "job %s skipped: it uses action%s this command has no handler for: %s (a job made by a Go program: resume it with that program)\n",
				id, plural(len(missing)), quoteAll(missing))
			if len(named) > 0 {
				worse(exitError)
			}
			continue
		}
		run = append(run, id)
	}
	if len(run) == 0 {
		return exitWith(status)
	}

	r, err := b.local(workerOptions{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: o.workers, Logger: runnerLoggerAt(con.Stderr(), logLevel(o.verbose))}})
	if err != nil {
		return withCode(exitError, err)
	}
	fmt.Fprintf(con.Stdout(), "resuming %d unfinished job%s in %s\n", len(run), plural(len(run)), path)
	start := c.now()
	if err := r.Resume(ctx, run...); err != nil {
		c.errorf("resume jobs in %s: %v", path, err)
		worse(exitError)
	}
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()

	reported := map[job.ID]bool{}
	report := func(j job.Job) {
		reported[j.ID()] = true
		fmt.Fprintln(con.Stdout(), summaryLine(api.SummaryOf(j), c.now().Sub(start)))
		if j.Status() != job.StatusSucceeded {
			worse(exitFailed)
		}
	}
	for _, id := range run {
		j, err := r.Wait(ctx, id)
		if err != nil {
			break // interrupted, or the runner stopped: sorted out below
		}
		report(j)
	}
	r.Close()
	runErr := <-ran

	// Jobs that finished while the runner stopped are reported as finished.
	var left []string
	for _, id := range run {
		if reported[id] {
			continue
		}
		if j, err := st.Load(context.Background(), id); err == nil && j.Done() {
			report(j)
			continue
		}
		left = append(left, string(id))
	}
	switch {
	case runErr != nil:
		c.errorf("store %s failed: %v", path, cause(runErr))
		fmt.Fprintf(con.Stderr(), "the unfinished jobs (%s) are saved as they were before the failure; once the store can be written, finish them with: baton resume --store %s\n",
			strings.Join(left, ", "), path)
		return exitWith(exitStore)
	case ctx.Err() != nil && len(left) > 0:
		fmt.Fprintf(con.Stderr(), "interrupted: %d unfinished job%s (%s) saved in %s; finish them with: baton resume --store %s\n",
			len(left), plural(len(left)), strings.Join(left, ", "), path, path)
		return exitWith(exitInterrupted)
	case ctx.Err() != nil:
		fmt.Fprintf(con.Stderr(), "interrupted: every resumed job had finished\n")
		return exitWith(exitInterrupted)
	case len(left) > 0:
		c.errorf("jobs %s in %s did not finish", strings.Join(left, ", "), path)
		worse(exitError)
	}
	return exitWith(status)
}

// unfinished lists the unfinished jobs of the store, a page at a time.
func unfinished(ctx context.Context, st store.Store) ([]job.ID, error) {
	var ids []job.ID
	q := store.Query{Unfinished: true, Limit: 1000}
	for {
		infos, err := store.List(ctx, st, q)
		if err != nil {
			return nil, err
		}
		for _, in := range infos {
			ids = append(ids, in.ID)
		}
		if len(infos) < q.Limit {
			return ids, nil
		}
		q.After = infos[len(infos)-1].ID
	}
}

// resume on ZooKeeper dispatches again what the jobs named (or every
// unfinished job) are missing in the queue, for the workers to run.
func (b *zkBackend) resume(ctx context.Context, c *cli, named []job.ID, _ resumeOptions) error {
	var err error
	ids := named
	if len(named) == 0 {
		if ids, err = unfinished(ctx, b.st); err != nil {
			return withCode(storeExit(err), fmt.Errorf("list jobs in %s: %v", b.where(), err))
		}
		if len(ids) == 0 {
			fmt.Fprintf(c.stdout, "no unfinished jobs in %s\n", b.where())
			return nil
		}
	}
	status := exitOK
	var run []job.ID
	for _, id := range ids {
		j, err := loadJob(ctx, b, id)
		switch {
		case errors.Is(err, job.ErrCorrupt):
			c.errorf("%v; left as it is ('baton delete %s %s' removes it)", err, b.hint(), id)
			status = max(status, exitStore)
		case err != nil:
			c.errorf("%v", err)
			status = max(status, exitError)
		case j.Done():
			fmt.Fprintf(c.stdout, "job %s has already finished: %s\n", id, j.Status())
		default:
			run = append(run, id)
		}
	}
	if len(run) == 0 {
		return exitWith(status)
	}
	// A runner with no handlers: it queues, the workers run.
	r, err := b.client()
	if err != nil {
		return withCode(exitError, err)
	}
	defer r.Close()
	before, _ := b.st.Queued(ctx)
	if err := r.Resume(ctx, run...); err != nil {
		return fmt.Errorf("resume jobs in %s: %v", b.where(), err)
	}
	for _, id := range run {
		if j, err := loadJob(ctx, b, id); err == nil {
			fmt.Fprintf(c.stdout, "job %s: %s, v%d; its actions are queued\n", id, stateOf(api.SummaryOf(j)), j.Version())
		}
	}
	after, err := b.st.Queued(ctx)
	if err == nil {
		fmt.Fprintf(c.stdout, "queue: %d entries before, %d now\n", before, after)
	}
	workers, err := b.st.Workers(ctx)
	live := 0 // registered workers may be down
	for _, w := range workers {
		if w.Live {
			live++
		}
	}
	switch {
	case err != nil:
		c.errorf("list workers in %s: %v", b.where(), err)
	case live == 0:
		fmt.Fprintf(c.stdout, "no live workers in %s: the jobs wait until one starts ('baton worker %s')\n", b.where(), b.hint())
	default:
		fmt.Fprintf(c.stdout, "%d live worker%s in %s run them\n", live, plural(live), b.where())
	}
	return exitWith(status)
}
