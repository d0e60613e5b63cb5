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
		usage:   "baton status [--store PATH] [JOB]",
		about: `
Without JOB, lists every job in the store: ID, status, version and how many
of its actions have settled, reading only what it shows (a job's size does
not matter). With JOB, shows its tree with the state of every node. It only
reads the store: it works while another baton runs jobs in it, and on a
file it may not write.`,
		run: (*cli).status,
	}
}

func (c *cli) status(ctx context.Context, args []string) int {
	cmd := statusCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return code
	case len(pos) > 1:
		return c.usageError(cmd, "want at most one job ID, got %d arguments", len(pos))
	}
	if len(pos) == 1 {
		if err := checkID(job.ID(pos[0])); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	st, path, err := c.openStore(*storeArg, readOnly)
	if err != nil {
		c.errorf("%v", err)
		return storeExit(err)
	}
	defer st.Close()

	if len(pos) == 1 {
		j, err := loadJob(ctx, st, path, job.ID(pos[0]))
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		fmt.Fprint(c.stdout, job.Describe(j))
		return exitOK
	}

	// Listing reads the small per-job records the store keeps for it,
	// never a job: a job of a million actions lists as fast as one of ten.
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	q := store.Query{Limit: 1000}
	n := 0
	for {
		infos, err := store.List(ctx, st, q)
		if err != nil {
			c.errorf("list jobs in %s: %v", path, err)
			return storeExit(err)
		}
		for _, in := range infos {
			if n == 0 {
				fmt.Fprintln(tw, "ID\tSTATUS\tVERSION\tSETTLED")
			}
			n++
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
		fmt.Fprintf(c.stdout, "no jobs in %s\n", path)
		return exitOK
	}
	if err := tw.Flush(); err != nil {
		c.errorf("%v", err)
		return exitError
	}
	return exitOK
}
