package main

import (
	"context"
	"fmt"

	"github.com/batonwf/baton/job"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/store"
)

func cancelCommand() command {
	return command{
		name:    "cancel",
		summary: "cancel unfinished jobs",
		usage:   "baton cancel [--store PATH | --zk HOST:PORT[,...] [--root PATH] | --kafka HOST:PORT[,...] [--prefix NAME]] [--reason TEXT] JOB...",
		about: `
Cancels each JOB: nothing new starts in it, the actions it was running are
abandoned (their results, if they come, change nothing), and it ends
cancelled, with the reason, once the finally blocks of the tries it had
entered have run. The cancel is saved at once. A job with finally blocks
left to run says so: 'baton resume JOB' runs them and ends it.

A job being run by another baton process cannot be cancelled from here
while that process holds the store: interrupt it (Ctrl-C) first; its
jobs are saved as they were.

With --zk, the cancel is saved in ZooKeeper, and the workers running the
job's actions stop them as soon as they see it; the workers run its
finally blocks. With --kafka, the cancel goes to the restarter that owns
the job, and is saved once it has applied it (with no restarter running,
it says so and waits for one); the workers stop the job's actions and run
its finally blocks.

Prints a line per job. Exit status: 0 if every job is cancelled (a job
cancelled before included), 2 if a job was not found or had finished, or
for bad usage, 3 if the store is damaged, fails, or is in use.`,
		run: (*cli).cancel,
	}
}

func (c *cli) cancel(ctx context.Context, args []string) int {
	cmd := cancelCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	z := c.addZKFlags(fset, true)
	k := c.addKafkaFlags(fset, z, true)
	reason := fset.String("reason", "cancelled with baton cancel", "why the job is cancelled: `TEXT` kept with the job")
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return code
	case len(pos) == 0:
		return c.usageError(cmd, "want at least one job ID")
	case *reason == "":
		return c.usageError(cmd, "--reason must not be empty")
	}
	if err := checkEngines(z, k, false); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	for _, p := range pos {
		if err := checkID(job.ID(p)); err != nil {
			return c.usageError(cmd, "%v", err)
		}
	}
	js, code, err := c.openJobs(ctx, *storeArg, z, k, readWrite)
	if err != nil {
		c.errorf("%v", err)
		return code
	}
	defer js.Close()
	// With --zk, a runner that runs nothing saves the cancel and queues
	// the finally blocks for the workers; with --kafka, one hands the
	// cancel to the restarter that owns the job.
	var cr canceller
	switch {
	case js.zk != nil:
		r, err := zkrunner.New(zkrunner.Options{Store: js.zk, Logger: runnerLogger(c.stderr)})
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		defer r.Close()
		cr = r
	case js.kafka != nil && js.kafka.st != nil:
		r, stop, err := js.kafka.canceller(ctx, c.stderr)
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		defer stop()
		cr = r
	}
	path := js.where
	status := exitOK
	for _, p := range pos {
		id := job.ID(p)
		j, err := js.load(ctx, id)
		if err != nil {
			c.errorf("%v", err)
			status = max(status, storeExit(err))
			continue
		}
		if why, ok := j.Cancelled(); ok {
			fmt.Fprintf(c.stdout, "job %s was cancelled already (%s): %s\n", id, job.Clip(why), j.Status())
			continue
		}
		if j.Done() {
			c.errorf("job %s in %s has finished (%s): nothing to cancel", id, path, j.Status())
			status = max(status, exitError)
			continue
		}
		if cr != nil {
			if err := cr.Cancel(ctx, id, *reason); err != nil {
				c.errorf("cancel job %s in %s: %v", id, path, err)
				status = max(status, exitError)
				continue
			}
			j, err := js.load(ctx, id)
			switch {
			case err != nil:
				fmt.Fprintf(c.stdout, "job %s cancelled\n", id)
			case j.Done():
				fmt.Fprintf(c.stdout, "job %s cancelled: %s at v%d\n", id, j.Status(), j.Version())
			default:
				fmt.Fprintf(c.stdout, "job %s cancelled at v%d; the workers run its finally blocks, then it ends cancelled\n", id, j.Version())
			}
			continue
		}
		tr, err := job.Cancel(j, *reason)
		if err == nil {
			err = store.Commit(ctx, js.st, tr)
		}
		if err != nil {
			c.errorf("cancel job %s in %s: %v", id, path, err)
			status = max(status, storeExit(err))
			continue
		}
		if tr.Job.Done() {
			fmt.Fprintf(c.stdout, "job %s cancelled at v%d\n", id, tr.Job.Version())
			continue
		}
		fmt.Fprintf(c.stdout, "job %s cancelled at v%d; its finally blocks have still to run: baton resume --store %s %s\n",
			id, tr.Job.Version(), path, id)
	}
	return status
}

// canceller cancels a job through a runner (ZooKeeper's, Kafka's), and
// returns once the cancel is saved.
type canceller interface {
	Cancel(ctx context.Context, id job.ID, reason string) error
}
