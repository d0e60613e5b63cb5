package main

import "context"

// The drain and undrain commands, --kafka form. (The --zk form is built
// on another branch in drain.go, with these names: on merge, keep its
// commands and send their --kafka case to kafkaDrain and kafkaUndrain,
// and drop this file.)

func drainCommand() command {
	return command{
		name:    "drain",
		summary: "take a worker out of service for good, letting it finish what it runs",
		usage:   "baton drain --kafka HOST:PORT[,...] [--prefix NAME] [TLS and SASL flags] [--wait [--timeout D]] NAME",
		about: `
Drains the worker named NAME (its --name): the control topic
NAME.workers under --prefix says it drains, and the worker, which reads
that topic, takes no new action, finishes those it runs, commits their
offsets, leaves its consumer groups (its partitions go to the other
workers, from the committed offsets) and exits 0, deleting its records
from the control topic. A drain never stops a running action. A worker
the control topic knows but that is not live is removed at once. SIGTERM,
unlike a drain, only stops a worker.

With --wait, it waits until the worker has left: exit 0 then; with
--timeout D too, it waits D at most, then prints what the worker still
runs and exits 1. (Kafka has no pins: --timeout only bounds --wait.)

Exit status: 0 once drained (or, without --wait, once the drain is
written), 1 if --wait ran out at --timeout, 2 for an unknown worker (the
message lists the known ones) or bad usage, 3 if Kafka cannot be
reached, 130 interrupted.`,
		run: (*cli).drain,
	}
}

func undrainCommand() command {
	return command{
		name:    "undrain",
		summary: "put a worker back in service",
		usage:   "baton undrain --kafka HOST:PORT[,...] [--prefix NAME] [TLS and SASL flags] NAME",
		about: `
Marks the worker named NAME available in the control topic NAME.workers
under --prefix. A worker that had begun to drain still leaves (it gave
its partitions up): start it again under its name.

Exit status: 0 once done, 2 for an unknown worker (the message lists the
known ones) or bad usage, 3 if Kafka cannot be reached.`,
		run: (*cli).undrain,
	}
}

func (c *cli) drain(ctx context.Context, args []string) error {
	cmd := drainCommand()
	fset := flagSet(cmd)
	z := c.addZKFlags(fset, false)
	k := c.addKafkaFlags(fset, z, false)
	wait := fset.Bool("wait", false, "wait until the worker has drained and left (at most --timeout)")
	timeout := fset.Duration("timeout", 0, "with --wait, wait `D` at most, like 5m (0: no timeout)")
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) != 1:
		return c.usageError(cmd, "want one worker NAME, got %d arguments", len(pos))
	case *timeout < 0:
		return c.usageError(cmd, "--timeout must not be negative, got %v", *timeout)
	case *timeout > 0 && !*wait:
		return c.usageError(cmd, "--timeout bounds --wait (Kafka has no pins to release): give --wait too")
	}
	if err := checkEngines(z, k, true); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	if !k.on() {
		return c.usageError(cmd, "--zk: not in this build; use --kafka")
	}
	ctx, stopSignals := c.interruptible(ctx)
	defer stopSignals()
	return c.kafkaDrain(ctx, k, pos[0], *wait, *timeout)
}

func (c *cli) undrain(ctx context.Context, args []string) error {
	cmd := undrainCommand()
	fset := flagSet(cmd)
	z := c.addZKFlags(fset, false)
	k := c.addKafkaFlags(fset, z, false)
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) != 1:
		return c.usageError(cmd, "want one worker NAME, got %d arguments", len(pos))
	}
	if err := checkEngines(z, k, true); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	if !k.on() {
		return c.usageError(cmd, "--zk: not in this build; use --kafka")
	}
	return c.kafkaUndrain(ctx, k, pos[0])
}
