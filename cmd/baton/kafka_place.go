package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/batonwf/baton/placement"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// kafkaAdmin opens the store of --kafka for drain and undrain: it
// creates no topic (a mistyped prefix has no workers).
func (c *cli) kafkaAdmin(ctx context.Context, k *kafkaFlags) (*kafkaBackend, error) {
	b, err := openKafkaBackend(ctx, k, false, c.stderr, runnerLogger(c.stderr))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// kafkaWorkerError is the message of an error of Drain or Undrain,
// naming the prefix, with its exit status.
func kafkaWorkerError(b *kafkaBackend, err error) error {
	var unk *kafkarunner.UnknownWorkerError
	if errors.As(err, &unk) {
		known := "no worker is live or known"
		if len(unk.Known) > 0 {
			known = "known: " + strings.Join(unk.Known, ", ")
		}
		return withCode(exitError, fmt.Errorf("no worker %q in %s (%s)", unk.Name, b.where(), known))
	}
	return withCode(engineExit(err), fmt.Errorf("%s: %v", b.where(), strings.TrimPrefix(err.Error(), "kafka: ")))
}

// kafkaDrain is 'baton drain --kafka K NAME [--wait] [--timeout D]': it
// marks the worker draining in the control topic, and with --wait waits
// until it has left (no member of the workers' group has its name, and
// the control topic holds nothing of it), at most timeout (0: none).
func (c *cli) kafkaDrain(ctx context.Context, k *kafkaFlags, name string, wait bool, timeout time.Duration) error {
	b, err := c.kafkaAdmin(ctx, k)
	if err != nil {
		return err
	}
	defer b.Close()
	st := b.kj.st
	if st == nil {
		return withCode(exitError, fmt.Errorf("no worker %q in %s (no topics under the prefix: no worker ever ran there)", name, b.where()))
	}
	if err := st.Drain(ctx, name); err != nil {
		return kafkaWorkerError(b, err)
	}
	fmt.Fprintf(c.stdout, "worker %s is draining: it takes no new action, finishes those it runs, commits, leaves its groups and exits 0 (its partitions go to the other workers)\n", name)
	if !wait {
		return nil
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		live, control, err := kafkaWorkerState(ctx, st, name)
		if err == nil && !live && control == nil {
			fmt.Fprintf(c.stdout, "worker %s drained and left\n", name)
			return nil
		}
		select {
		case <-ctx.Done():
			return exitWith(exitInterrupted)
		case <-deadline:
			what := "its load is unknown"
			if control != nil && !control.LoadAt.IsZero() {
				what = fmt.Sprintf("it runs %d action%s", control.Running, plural(control.Running))
				for _, n := range slices.Sorted(maps.Keys(control.Load)) {
					if r := control.Load[n].Running; r > 0 {
						what += fmt.Sprintf(", %s: %d", n, r)
					}
				}
			}
			fmt.Fprintf(c.stdout, "worker %s has not drained after %v: %s\n", name, timeout, what)
			return exitWith(exitFailed)
		case <-tick.C:
		}
	}
}

// kafkaWorkerState says whether a member of the workers' group has the
// name, and what the control topic holds of it (nil: nothing).
func kafkaWorkerState(ctx context.Context, st *kafkarunner.Store, name string) (bool, *kafkarunner.ControlState, error) {
	ws, err := st.Workers(ctx)
	if err != nil {
		return false, nil, err
	}
	live := slices.ContainsFunc(ws, func(w kafkarunner.WorkerInfo) bool { return w.Name == name })
	control, _, err := st.Control(ctx)
	if err != nil {
		return live, nil, err
	}
	if cs, ok := control[name]; ok {
		return live, &cs, nil
	}
	return live, nil, nil
}

// kafkaUndrain is 'baton undrain --kafka K NAME'.
func (c *cli) kafkaUndrain(ctx context.Context, k *kafkaFlags, name string) error {
	b, err := c.kafkaAdmin(ctx, k)
	if err != nil {
		return err
	}
	defer b.Close()
	if b.kj.st == nil {
		return withCode(exitError, fmt.Errorf("no worker %q in %s (no topics under the prefix: no worker ever ran there)", name, b.where()))
	}
	if err := b.kj.st.Undrain(ctx, name); err != nil {
		return kafkaWorkerError(b, err)
	}
	fmt.Fprintf(c.stdout, "worker %s is available (a worker that had begun to drain still leaves: start it again)\n", name)
	return nil
}

// writeKafkaWorkers writes the workers of a prefix for 'baton status
// --kafka': one line each (name, state, capacity, running, quarantines),
// from the workers' group's description and the control topic. A worker
// the control topic knows but the group does not is down.
func writeKafkaWorkers(ctx context.Context, w io.Writer, st *kafkarunner.Store, now time.Time) error {
	ws, err := st.Workers(ctx)
	if err != nil {
		return err
	}
	control, bad, err := st.Control(ctx)
	if err != nil {
		return err
	}
	type row struct {
		name, state, capacity, running, quarantined string
	}
	var rows []row
	seen := map[string]bool{}
	for _, wi := range ws {
		if seen[wi.Name] {
			continue
		}
		seen[wi.Name] = true
		cs, known := control[wi.Name]
		r := row{name: wi.Name, state: placement.StateAvailable.String(), capacity: strconv.Itoa(wi.Capacity), running: "?", quarantined: "-"}
		if wi.Draining || cs.State == placement.StateDraining {
			r.state = placement.StateDraining.String()
		}
		if known && !cs.LoadAt.IsZero() {
			r.running = strconv.Itoa(cs.Running)
		}
		var qs []string
		for _, n := range slices.Sorted(maps.Keys(cs.Quarantined)) {
			if until := cs.Quarantined[n]; until.After(now) {
				qs = append(qs, n+" until "+until.Local().Format("15:04:05"))
			}
		}
		if len(qs) > 0 {
			r.quarantined = strings.Join(qs, ", ")
			if r.state == placement.StateAvailable.String() {
				r.state = placement.StateQuarantined.String()
			}
		}
		rows = append(rows, r)
	}
	for _, n := range slices.Sorted(maps.Keys(control)) {
		if seen[n] {
			continue
		}
		cs := control[n]
		rows = append(rows, row{name: n, state: placement.StateDown.String(), capacity: strconv.Itoa(cs.Capacity), running: "-", quarantined: "-"})
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "no workers")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKER\tSTATE\tCAPACITY\tRUNNING\tQUARANTINED")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.name, r.state, r.capacity, r.running, r.quarantined)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if bad > 0 {
		fmt.Fprintf(w, "WARNING: %d record%s of the control topic do%s not parse: skipped\n", bad, plural(bad), map[bool]string{true: "es", false: ""}[bad == 1])
	}
	return nil
}

// writePlacementWarnings warns, per action topic, of what placement
// cannot do on Kafka among the actions waiting there: copies of a node
// with replicas that outnumber the workers (they share workers), and
// affinities that are strict or set a wait (neither applies).
func writePlacementWarnings(w io.Writer, queues []kafkarunner.Queue) {
	for _, q := range queues {
		if q.Copies > 1 && q.WorkersErr == nil && q.Workers < q.Copies {
			fmt.Fprintf(w, "WARNING: %s: replicas of %d copies wait, but %d worker%s consume%s %s: copies go to distinct partitions, and some will run on the same worker\n",
				q.Action, q.Copies, q.Workers, plural(q.Workers), map[bool]string{true: "s", false: ""}[q.Workers == 1], q.Topic)
		}
		if q.Unmapped > 0 {
			fmt.Fprintf(w, "NOTE: %s: %d waiting action%s carr%s a strict affinity or a wait: on Kafka a key's actions go to the one reader of its partition, so strictness, wait and spill do not apply\n",
				q.Action, q.Unmapped, plural(int(q.Unmapped)), map[bool]string{true: "ies", false: "y"}[q.Unmapped == 1])
		}
	}
}
