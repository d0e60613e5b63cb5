package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/batonwf/baton/placement"
)

func drainCommand() command {
	return command{
		name:    "drain",
		summary: "take a worker out of service for good, letting it finish what it runs",
		usage:   "baton drain --zk HOST:PORT[,...] [--root PATH] [--auth USER [--auth-file FILE]] [--wait] [--timeout D] [--force] NAME",
		about: `
Drains the worker registered as NAME (its --name): its registration says
draining, and the worker, which sees it at once, claims nothing new but
the actions of the pins it holds (strict affinity keys: see
docs/placement.md); its soft keys go to other workers at once. Once it
runs nothing and holds no pin, it deletes its registration, prints how
many actions it finished and pins it released, and exits 0. A drain never
stops a running action. With --timeout D, its pins are released once it
has drained for D (they move to other workers) and it exits when its
running actions end. A worker that is down (its process gone) is removed
at once and its pins released. 'baton undrain NAME' makes a draining
worker available again. SIGTERM, unlike a drain, only stops a worker: it
keeps its name and its pins wait for it (its --grace).

A drain that would leave an action name that live workers run today with
no available worker is refused; --force drains it anyway (those actions
then wait for a worker that has a handler for them).

With --wait, it waits until the worker has deregistered: exit 0 then;
with --timeout too, it waits until D has passed at most, then prints what
the worker still runs and holds and exits 1.

Exit status: 0 once drained (or, without --wait, once the drain is
saved), 1 if --wait ran out at --timeout, 2 for an unknown worker (the
message lists the known ones), a refused drain or bad usage, 3 if
ZooKeeper cannot be reached, 130 interrupted.`,
		run: (*cli).drain,
	}
}

func undrainCommand() command {
	return command{
		name:    "undrain",
		summary: "put a drained or quarantined worker back in service",
		usage:   "baton undrain --zk HOST:PORT[,...] [--root PATH] [--auth USER [--auth-file FILE]] NAME",
		about: `
Makes the worker registered as NAME available again, live or down, and
lifts its quarantines (the action names it had stopped taking after
repeated failures). A worker still draining takes work again at once; one
that has deregistered already is gone: start it again instead.

Exit status: 0 once done, 2 for an unknown worker (the message lists the
known ones) or bad usage, 3 if ZooKeeper cannot be reached.`,
		run: (*cli).undrain,
	}
}

// zkAdminFlags are the flags of the commands that administer the workers
// of a ZooKeeper root (drain, undrain, keys, placement): --zk's, and
// --kafka's for those that have a Kafka form (drain, undrain).
type zkAdminFlags struct {
	z *zkFlags
	k *kafkaFlags // nil: no Kafka form
}

func (c *cli) addAdminFlags(fs *flag.FlagSet, kafka bool) zkAdminFlags {
	f := zkAdminFlags{z: c.addZKFlags(fs, false)}
	if kafka {
		f.k = c.addKafkaFlags(fs, f.z, false)
	}
	return f
}

// openAdmin checks the flags and connects: the root must exist.
func (c *cli) openAdmin(ctx context.Context, cmd command, f zkAdminFlags) (*zkBackend, error) {
	if f.k == nil {
		if err := f.z.check(true); err != nil {
			return nil, c.usageError(cmd, "%v", err)
		}
	} else if err := checkEngines(f.z, f.k, true); err != nil {
		return nil, c.usageError(cmd, "%v", err)
	}
	if f.k.on() {
		return nil, c.usageError(cmd, "--kafka: not available for %s yet; use --zk", cmd.name)
	}
	return openZKBackend(ctx, f.z, true, runnerLogger(c.stderr))
}

func (c *cli) drain(ctx context.Context, args []string) error {
	cmd := drainCommand()
	fset := flagSet(cmd)
	f := c.addAdminFlags(fset, true)
	wait := fset.Bool("wait", false, "wait until the worker has drained and deregistered (at most --timeout)")
	timeout := fset.Duration("timeout", 0, "release the worker's pins once it has drained for `D`, like 5m, and exit when its running actions end; with --wait, wait that long at most (0: no timeout)")
	force := fset.Bool("force", false, "drain even when no other available worker runs some of its actions")
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) != 1:
		return c.usageError(cmd, "want one worker NAME, got %d arguments", len(pos))
	case *timeout < 0:
		return c.usageError(cmd, "--timeout must not be negative, got %v", *timeout)
	}
	name := pos[0]
	ctx, stopSignals := c.interruptible(ctx)
	defer stopSignals()
	b, err := c.openAdmin(ctx, cmd, f)
	if err != nil {
		return err
	}
	defer b.Close()
	res, err := b.drainWorker(ctx, name, *force, *timeout)
	if err != nil {
		return workerError(b, err)
	}
	switch {
	case res.Removed:
		fmt.Fprintf(c.stdout, "worker %s was down: removed, %d pin%s released\n", name, res.PinsReleased, plural(res.PinsReleased))
		return nil
	case res.Already:
		fmt.Fprintf(c.stdout, "worker %s was draining already", name)
	default:
		fmt.Fprintf(c.stdout, "worker %s is draining: it takes nothing new but its pins' actions, and deregisters once it runs nothing and holds no pin", name)
	}
	if *timeout > 0 {
		fmt.Fprintf(c.stdout, "; its pins are released after %v", *timeout)
	}
	fmt.Fprintln(c.stdout)
	if !*wait {
		return nil
	}
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if *timeout > 0 {
		wctx, cancel = context.WithTimeout(ctx, *timeout)
	}
	defer cancel()
	err = b.st.WaitDeregistered(wctx, name)
	switch {
	case err == nil:
		fmt.Fprintf(c.stdout, "worker %s drained: deregistered\n", name)
		return nil
	case ctx.Err() != nil:
		c.errorf("interrupted: worker %s goes on draining", name)
		return exitWith(exitInterrupted)
	case wctx.Err() == nil:
		return withCode(zkExit(err), fmt.Errorf("wait for worker %s in %s: %v", name, b.where(), err))
	}
	// The timeout: one more look, then what it still runs and holds.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer rcancel()
	ws, err := b.st.Workers(rctx)
	if err != nil {
		return withCode(zkExit(err), fmt.Errorf("list workers in %s: %v", b.where(), err))
	}
	for _, w := range ws {
		if w.Name == name && (w.State != placement.StateNone || w.Unreadable) {
			fmt.Fprintf(c.stdout, "worker %s has not drained after %v: it runs %d action%s (%s) and holds %d pin%s\n",
				name, *timeout, len(w.Running), plural(len(w.Running)), claimList(w.Running), w.Pins, plural(w.Pins))
			return exitWith(exitFailed)
		}
	}
	fmt.Fprintf(c.stdout, "worker %s drained: deregistered\n", name)
	return nil
}

func (c *cli) undrain(ctx context.Context, args []string) error {
	cmd := undrainCommand()
	fset := flagSet(cmd)
	f := c.addAdminFlags(fset, true)
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) != 1:
		return c.usageError(cmd, "want one worker NAME, got %d arguments", len(pos))
	}
	b, err := c.openAdmin(ctx, cmd, f)
	if err != nil {
		return err
	}
	defer b.Close()
	lifted, err := b.st.Undrain(ctx, pos[0])
	if err != nil {
		return workerError(b, err)
	}
	fmt.Fprintf(c.stdout, "worker %s is available", pos[0])
	if lifted > 0 {
		fmt.Fprintf(c.stdout, "; %d quarantine%s lifted", lifted, plural(lifted))
	}
	fmt.Fprintln(c.stdout)
	return nil
}
