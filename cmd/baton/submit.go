package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/store"
)

func submitCommand() command {
	return command{
		name:    "submit",
		summary: "submit a workflow file to ZooKeeper or Kafka, for the workers to run",
		usage: "baton submit --zk HOST:PORT[,...] [--root PATH] [--auth USER [--auth-file FILE]] [--id ID] [--wait [--quiet]] FILE\n" +
			"       baton submit --kafka HOST:PORT[,...] [--prefix NAME] [TLS and SASL flags] [--id ID] [--wait [--quiet]] FILE",
		about: `
Stores the workflow in FILE (as for 'baton run'; - reads standard input) as
a new job in ZooKeeper and queues its first actions for the workers ('baton
worker' processes, or Go programs with their own handlers, on the same
servers and root), then prints the job's ID. It runs no action itself, so
it does not check that the actions have handlers; it says so when no live
worker has a handler for one of them (the job then waits for one).

With --kafka, it hands the job to the restarters ('baton worker --kafka'
processes, or Go programs, on the same brokers and prefix) through the
topic NAME.restarter, and returns once one of them has stored it: with no
restarter running, it says so and waits for one. It says when no worker
consumes the topic of one of the job's actions.

With --wait, it follows the job with the same progress line as 'baton run',
and prints the final tree and summary line. Exit status: 0 once submitted
(with --wait: if the job succeeded), 1 if it failed or was cancelled (with
--wait), 2 for bad usage, a bad file or an error, 3 if ZooKeeper or Kafka
cannot be reached, 130 when interrupted (the job goes on: follow it with
'baton status').`,
		run: (*cli).submit,
	}
}

func (c *cli) submit(ctx context.Context, args []string) int {
	cmd := submitCommand()
	fset := flagSet(cmd)
	z := c.addZKFlags(fset, false)
	k := c.addKafkaFlags(fset, z, false)
	idArg := fset.String("id", "", "the job `ID` (default: the file's base name, or stdin, and a UTC timestamp)")
	wait := fset.Bool("wait", false, "wait for the job to finish, showing its progress, and exit with its outcome")
	quiet := fset.Bool("quiet", false, "with --wait, print only the job ID and the summary line: no tree, no progress line")
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return code
	case len(pos) != 1:
		return c.usageError(cmd, "want one workflow file, got %d arguments", len(pos))
	}
	if err := checkEngines(z, k, true); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	file := pos[0]
	source := file
	if file == "-" {
		source = "standard input"
	}

	// Everything about the input is checked before ZooKeeper or Kafka is
	// touched.
	root, err := readWorkflow(file, c.stdin)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	id := job.ID(*idArg)
	if id == "" {
		base := file
		if file == "-" {
			base = "stdin"
		}
		id = defaultID(base, c.now())
	}
	if err := checkID(id); err != nil {
		c.errorf("%v", err)
		return exitError
	}
	if k.on() {
		return c.submitKafka(ctx, k, id, root, source, *wait, *quiet)
	}

	ctx, stopSignals := c.interruptible(ctx)
	defer stopSignals()
	con := newConsole(c.stdout, c.stderr)
	st, err := z.open(ctx, runnerLogger(con.Stderr()), false)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(con.Stderr(), "interrupted: job %s was not submitted\n", id)
			return exitInterrupted
		}
		c.errorf("%v", err)
		return zkExit(err)
	}
	defer st.Close()
	where, hint := z.where(), z.hint()
	// A runner without handlers: it submits and waits; workers run.
	r, err := zkrunner.New(zkrunner.Options{Store: st, NoResume: true, Logger: runnerLogger(con.Stderr())})
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	defer r.Close()
	start := c.now()
	if err := r.Submit(ctx, id, root); err != nil {
		switch {
		case errors.Is(err, store.ErrExists):
			c.errorf("job %s already exists in %s; choose another --id", id, where)
			return exitError
		case ctx.Err() != nil:
			fmt.Fprintf(con.Stderr(), "interrupted: job %s may or may not have been submitted: see 'baton status %s %s'\n", id, hint, id)
			return exitInterrupted
		}
		c.errorf("%s: submit job %s to %s: %v", source, id, where, err)
		return exitError
	}
	fmt.Fprintln(con.Stdout(), id)
	if missing, err := unserved(ctx, st, root); err == nil && len(missing) > 0 {
		fmt.Fprintf(con.Stderr(), "baton: no live worker in %s has a handler for %s yet: the job waits for one ('baton worker %s' serves the built-in actions)\n",
			where, quoteAll(missing), hint)
	}
	if !*wait {
		return exitOK
	}
	return c.follow(ctx, con, r.Status, r.Wait, id, start, where, hint, *quiet)
}

// follow is submit --wait: it follows job id with the progress line
// (status gives its state as stored) until wait returns it finished, and
// prints the result. It returns the exit status.
func (c *cli) follow(ctx context.Context, con *console, status, wait func(context.Context, job.ID) (job.Job, error),
	id job.ID, start time.Time, where, hint string, quiet bool) int {
	stopProgress := func() {}
	if !quiet {
		stopProgress = c.showProgress(con, status, id, start)
	}
	j, err := wait(ctx, id)
	stopProgress()
	took := c.now().Sub(start)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(con.Stderr(), "interrupted: job %s goes on in %s; follow it with: baton status %s %s\n", id, where, hint, id)
		return exitInterrupted
	case err != nil:
		c.errorf("job %s in %s: %v", id, where, err)
		return exitError
	}
	c.printResult(con, j, took, quiet)
	if j.Status() != job.StatusSucceeded {
		return exitFailed
	}
	return exitOK
}

// unserved lists the action names of root that no live worker has a
// handler for, sorted.
func unserved(ctx context.Context, st *zkrunner.Store, root ast.Node) ([]string, error) {
	workers, err := st.Workers(ctx)
	if err != nil {
		return nil, err
	}
	served := map[string]bool{}
	for _, w := range workers {
		for _, a := range w.Actions {
			served[a] = true
		}
	}
	var missing []string
	ast.Walk(root, func(_ string, n *ast.Node) bool {
		if n.Kind == ast.KindAct && !served[n.Action] && !slices.Contains(missing, n.Action) {
			missing = append(missing, n.Action)
		}
		return true
	})
	slices.Sort(missing)
	return missing, nil
}
