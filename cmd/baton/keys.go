package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/batonwf/baton/placement"
)

func keysCommand() command {
	return command{
		name:    "keys",
		summary: "list the stored pins, or where affinity keys go",
		usage:   "baton keys --zk HOST:PORT[,...] [--root PATH] [--auth USER [--auth-file FILE]] [--worker NAME] [KEY...]",
		about: `
Without KEY, lists the pins stored on a ZooKeeper root (strict affinity
keys: see docs/placement.md): each key, the worker that holds it, the job
that pinned it and since when; with --worker NAME, only that worker's. A
pin whose node does not parse is listed as garbled: it counts as absent,
and the next action of its key pins it again.

With KEY..., prints for each key its holder now (the worker its pin names,
or else the first available live worker in the key's preference list) and
the next two workers in that list: where its actions spill to when the
holder is busy, and go when it leaves. The preference list is weighted
rendezvous hashing over the workers' names and capacities, the same in
every process.

Exit status: 0 once listed, 2 for an unknown --worker (the message lists
the known ones) or bad usage, 3 if ZooKeeper cannot be reached.`,
		run: (*cli).keys,
	}
}

func (c *cli) keys(ctx context.Context, args []string) error {
	cmd := keysCommand()
	fset := flagSet(cmd)
	f := c.addAdminFlags(fset, false)
	worker := fset.String("worker", "", "list only the pins the worker `NAME` holds")
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case given(fset, "worker") && len(pos) > 0:
		return c.usageError(cmd, "--worker lists a worker's pins: give it without KEY")
	case given(fset, "worker") && *worker == "":
		return c.usageError(cmd, "--worker must not be empty")
	}
	b, err := c.openAdmin(ctx, cmd, f)
	if err != nil {
		return err
	}
	defer b.Close()
	ws, err := b.st.Workers(ctx)
	if err != nil {
		return withCode(zkExit(err), fmt.Errorf("list workers in %s: %v", b.where(), err))
	}
	var eligible []placement.Worker // for a key's preference list
	known := false
	for _, w := range ws {
		known = known || w.Name == *worker
		if w.Live && (w.State == placement.StateAvailable || w.State == placement.StateQuarantined) {
			eligible = append(eligible, placement.Worker{Name: w.Name, Capacity: w.Capacity})
		}
	}
	if len(pos) > 0 {
		return c.keyHolders(ctx, b, eligible, pos)
	}
	if *worker != "" && !known {
		return unknownWorker(b, *worker, ws)
	}
	pins, err := b.st.Pins(ctx)
	if err != nil {
		return withCode(zkExit(err), fmt.Errorf("list pins in %s: %v", b.where(), err))
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	shown := 0
	for _, p := range pins {
		if *worker != "" && p.Worker != *worker {
			continue
		}
		if shown++; shown == 1 {
			fmt.Fprintln(tw, "KEY\tWORKER\tJOB\tSINCE")
		}
		if p.Garbled {
			fmt.Fprintf(tw, "(garbled %s: %s)\t-\t-\t-\n", p.ID, p.Err)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Key, p.Worker, orDashS(p.Job), p.Since.UTC().Format(time.RFC3339))
	}
	if shown == 0 {
		fmt.Fprintf(c.stdout, "no pins in %s\n", b.where())
		return nil
	}
	return tw.Flush()
}

// keyHolders prints, for each key, its holder now and the next two in
// its preference list among the eligible (available, live) workers.
func (c *cli) keyHolders(ctx context.Context, b *zkBackend, eligible []placement.Worker, keys []string) error {
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tHOLDER\tPINNED\tNEXT")
	for _, key := range keys {
		h := placement.KeyHash(key)
		var order []string
		for _, w := range placement.Rank(h, eligible) {
			order = append(order, w.Name)
		}
		holder, pinned := "-", "no"
		p, ok, err := b.st.PinOf(ctx, h)
		if err != nil {
			return withCode(zkExit(err), fmt.Errorf("read the pin of %q in %s: %v", key, b.where(), err))
		}
		switch {
		case ok && !p.Garbled:
			holder, pinned = p.Worker, "yes"
		case len(order) > 0:
			holder = order[0]
		}
		next := slices.DeleteFunc(order, func(n string) bool { return n == holder })
		next = next[:min(2, len(next))]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", key, holder, pinned, orDashS(strings.Join(next, ", ")))
	}
	return tw.Flush()
}

func orDashS(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
