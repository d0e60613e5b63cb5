package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

func submitCommand() command {
	return command{
		name:    "submit",
		summary: "submit a workflow file to ZooKeeper, Kafka or a baton server, for its workers to run",
		usage: "baton submit --zk HOST:PORT[,...] [--root PATH] [--auth USER [--auth-file FILE]] [--id ID] [--wait [--quiet]] [--json] FILE\n" +
			"       baton submit --server URL [--token-file FILE] [--id ID] [--wait [--quiet]] [--json] FILE\n" +
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

With --server URL (or $BATON_SERVER), it submits to 'baton serve' at URL
(POST /api/v1/jobs, with a write token from $BATON_TOKEN or --token-file),
which refuses a workflow naming an action no worker of it runs; the same
ID with the same workflow is a safe retry. --wait follows the job with
the history's long polls.

--json prints the API's summary of the job made instead of its ID, and
with --wait, once it has finished, its summary again (no progress line,
no tree).

With --wait, it follows the job with the same progress line as 'baton run',
and prints the final tree and summary line. Exit status: 0 once submitted
(with --wait: if the job succeeded), 1 if it failed or was cancelled (with
--wait), 2 for bad usage, a bad file or an error, 3 if ZooKeeper or Kafka
cannot be reached, 130 when interrupted (the job goes on: follow it with
'baton status').`,
		run: (*cli).submit,
	}
}

func (c *cli) submit(ctx context.Context, args []string) error {
	cmd := submitCommand()
	fset := flagSet(cmd)
	z := c.addZKFlags(fset, false)
	k := c.addKafkaFlags(fset, z, false)
	srv := c.addServerFlags(fset)
	asJSON := jsonFlag(fset)
	idArg := fset.String("id", "", "the job `ID` (default: the file's base name, or stdin, and a UTC timestamp)")
	wait := fset.Bool("wait", false, "wait for the job to finish, showing its progress, and exit with its outcome")
	quiet := fset.Bool("quiet", false, "with --wait, print only the job ID and the summary line: no tree, no progress line")
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) != 1:
		return c.usageError(cmd, "want one workflow file, got %d arguments", len(pos))
	}
	if err := srv.check(); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	if !srv.on() {
		if !z.on() && !k.on() {
			// A flag of one of them without it says so first.
			if err := checkEngines(z, k, false); err != nil {
				return c.usageError(cmd, "%v", err)
			}
			return c.usageError(cmd, "--zk, --kafka or --server is required: the ZooKeeper servers or the Kafka brokers, HOST:PORT[,HOST:PORT...], or the URL of a 'baton serve' (or $%s)", serverEnv)
		}
		if err := checkEngines(z, k, true); err != nil {
			return c.usageError(cmd, "%v", err)
		}
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
		return withCode(exitError, err)
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
		return withCode(exitError, err)
	}
	ctx, stopSignals := c.interruptible(ctx)
	defer stopSignals()
	con := newConsole(c.stdout, c.stderr)
	b, err := c.openBackend(ctx, "", z, k, openOptions{mode: create, stderr: con.Stderr(), server: srv})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(con.Stderr(), "interrupted: job %s was not submitted\n", id)
			return exitWith(exitInterrupted)
		}
		return err
	}
	defer b.Close()
	where, hint := b.where(), b.hint()
	// A runner without handlers: it submits and waits; workers run.
	s, err := b.submitter(ctx)
	if err != nil {
		return withCode(exitError, err)
	}
	defer s.close()
	start := c.now()
	if err := s.submit(ctx, id, root); err != nil {
		switch {
		case errors.Is(err, store.ErrExists):
			return fmt.Errorf("job %s already exists in %s; choose another --id", id, where)
		case ctx.Err() != nil:
			fmt.Fprintf(con.Stderr(), "interrupted: job %s may or may not have been submitted: see 'baton status %s %s'\n", id, hint, id)
			return exitWith(exitInterrupted)
		}
		return submitFailed(source, id, where, err)
	}
	if *asJSON {
		// The summary of the job just made: the server's answer, else
		// the job as stored, as a server would answer.
		sum, ok := api.Summary{}, false
		if a, is := s.(answerer); is {
			sum, ok = a.answer(id)
		}
		if !ok {
			if sum, err = s.status(ctx, id); err != nil {
				return fmt.Errorf("job %s in %s: %v", id, where, err)
			}
		}
		if err := writeJSON(con.Stdout(), sum); err != nil {
			return withCode(exitError, err)
		}
	} else {
		fmt.Fprintln(con.Stdout(), id)
	}
	if warning := s.unserved(ctx, root); warning != "" {
		fmt.Fprintln(con.Stderr(), warning)
	}
	if !*wait {
		return nil
	}
	return c.follow(ctx, con, s.status, s.wait, id, start, where, hint, *quiet, *asJSON)
}

// answerer is a submitter that has the answer to a submit: a server's.
type answerer interface {
	answer(id job.ID) (api.Summary, bool)
}

// follow is submit --wait: it follows job id with the progress line
// (status gives its state as stored) until wait returns it finished, and
// prints the result. Its error carries the exit status.
func (c *cli) follow(ctx context.Context, con *console, status func(context.Context, job.ID) (api.Summary, error),
	wait func(context.Context, job.ID) (api.Job, error), id job.ID, start time.Time, where, hint string, quiet, asJSON bool) error {
	stopProgress := func() {}
	if !quiet && !asJSON {
		stopProgress = c.showProgress(con, status, id, start)
	}
	j, err := wait(ctx, id)
	stopProgress()
	took := c.now().Sub(start)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(con.Stderr(), "interrupted: job %s goes on in %s; follow it with: baton status %s %s\n", id, where, hint, id)
		return exitWith(exitInterrupted)
	case err != nil:
		// wait's error names the job and where it is, and carries the
		// exit status: 3 when the server, ZooKeeper or Kafka cannot be
		// reached.
		return withCode(max(exitCode(err), storeExit(err)), err)
	}
	if asJSON {
		if err := writeJSON(con.Stdout(), j.Summary); err != nil {
			return withCode(exitError, err)
		}
	} else {
		c.printResult(con, j, took, quiet)
	}
	if j.Status != job.StatusSucceeded.String() {
		return exitWith(exitFailed)
	}
	return nil
}
