package main

import (
	"context"

	"github.com/batonwf/baton/job"
)

func historyCommand() command {
	return command{
		name:    "history",
		summary: "show the steps of a job: the results each one applied",
		usage:   "baton history [--store PATH | --zk HOST:PORT[,...] [--root PATH] | --kafka HOST:PORT[,...] [--prefix NAME] | --server URL [--token-file FILE]] [--json] JOB",
		about: `
Shows every version of JOB: how it was created, then for each step the
results it applied (action, the worker that ran it, ok or failed with the
message, output cut to 60 bytes; a signal with its name, ID and the wait
that took it or "kept"; a node's cancel with the node and the reason; a
timer's firing) and the job's state after it, the signals kept before
that a wait took in it, the maps it started (with their copies) and the
loops that began another iteration, and the retries, deadlines and
sleeps it armed (waits). With --server URL, through 'baton serve' (see 'baton status');
--json prints the API's history of the job, every step.`,
		run: (*cli).history,
	}
}

func (c *cli) history(ctx context.Context, args []string) error {
	cmd := historyCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	z := c.addZKFlags(fset, true)
	k := c.addKafkaFlags(fset, z, true)
	srv := c.addServerFlags(fset)
	asJSON := jsonFlag(fset)
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) != 1:
		return c.usageError(cmd, "want one job ID, got %d arguments", len(pos))
	}
	if err := checkBackendFlags(srv, z, k); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	id := job.ID(pos[0])
	if err := checkID(id); err != nil {
		return withCode(exitError, err)
	}
	b, err := c.openBackend(ctx, *storeArg, z, k, openOptions{mode: readOnly, server: srv})
	if err != nil {
		return err
	}
	defer b.Close()
	h, err := view(b).viewHistory(ctx, id)
	if err != nil {
		return withCode(max(exitError, exitCode(err), storeExit(err)), err)
	}
	if *asJSON {
		return writeJSON(c.stdout, h)
	}
	writeHistory(c.stdout, h)
	return nil
}
