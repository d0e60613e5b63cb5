package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/job"
)

func statusCommand() command {
	return command{
		name:    "status",
		summary: "list the jobs in the store, or show one",
		usage:   "baton status [--store PATH | --zk HOST:PORT[,...] [--root PATH] | --kafka HOST:PORT[,...] [--prefix NAME] | --server URL [--token-file FILE]] [--json] [JOB]",
		about: `
Without JOB, lists every job in the store: ID, status, version and how many
of its actions have settled, reading only what it shows (a job's size does
not matter). With JOB, shows its tree with the state of every node. It only
reads the store: it works while another baton runs jobs in it, and on a
file it may not write.

With --zk, the jobs are those in ZooKeeper (see 'baton worker'); without
JOB it also lists the registered workers, each with its state (available,
draining, down with the time left in its grace, quarantined), the actions
it runs at once (BUSY), the pins it holds, the actions it has handlers for
and the job/action of each action it runs now; the placement settings;
and the number of queue entries (actions waiting or running), with the
first 5 in the order workers take them: each one's action name, route
(- anywhere, k... a soft key, p... a pin, g... a replica group) and the
worker running it, or why it waits (which worker takes it and when, as
the workers decide it: a busy key holder, a full worker, a pin's holder).
A job whose record cannot be read is listed as damaged, with the reason
on standard error; the others are listed as usual.

With --kafka, the jobs are those in the topic NAME.state under --prefix
(status, history and inspect only read it, and make no topic: a prefix
without topics has no jobs); without JOB it also shows how many
restarters run, one line per worker (state, capacity, actions running,
quarantines), and each action topic with the actions queued in it (not
yet taken, or not yet finished) and the workers that consume it. It warns
of actions queued on a topic that no worker consumes: they wait until a
worker with a handler for them starts (when the workers group cannot be
described, WORKERS shows ? and status says it could not tell); of
replicas that outnumber a topic's workers; and of queued actions whose
affinity is strict or sets a wait, which do not apply on Kafka.

With --server URL (or $BATON_SERVER), the jobs are those 'baton serve' at
URL holds, read through its API with the token in $BATON_TOKEN or
--token-file; the text is the same as against its store. --json prints
the API's JSON: the job (GET /api/v1/jobs/JOB), or every job as one
listing ({"jobs": [...]}).`,
		run: (*cli).status,
	}
}

func (c *cli) status(ctx context.Context, args []string) error {
	cmd := statusCommand()
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
	case len(pos) > 1:
		return c.usageError(cmd, "want at most one job ID, got %d arguments", len(pos))
	}
	if err := checkBackendFlags(srv, z, k); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	if len(pos) == 1 {
		if err := checkID(job.ID(pos[0])); err != nil {
			return withCode(exitError, err)
		}
	}
	b, err := c.openBackend(ctx, *storeArg, z, k, openOptions{mode: readOnly, server: srv})
	if err != nil {
		return err
	}
	defer b.Close()
	v := view(b)

	if len(pos) == 1 {
		j, err := v.viewJob(ctx, job.ID(pos[0]), 0)
		if err != nil {
			return withCode(max(exitError, exitCode(err), storeExit(err)), err)
		}
		if *asJSON {
			return writeJSON(c.stdout, j)
		}
		fmt.Fprint(c.stdout, describeJob(j))
		return nil
	}

	// Listing reads the small per-job records the store keeps for it,
	// never a job: a job of a million actions lists as fast as one of ten.
	list := api.List{Jobs: []api.Summary{}}
	const page = 1000
	for after := job.ID(""); ; {
		jobs, err := v.viewList(ctx, "", after, page)
		if err != nil {
			return err
		}
		list.Jobs = append(list.Jobs, jobs...)
		if len(jobs) < page {
			break
		}
		after = job.ID(jobs[len(jobs)-1].ID)
	}
	if *asJSON {
		return writeJSON(c.stdout, list)
	}
	if len(list.Jobs) == 0 {
		fmt.Fprintf(c.stdout, "no jobs in %s\n", b.where())
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	var damaged []api.Summary
	for i, s := range list.Jobs {
		if i == 0 {
			fmt.Fprintln(tw, "ID\tSTATUS\tVERSION\tSETTLED")
		}
		if s.Status == api.StatusDamaged {
			damaged = append(damaged, s)
			fmt.Fprintf(tw, "%s\tdamaged\t-\t?\n", s.ID)
			continue
		}
		progress := "?" // a job last saved by an older baton
		if s.Total >= 0 {
			progress = fmt.Sprintf("%d/%d", s.Settled, s.Total)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", s.ID, s.Status, s.Version, progress)
	}
	if err := tw.Flush(); err != nil {
		return withCode(exitError, err)
	}
	for _, s := range damaged {
		c.errorf("job %s in %s cannot be read: %s; left as it is ('baton delete %s %s' removes it)", s.ID, b.where(), s.Damaged, b.hint(), s.ID)
	}
	if err := b.writeStatus(ctx, c.stdout); err != nil {
		return withCode(exitError, err)
	}
	return nil
}
