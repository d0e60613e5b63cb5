package main

import (
	"context"
	"fmt"
	"io"

	"github.com/batonwf/baton/placement"
)

func placementCommand() command {
	return command{
		name:    "placement",
		summary: "show or set the cluster's placement settings",
		usage:   "baton placement --zk HOST:PORT[,...] [--root PATH] [--auth USER [--auth-file FILE]] [--strategy spread|pack] [--wait D] [--quarantine-after N] [--quarantine-share P]",
		about: `
Shows the placement settings of the workers of a ZooKeeper root, or sets
those given; every worker follows a change at once. They are kept in one
node, ROOT/placement, written by compare-and-swap, so two changes made at
once both apply.

--strategy orders the workers that may take an action without an
affinity key: spread (the default) gives it to the worker with the
largest free share of its capacity, so workers of mixed capacities fill
evenly; pack to the fullest worker with a free slot, so idle workers can
be scaled in. --wait is how long an action with a soft affinity key that
sets no wait of its own waits for its busy holder before it goes to the
next worker (default 2s). --quarantine-after is how many failures in a
row of one action name make a worker stop taking that name while other
workers succeed at it (default 5); --quarantine-share is the most of a
name's workers, in percent, quarantined for it at once (default 20; never
the last one). See docs/placement.md.

Exit status: 0 once shown or set, 2 for bad usage (an unknown strategy
lists the valid ones), 3 if ZooKeeper cannot be reached.`,
		run: (*cli).placement,
	}
}

func (c *cli) placement(ctx context.Context, args []string) error {
	cmd := placementCommand()
	fset := flagSet(cmd)
	f := c.addAdminFlags(fset, false)
	strategy := fset.String("strategy", "", "set the strategy `S` for actions without an affinity key: spread or pack")
	wait := fset.Duration("wait", 0, "set the default wait `D` of soft affinity keys for a busy holder, like 2s (0: none)")
	after := fset.Int("quarantine-after", 0, "set how many failures `N` in a row of an action name quarantine a worker for it")
	share := fset.Int("quarantine-share", 0, "set the most of a name's workers, `P` percent (1 to 100), quarantined for it at once")
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) != 0:
		return c.usageError(cmd, "takes no arguments, got %d", len(pos))
	case *wait < 0:
		return c.usageError(cmd, "--wait must not be negative, got %v", *wait)
	case given(fset, "quarantine-after") && *after < 1:
		return c.usageError(cmd, "--quarantine-after must be at least 1, got %d", *after)
	case given(fset, "quarantine-share") && (*share < 1 || *share > 100):
		return c.usageError(cmd, "--quarantine-share must be from 1 to 100 (percent), got %d", *share)
	}
	var st placement.Strategy
	if given(fset, "strategy") {
		var err error
		if st, err = placement.ParseStrategy(*strategy); err != nil {
			return c.usageError(cmd, "--strategy: unknown strategy %q (valid: spread, pack)", *strategy)
		}
	}
	b, err := c.openAdmin(ctx, cmd, f)
	if err != nil {
		return err
	}
	defer b.Close()
	set := false
	for _, n := range []string{"strategy", "wait", "quarantine-after", "quarantine-share"} {
		set = set || given(fset, n)
	}
	var s placement.Settings
	if set {
		s, err = b.st.UpdateSettings(ctx, func(s *placement.Settings) error {
			if given(fset, "strategy") {
				s.Strategy = st
			}
			if given(fset, "wait") {
				s.Wait = *wait
			}
			if given(fset, "quarantine-after") {
				s.Quarantine.After = *after
			}
			if given(fset, "quarantine-share") {
				s.Quarantine.SharePercent = *share
			}
			return nil
		})
	} else {
		s, err = b.st.Settings(ctx)
	}
	if err != nil {
		return withCode(zkExit(err), fmt.Errorf("placement settings in %s: %v", b.where(), err))
	}
	writeSettings(c.stdout, s)
	return nil
}

// writeSettings prints the placement settings, a line each.
func writeSettings(w io.Writer, s placement.Settings) {
	q := s.Quarantine.WithDefaults()
	fmt.Fprintf(w, "strategy: %s\n", s.Strategy)
	fmt.Fprintf(w, "wait: %v (soft affinity keys' default wait for a busy holder)\n", s.Wait)
	fmt.Fprintf(w, "quarantine: after %d failures in a row while another worker succeeded within %v; for %v, doubling up to %v, reset by %d successes; at most %d%% of a name's workers at once\n",
		q.After, q.PeerWindow, q.First, q.Max, q.Reset, q.SharePercent)
}

// settingsLine is the settings on one line, for status.
func settingsLine(s placement.Settings) string {
	q := s.Quarantine.WithDefaults()
	return fmt.Sprintf("placement: strategy %s, wait %v, quarantine after %d failures (at most %d%% of a name's workers)", s.Strategy, s.Wait, q.After, q.SharePercent)
}
