package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

func deleteCommand() command {
	return command{
		name:    "delete",
		summary: "remove jobs and their history from the store",
		usage:   "baton delete [--store PATH | --zk HOST:PORT[,...] [--root PATH]] JOB...",
		about: `
Removes each JOB and its whole history from the store, finished or not:
for a job you give up on, a damaged one among them. A job made again under
the same ID is a new job (its actions get new idempotency keys). With --zk,
its queue entries and timers go with it, and the workers stop its actions
in flight. Prints a line per job. Exit status: 0 if every job was deleted, 2 if one was not
found or bad usage, 3 if the store is damaged or fails.

Not with --kafka: there only the restarter that owns a job's partition may
delete the job (runner/kafka's Store.Delete), and this command is not one;
cancel the job instead.`,
		run: (*cli).delete,
	}
}

func (c *cli) delete(ctx context.Context, args []string) int {
	cmd := deleteCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	z := c.addZKFlags(fset, true)
	k := c.addKafkaFlags(fset, z, true)
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return code
	case len(pos) == 0:
		return c.usageError(cmd, "want at least one job ID")
	}
	if err := checkEngines(z, k, false); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	if k.on() {
		return c.usageError(cmd, "not supported with --kafka: only the restarter that owns a job's partition may delete the job, and this command is not one (cancel the job instead: 'baton cancel %s JOB')", k.hint())
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
	st, path := js.st, js.where
	status := exitOK
	for _, p := range pos {
		id := job.ID(p)
		what := "job"
		if in, err := jobInfo(ctx, st, id); err == nil {
			what = fmt.Sprintf("job, %s at v%d", in.Status, in.Version)
		}
		err := st.Delete(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			c.errorf("job %s not found in %s", id, path)
			status = max(status, exitError)
		case err != nil:
			c.errorf("delete job %s from %s: %v", id, path, err)
			status = max(status, storeExit(err))
		default:
			fmt.Fprintf(c.stdout, "deleted %s (%s) from %s\n", id, what, path)
		}
	}
	return status
}

// jobInfo returns what the store lists for job id, without loading it.
func jobInfo(ctx context.Context, st store.Store, id job.ID) (store.Info, error) {
	infos, err := store.List(ctx, st, store.Query{Prefix: string(id), Limit: 1})
	if err != nil {
		return store.Info{}, err
	}
	if len(infos) == 0 || infos[0].ID != id {
		return store.Info{}, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	return infos[0], nil
}
