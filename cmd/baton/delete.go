package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

func deleteCommand() command {
	return command{
		name:    "delete",
		summary: "remove jobs and their history from the store",
		usage:   "baton delete [--store PATH | --zk HOST:PORT[,...] [--root PATH] | --kafka HOST:PORT[,...] [--prefix NAME] | --server URL [--token-file FILE]] JOB...",
		about: `
Removes each JOB and its whole history from the store, finished or not:
for a job you give up on, a damaged one among them. A job made again under
the same ID is a new job (its actions get new idempotency keys). With --zk,
its queue entries and timers go with it, and the workers stop its actions
in flight. With --kafka, the delete goes to the restarter that owns the
job (as a cancel does: with no restarter running, it says so and waits for
one), which stops the job's actions and deletes its records with
tombstones that compaction then drops. With --server URL, the delete goes
to 'baton serve', which deletes only settled jobs (cancel a running one
first). Prints a line per job. Exit status:
0 if every job was deleted, 2 if one was not found or bad usage, 3 if the
store is damaged or fails.`,
		run: (*cli).delete,
	}
}

func (c *cli) delete(ctx context.Context, args []string) error {
	cmd := deleteCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	z := c.addZKFlags(fset, true)
	k := c.addKafkaFlags(fset, z, true)
	srv := c.addServerFlags(fset)
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) == 0:
		return c.usageError(cmd, "want at least one job ID")
	}
	if err := checkBackendFlags(srv, z, k); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	for _, p := range pos {
		if err := checkID(job.ID(p)); err != nil {
			return c.usageError(cmd, "%v", err)
		}
	}
	b, err := c.openBackend(ctx, *storeArg, z, k, openOptions{mode: readWrite, server: srv})
	if err != nil {
		return err
	}
	defer b.Close()
	d, err := b.deleter(ctx)
	if err != nil {
		return withCode(exitError, err)
	}
	defer d.close()
	path := b.where()
	status := exitOK
	v := view(b)
	for _, p := range pos {
		id := job.ID(p)
		what := "job"
		if s, err := v.viewList(ctx, string(id), "", 1); err == nil && len(s) == 1 && s[0].ID == string(id) && s[0].Status != api.StatusDamaged {
			what = fmt.Sprintf("job, %s at v%d", s[0].Status, s[0].Version)
		}
		err := d.delete(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			c.errorf("job %s not found in %s", id, path)
			status = max(status, exitError)
		case err != nil:
			c.errorf("delete job %s from %s: %v", id, path, err)
			status = max(status, exitCode(err))
		default:
			fmt.Fprintf(c.stdout, "deleted %s (%s) from %s\n", id, what, path)
		}
	}
	return exitWith(status)
}
