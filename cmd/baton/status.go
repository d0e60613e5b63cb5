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
of its actions have settled. With JOB, shows its tree with the state of
every node.`,
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
	st, path, err := c.openStore(*storeArg, false)
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

	infos, err := st.List(ctx, store.Query{})
	if err != nil {
		c.errorf("list jobs in %s: %v", path, err)
		return exitError
	}
	if len(infos) == 0 {
		fmt.Fprintf(c.stdout, "no jobs in %s\n", path)
		return exitOK
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tVERSION\tSETTLED")
	status := exitOK
	for _, in := range infos {
		progress := "?"
		if j, err := st.Load(ctx, in.ID); err == nil {
			settled, total := j.Progress()
			progress = fmt.Sprintf("%d/%d", settled, total)
		} else {
			c.errorf("job %s in %s: %v", in.ID, path, err)
			status = exitError
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", in.ID, in.Status, in.Version, progress)
	}
	if err := tw.Flush(); err != nil {
		c.errorf("%v", err)
		return exitError
	}
	return status
}
