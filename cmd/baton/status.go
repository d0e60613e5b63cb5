package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/batonwf/baton/job"
	zkrunner "github.com/batonwf/baton/runner/zk"
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

func (c *cli) status(ctx context.Context, args []string) int {
	cmd := statusCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	z := c.addZKFlags(fset, true)
	k := c.addKafkaFlags(fset, z, true)
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return code
	case len(pos) > 1:
		return c.usageError(cmd, "want at most one job ID, got %d arguments", len(pos))
	}
	if err := checkEngines(z, k, false); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	if len(pos) == 1 {
		if err := checkID(job.ID(pos[0])); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	js, code, err := c.openJobs(ctx, *storeArg, z, k, readOnly)
	if err != nil {
		c.errorf("%v", err)
		return code
	}
	defer js.Close()

	if len(pos) == 1 {
		j, err := js.load(ctx, job.ID(pos[0]))
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
	var damaged []store.Info
	for {
		infos, err := store.List(ctx, js.st, q)
		if err != nil {
			c.errorf("list jobs in %s: %v", js.where, err)
			return storeExit(err)
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
		fmt.Fprintf(c.stdout, "no jobs in %s\n", js.where)
	}
	if err := tw.Flush(); err != nil {
		c.errorf("%v", err)
		return exitError
	}
	for _, in := range damaged {
		c.errorf("job %s in %s cannot be read: %v; left as it is ('baton delete %s %s' removes it)", in.ID, js.where, in.Damaged, js.hint, in.ID)
	}
	if js.zk != nil {
		if err := writeWorkers(ctx, c.stdout, js); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	if js.kafka != nil {
		if err := writeKafka(ctx, c.stdout, js); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	return exitOK
}

// maxClaimsShown bounds the actions listed per worker by status.
const maxClaimsShown = 8

// writeWorkers prints the live workers of a ZooKeeper root and the size of
// its queue:
//
//	WORKER  PID   BUSY  ACTIONS                  RUNNING
//	w1      4242  1/4   fail,http.get,log,sleep  order-7/seq[1]#1
//	queue: 3 entries (actions waiting or running)
func writeWorkers(ctx context.Context, w io.Writer, js *jobStore) error {
	workers, err := js.zk.Workers(ctx)
	if err != nil {
		return fmt.Errorf("list workers in %s: %v", js.where, err)
	}
	queued, err := js.zk.Queued(ctx)
	if err != nil {
		return fmt.Errorf("list the queue in %s: %v", js.where, err)
	}
	fmt.Fprintln(w)
	if len(workers) == 0 {
		fmt.Fprintf(w, "no live workers in %s (start one with 'baton worker %s')\n", js.where, js.hint)
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKER\tPID\tBUSY\tACTIONS\tRUNNING")
		for _, wi := range workers {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", wi.Name, orDash(wi.PID), busy(wi), actionList(wi.Actions), claimList(wi.Running))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	entries := "entries"
	if queued == 1 {
		entries = "entry"
	}
	fmt.Fprintf(w, "queue: %d %s (actions waiting or running)\n", queued, entries)
	return nil
}

// busy is "RUNNING/CAPACITY", or the running count for a worker whose
// announcement is gone (it is stopping).
func busy(wi zkrunner.WorkerInfo) string {
	if wi.Capacity == 0 {
		return fmt.Sprintf("%d/-", len(wi.Running))
	}
	return fmt.Sprintf("%d/%d", len(wi.Running), wi.Capacity)
}

func orDash(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func actionList(names []string) string {
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ",")
}

// claimList is "JOB/ACTION JOB/ACTION ...", sorted, at most
// maxClaimsShown of them (job IDs hold no '/').
func claimList(cs []zkrunner.Claim) string {
	if len(cs) == 0 {
		return "-"
	}
	cs = slices.Clone(cs)
	slices.SortFunc(cs, func(a, b zkrunner.Claim) int {
		return cmp.Or(cmp.Compare(a.Job, b.Job), cmp.Compare(a.Action, b.Action))
	})
	var parts []string
	for i, cl := range cs {
		if i == maxClaimsShown {
			parts = append(parts, fmt.Sprintf("(+%d more)", len(cs)-i))
			break
		}
		parts = append(parts, string(cl.Job)+"/"+cl.Action)
	}
	return strings.Join(parts, " ")
}
