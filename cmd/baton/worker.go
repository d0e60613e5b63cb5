package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"time"

	zkrunner "github.com/batonwf/baton/runner/zk"
)

// workerDrain is how long a stopping worker lets the actions in flight
// finish before it hands them back to the queue, for another worker.
const workerDrain = 10 * time.Second

func workerCommand() command {
	return command{
		name:    "worker",
		summary: "run the actions of jobs in ZooKeeper, until stopped",
		usage:   "baton worker --zk HOST:PORT[,...] [--root PATH] [--auth USER:PASSWORD] [--name NAME] [--workers N] [--timeout D] [--verbose]",
		about: `
Serves the built-in actions (those of 'baton run') to the jobs kept in
ZooKeeper under --root: it claims actions from the queue, runs them and
saves their results, and fires the timers of retries and deadlines. Jobs
are submitted with 'baton submit'. Any number of workers, on any machines,
may share the servers and root: each action runs on one of them, and the
actions of a worker that dies go to another once its ZooKeeper session
expires (10s). On start it also queues again what the unfinished jobs are
missing (as 'baton resume --zk' does).

It prints a line on standard error when it starts, and logs outages,
abandoned results and actions handed back there; what actions print goes
to standard output. On SIGINT or SIGTERM it stops claiming, lets the
actions in flight finish for up to 10s and hands back those still running,
then exits 0; a second signal stops it at once (the actions it held go
back to the queue when its session expires). Exit status: 0 once stopped,
2 for bad usage or an error, 3 if ZooKeeper cannot be reached.`,
		run: (*cli).worker,
	}
}

func (c *cli) worker(ctx context.Context, args []string) int {
	cmd := workerCommand()
	fset := flagSet(cmd)
	z := addZKFlags(fset, false)
	name := fset.String("name", "", "the worker's `NAME`, unique among the live workers on the root (default: HOST-PID-RANDOM)")
	workers := fset.Int("workers", 4, "run at most `N` actions at once")
	timeout := fset.Duration("timeout", 0, "time limit `D` for each action, like 30s; an action that overruns fails (0: none)")
	verbose := fset.Bool("verbose", false, "log at debug level: claims, retries, ZooKeeper's client")
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return code
	case len(pos) != 0:
		return c.usageError(cmd, "takes no arguments, got %d", len(pos))
	case *workers < 1:
		return c.usageError(cmd, "--workers must be at least 1, got %d", *workers)
	case *timeout < 0:
		return c.usageError(cmd, "--timeout must not be negative, got %v", *timeout)
	case given(fset, "name") && *name == "":
		return c.usageError(cmd, "--name must not be empty")
	}
	if err := z.check(true); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	if *name == "" {
		host, _ := os.Hostname()
		*name = fmt.Sprintf("%s-%d-%04x", host, os.Getpid(), rand.Uint32()&0xffff)
	}

	ctx, stopSignals := c.interruptible(ctx)
	defer stopSignals()
	con := newConsole(c.stdout, c.stderr)
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(con.Stderr(), &slog.HandlerOptions{Level: level}))
	st, err := z.open(ctx, log)
	if err != nil {
		if ctx.Err() != nil {
			return exitInterrupted
		}
		c.errorf("%v", err)
		return zkExit(err)
	}
	defer st.Close()
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	reg := builtins(con.Stdout(), client)
	r, err := zkrunner.New(zkrunner.Options{
		Store:         st,
		Registry:      reg,
		Name:          *name,
		Workers:       *workers,
		ActionTimeout: *timeout,
		DrainTimeout:  workerDrain,
		Logger:        log,
	})
	if err != nil {
		return c.usageError(cmd, "%v", strings.TrimPrefix(err.Error(), "zk: "))
	}
	defer r.Close()

	fmt.Fprintf(con.Stderr(), "baton worker %s: serving %s (%d at once) on %s\n", *name, strings.Join(reg.Names(), ", "), *workers, z.where())
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	select {
	case err := <-ran:
		if err != nil {
			c.errorf("worker %s: %v", *name, strings.TrimPrefix(err.Error(), "zk: "))
			return exitError
		}
	case <-ctx.Done():
		fmt.Fprintf(con.Stderr(), "baton worker %s: stopping: finishing the actions in flight for up to %v, then handing back the others (a second signal stops it at once)\n", *name, workerDrain)
		if err := <-ran; err != nil {
			c.errorf("worker %s: %v", *name, strings.TrimPrefix(err.Error(), "zk: "))
			return exitError
		}
	}
	fmt.Fprintf(con.Stderr(), "baton worker %s: stopped\n", *name)
	return exitOK
}
