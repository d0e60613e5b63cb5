package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batonwf/baton/runner"
)

// workerDrain is how long a stopping worker lets the actions in flight
// finish before it hands them back to the queue, for another worker: the
// runners' default, which the worker's options leave as it is.
const workerDrain = runner.DefaultDrainTimeout

func workerCommand() command {
	return command{
		name:    "worker",
		summary: "run the actions of jobs in ZooKeeper or Kafka, until stopped",
		usage: "baton worker --zk HOST:PORT[,...] [--root PATH] [--auth USER [--auth-file FILE]] [--name NAME] [--capacity N] [--limit ACTION=N]... [--grace D] [--claim-lease D] [--timeout D] [--retain D] [--zk-session-timeout D] [--verbose]\n" +
			"       baton worker --kafka HOST:PORT[,...] [--prefix NAME] [TLS and SASL flags] [--name NAME] [--capacity N] [--limit ACTION=N]... [--claim-lease D] [--timeout D] [--retain D] [--verbose]",
		about: `
Serves the built-in actions (those of 'baton run') to the jobs kept in
ZooKeeper under --root: it claims actions from the queue, runs them and
saves their results, and fires the timers of retries and deadlines. Jobs
are submitted with 'baton submit'. Any number of workers, on any machines,
may share the servers and root: each action runs on one of them, and the
actions of a worker that dies go to another once its ZooKeeper session
expires (--zk-session-timeout, 10s by default, from 1s to 10m; the server
may clamp it to 2 to 20 of its ticks: 4s to 40s with its stock tickTime). On start it also queues again what the unfinished jobs are
missing (as 'baton resume --zk' does). The workers delete the jobs that
settled longer ago than --retain (a week by default), with their history:
ZooKeeper keeps all its data in memory. With --auth USER, the password is
taken from $BATON_ZK_PASSWORD, or from the file --auth-file names (never
from the command line), and every client of the root must give the same.

On ZooKeeper a worker is registered under --name (default: HOST-PID-RANDOM;
give a durable name, like the host's, to keep it across restarts): a
process restarted under the same name is the same worker, and gets back
the pins it held (strict affinity keys: see docs/placement.md) if it comes
back within --grace (30s by default); after that they move to other
workers. A second live process under a name that is taken refuses to
start, naming the host and process of the live one. It runs at most
--capacity actions at once (--workers is another name for it), and at most
N of an action with --limit ACTION=N (repeatable; ACTION must be one it
serves, N at most the capacity). 'baton drain NAME' takes it out of
service for good: it finishes what it runs, deregisters, prints how many
actions it finished and pins it released, and exits 0. 'baton status'
shows the workers, 'baton placement' the cluster's placement settings.

With --kafka, it works on the topics named under --prefix, and makes
those that are missing (NAME.restarter, NAME.state, NAME.stops, and
NAME.action.ACTION for each action it serves), as a restarter and a
worker at once: the restarters share the jobs' partitions through the
consumer group NAME.restarters and make the jobs' transitions; the workers
share the action topics through NAME.workers and run the actions. Any
number of them, on any machines, may share the brokers and prefix: when
one stops (or dies, once its session times out: 10s), the others take its
partitions over and dispatch again what its jobs were missing. --tls,
--tls-ca, --tls-cert and --tls-key connect with TLS; --sasl and
--sasl-user authenticate with SASL (PLAIN or SCRAM), with the password in
$BATON_KAFKA_PASSWORD. A Go program sets any TLS configuration and any
SASL mechanism of kafka-go in runner/kafka's Config.TLS and Config.SASL.
A restarter deletes the settled jobs of its partitions once they are
older than --retain (a week by default), with tombstones that the state
topic's compaction then drops. A worker runs at most --capacity actions
at once (default 4, as --workers), and at most N of ACTION with --limit
ACTION=N; its share of the partitions is weighed by its capacity. One
whose handlers make no progress for --claim-lease (60s) while actions
wait for a slot leaves the group (the others take its partitions) until
one returns.
'baton drain --kafka NAME' makes it finish what it runs and exit 0.

It prints a line on standard error when it starts, and logs outages,
abandoned results and actions handed back there; what actions print goes
to standard output. On SIGINT or SIGTERM it stops claiming, lets the
actions in flight finish for up to 10s and hands back those still running,
then exits 0; a second signal stops it at once (the actions it held go
back to the queue when its session expires; with --kafka, its partitions
go to the others then). Exit status: 0 once stopped or drained, 2 for bad
usage or an error (a name taken by a live worker among them), 3 if
ZooKeeper or Kafka cannot be reached.`,
		run: (*cli).worker,
	}
}

func (c *cli) worker(ctx context.Context, args []string) error {
	cmd := workerCommand()
	fset := flagSet(cmd)
	z := c.addZKFlags(fset, false)
	k := c.addKafkaFlags(fset, z, false)
	name := fset.String("name", "", "the worker's `NAME`, unique among the live workers on the root (with --kafka: in logs and claims) (default: HOST-PID-RANDOM)")
	capacity := fset.Int("capacity", 4, "run at most `N` actions at once")
	fset.Var(aliasFlag{fset.Lookup("capacity")}, "workers", "another name for --capacity")
	limits := limitFlag{}
	fset.Var(limits, "limit", "run at most `N` actions of ACTION at once, as ACTION=N (repeatable)")
	grace := fset.Duration("grace", 0, "with --zk, how long `D` the worker's pins wait for it once it is down before they move (default 30s)")
	claimLease := fset.Duration("claim-lease", 60*time.Second, "how long `D` a wedged worker keeps its work: on ZooKeeper, a claim not renewed for D (its session alive) is broken by another worker; on Kafka, a worker whose handlers neither start nor end for D while an action waits leaves its groups")
	timeout := fset.Duration("timeout", 0, "time limit `D` for each action, like 30s; an action that overruns fails (0: none)")
	verbose := fset.Bool("verbose", false, "log at debug level: claims, retries, ZooKeeper's or Kafka's client")
	z.addRetain(fset)
	z.addSessionTimeout(fset)
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) != 0:
		return c.usageError(cmd, "takes no arguments, got %d", len(pos))
	case given(fset, "capacity") && given(fset, "workers"):
		return c.usageError(cmd, "--capacity and --workers name one flag: give one")
	case *capacity < 1:
		flagName := "capacity"
		if given(fset, "workers") && !given(fset, "capacity") {
			flagName = "workers"
		}
		return c.usageError(cmd, "--%s must be at least 1, got %d", flagName, *capacity)
	case *grace < 0:
		return c.usageError(cmd, "--grace must not be negative, got %v", *grace)
	case *claimLease <= 0:
		return c.usageError(cmd, "--claim-lease must be positive, got %v", *claimLease)
	case k.on() && given(fset, "grace"):
		return c.usageError(cmd, "--grace goes with --zk: Kafka keeps no pins")
	case *timeout < 0:
		return c.usageError(cmd, "--timeout must not be negative, got %v", *timeout)
	case given(fset, "name") && *name == "":
		return c.usageError(cmd, "--name must not be empty")
	case k.on() && *z.retain < 0:
		return c.usageError(cmd, "--retain must not be negative, got %v (0 keeps settled jobs)", *z.retain)
	}
	if err := checkEngines(z, k, true); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	if k.on() {
		// (runner/zk's New checks its own.)
		if err := checkLimits(limits, *capacity, builtins(io.Discard, http.DefaultClient).Names()); err != nil {
			return c.usageError(cmd, "%v", err)
		}
	}
	if *name == "" {
		*name = runner.DefaultName()
	}
	ctx, stopSignals := c.interruptible(ctx)
	defer stopSignals()
	con := newConsole(c.stdout, c.stderr)
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(con.Stderr(), &slog.HandlerOptions{Level: level}))
	b, err := c.openBackend(ctx, "", z, k, openOptions{mode: create, stderr: con.Stderr(), log: log})
	if err != nil {
		if ctx.Err() != nil {
			return exitWith(exitInterrupted)
		}
		return err
	}
	defer b.Close()
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	reg := builtins(con.Stdout(), client)
	r, err := b.worker(workerOptions{WorkerOptions: runner.WorkerOptions{Name: *name, Registry: reg, Workers: *capacity, ActionTimeout: *timeout, Logger: log},
		capacity: *capacity, limits: limits, grace: *grace, claimLease: *claimLease})
	if err != nil {
		return c.usageError(cmd, "%v", err)
	}
	defer r.Close()

	fmt.Fprintf(con.Stderr(), "baton worker %s: serving %s (%d at once) on %s%s\n", *name, strings.Join(reg.Names(), ", "), *capacity, b.where(), r.role())
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	select {
	case err = <-ran:
	case <-ctx.Done():
		fmt.Fprintf(con.Stderr(), "baton worker %s: stopping: finishing the actions in flight for up to %v, then handing back the others (a second signal stops it at once)\n", *name, workerDrain)
		err = <-ran
	}
	if err != nil {
		return fmt.Errorf("worker %s: %v", *name, err)
	}
	if d, ok := r.(drainer); ok {
		if s, ok := d.drained(); ok {
			fmt.Fprintf(con.Stderr(), "baton worker %s: drained: %s; deregistered\n", *name, s)
			return nil
		}
	}
	if s := r.skipped(); s != "" {
		fmt.Fprintf(con.Stderr(), "baton worker %s: skipped or failed on the way: %s\n", *name, s)
	}
	if d, ok := r.(interface{ Drained() bool }); ok && d.Drained() {
		fmt.Fprintf(con.Stderr(), "baton worker %s: drained: it finished what it ran and left\n", *name)
		return nil
	}
	fmt.Fprintf(con.Stderr(), "baton worker %s: stopped\n", *name)
	return nil
}

// drainer is a worker that can be drained (ZooKeeper's): drained says
// whether it stopped because it was, and what it did meanwhile.
type drainer interface {
	drained() (string, bool)
}

// aliasFlag is another name for a flag: setting it sets that flag.
type aliasFlag struct{ f *flag.Flag }

func (a aliasFlag) String() string {
	if a.f == nil {
		return ""
	}
	return a.f.Value.String()
}
func (a aliasFlag) Set(s string) error { return a.f.Value.Set(s) }

// limitFlag is --limit ACTION=N, repeatable.
type limitFlag map[string]int

func (l limitFlag) String() string { return "" }

func (l limitFlag) Set(s string) error {
	name, n, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want ACTION=N, got %q", s)
	}
	v, err := strconv.Atoi(n)
	if err != nil || v < 1 {
		return fmt.Errorf("%s: want a number of actions of at least 1, got %q", name, n)
	}
	if _, dup := l[name]; dup {
		return fmt.Errorf("%s given twice", name)
	}
	l[name] = v
	return nil
}

// checkLimits checks --limit against the worker's capacity and the
// actions it serves.
func checkLimits(limits map[string]int, capacity int, actions []string) error {
	for _, name := range slices.Sorted(maps.Keys(limits)) {
		n := limits[name]
		switch {
		case !slices.Contains(actions, name):
			return fmt.Errorf("--limit %s=%d: the worker has no handler for %s (it serves %s)", name, n, name, strings.Join(actions, ", "))
		case n > capacity:
			return fmt.Errorf("--limit %s=%d is above the worker's capacity, %d", name, n, capacity)
		}
	}
	return nil
}
