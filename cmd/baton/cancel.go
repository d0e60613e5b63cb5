package main

import (
	"context"
	"flag"
	"fmt"
	"unicode/utf8"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server"
)

func cancelCommand() command {
	return command{
		name:    "cancel",
		summary: "cancel unfinished jobs",
		usage:   "baton cancel [--store PATH | --zk HOST:PORT[,...] [--root PATH] | --kafka HOST:PORT[,...] [--prefix NAME] | --server URL [--token-file FILE]] [--reason TEXT] JOB... | [--node NAME] [--reason TEXT] JOB",
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
its finally blocks. With --server URL, the cancel goes to 'baton serve',
which runs the finally blocks (the token: a write one, from $BATON_TOKEN
or --token-file).

With --node NAME, only the node called NAME in JOB is cancelled, as its
deadline would stop it: nothing new starts under it, its actions in
flight are abandoned, the finally blocks under it that had started run,
and it fails with kind cancelled and the reason, which a try around it
may rescue; the job goes on. A node that is not running (idle, or
settled) is left as it is, and the line says so. With --store, what the
cancel lets start (a rescue, finally blocks) waits for 'baton resume';
elsewhere the workers (or the server) run it.

Prints a line per job. Exit status: 0 if every job is cancelled (a job
cancelled before included; with --node, a node not running left as it
is), 2 if a job was not found or had finished, or had no node called
NAME, or for bad usage, 3 if the store is damaged, fails, or is in use.`,
		run: (*cli).cancel,
	}
}

func (c *cli) cancel(ctx context.Context, args []string) error {
	cmd := cancelCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	z := c.addZKFlags(fset, true)
	k := c.addKafkaFlags(fset, z, true)
	srv := c.addServerFlags(fset)
	reason := fset.String("reason", "cancelled with baton cancel", "why the job (or the node) is cancelled: `TEXT` kept with the job (UTF-8, at most 1,024 bytes)")
	node := fset.String("node", "", "cancel only the running node called `NAME` in JOB")
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) == 0:
		return c.usageError(cmd, "want at least one job ID")
	case *reason == "":
		return c.usageError(cmd, "--reason must not be empty")
	case !utf8.ValidString(*reason):
		return c.usageError(cmd, "--reason is not valid UTF-8")
	case len(*reason) > server.MaxCancelReason:
		return c.usageError(cmd, "--reason is %d bytes; at most %d, as through the API", len(*reason), server.MaxCancelReason)
	}
	// --node given, even empty: one node of one job.
	nodeSet := false
	fset.Visit(func(f *flag.Flag) { nodeSet = nodeSet || f.Name == "node" })
	if nodeSet {
		if msg := ast.CheckSignalName(*node); msg != "" {
			return c.usageError(cmd, "--node: %s", msg)
		}
		if len(pos) != 1 {
			return c.usageError(cmd, "--node cancels a node of one job: want one job ID, got %d", len(pos))
		}
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
	if nodeSet {
		return c.cancelNode(ctx, b, job.ID(pos[0]), *node, *reason)
	}
	// A store file takes the cancel itself; with --zk, a runner that runs
	// nothing saves it and queues the finally blocks for the workers; with
	// --kafka, one hands it to the restarter that owns the job.
	cr, err := b.canceller(ctx)
	if err != nil {
		return withCode(exitError, err)
	}
	defer cr.close()
	path := b.where()
	status := exitOK
	v := view(b)
	for _, p := range pos {
		id := job.ID(p)
		s, err := v.viewSummary(ctx, id)
		if err != nil {
			c.errorf("%v", err)
			status = max(status, storeExit(err), exitCode(err))
			continue
		}
		if s.Cancel != nil {
			fmt.Fprintf(c.stdout, "job %s was cancelled already (%s): %s\n", id, job.Clip(s.Cancel.Reason), s.Status)
			continue
		}
		if s.Status != job.StatusRunning.String() {
			c.errorf("job %s in %s has finished (%s): nothing to cancel", id, path, s.Status)
			status = max(status, exitError)
			continue
		}
		line, err := cr.cancel(ctx, id, *reason)
		if err != nil {
			c.errorf("cancel job %s in %s: %v", id, path, err)
			status = max(status, exitCode(err))
			continue
		}
		fmt.Fprintln(c.stdout, line)
	}
	return exitWith(status)
}
