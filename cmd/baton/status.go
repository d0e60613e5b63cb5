package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

func statusCommand() command {
	return command{
		name:    "status",
		summary: "list the jobs in the store, or show one",
		usage:   "baton status [--store PATH | --zk HOST:PORT[,...] [--root PATH] | --kafka HOST:PORT[,...] [--prefix NAME]] [JOB]",
		about: `
Without JOB, lists every job in the store: ID, status, version and how many
of its actions have settled, reading only what it shows (a job's size does
not matter). With JOB, shows its tree with the state of every node. It only
reads the store: it works while another baton runs jobs in it, and on a
file it may not write.

With --zk, the jobs are those in ZooKeeper (see 'baton worker'); without
JOB it also lists the live workers, each with the actions it runs at once
(BUSY), the actions it has handlers for and the job/action of each action
it runs now, and the number of queue entries (actions waiting or running).
A job whose record cannot be read is listed as damaged, with the reason
on standard error; the others are listed as usual.

With --kafka, the jobs are those in the topic NAME.state under --prefix
(status, history and inspect only read it, and make no topic: a prefix
without topics has no jobs); without JOB it also shows how many
restarters run, and each action topic with the actions queued in it (not
yet taken, or not yet finished) and the workers that consume it. It warns
of actions queued on a topic that no worker consumes: they wait until a
worker with a handler for them starts (when the workers group cannot be
described, WORKERS shows ? and status says it could not tell).`,
		run: (*cli).status,
	}
}

func (c *cli) status(ctx context.Context, args []string) error {
	cmd := statusCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	z := c.addZKFlags(fset, true)
	k := c.addKafkaFlags(fset, z, true)
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) > 1:
		return c.usageError(cmd, "want at most one job ID, got %d arguments", len(pos))
	}
	if err := checkEngines(z, k, false); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	if len(pos) == 1 {
		if err := checkID(job.ID(pos[0])); err != nil {
			return withCode(exitError, err)
		}
	}
	b, err := c.openBackend(ctx, *storeArg, z, k, openOptions{mode: readOnly})
	if err != nil {
		return err
	}
	defer b.Close()

	if len(pos) == 1 {
		j, err := loadJob(ctx, b, job.ID(pos[0]))
		if err != nil {
			return withCode(exitError, err)
		}
		fmt.Fprint(c.stdout, job.Describe(j))
		return nil
	}

	// Listing reads the small per-job records the store keeps for it,
	// never a job: a job of a million actions lists as fast as one of ten.
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	q := store.Query{Limit: 1000}
	n := 0
	var damaged []store.Info
	for {
		infos, err := store.List(ctx, b.jobs(), q)
		if err != nil {
			return withCode(storeExit(err), fmt.Errorf("list jobs in %s: %v", b.where(), err))
		}
		for _, in := range infos {
			if n == 0 {
				fmt.Fprintln(tw, "ID\tSTATUS\tVERSION\tSETTLED")
			}
			n++
			if in.Damaged != nil {
				damaged = append(damaged, in)
				fmt.Fprintf(tw, "%s\tdamaged\t-\t?\n", in.ID)
				continue
			}
			progress := "?" // a job last saved by an older baton
			if in.Total >= 0 {
				progress = fmt.Sprintf("%d/%d", in.Settled, in.Total)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", in.ID, in.Status, in.Version, progress)
		}
		if len(infos) < q.Limit {
			break
		}
		q.After = infos[len(infos)-1].ID
	}
	if n == 0 {
		fmt.Fprintf(c.stdout, "no jobs in %s\n", b.where())
	}
	if err := tw.Flush(); err != nil {
		return withCode(exitError, err)
	}
	for _, in := range damaged {
		c.errorf("job %s in %s cannot be read: %v; left as it is ('baton delete %s %s' removes it)", in.ID, b.where(), in.Damaged, b.hint(), in.ID)
	}
	if err := b.writeStatus(ctx, c.stdout); err != nil {
		return withCode(exitError, err)
	}
	return nil
}
