package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

func historyCommand() command {
	return command{
		name:    "history",
		summary: "show the steps of a job: the results each one applied",
		usage:   "baton history [--store PATH | --zk HOST:PORT[,...] [--root PATH] | --kafka HOST:PORT[,...] [--prefix NAME]] JOB",
		about: `
Shows every version of JOB: how it was created, then for each step the
results it applied (action, ok or failed with the message, output cut to
60 bytes) and the job's state after it.`,
		run: (*cli).history,
	}
}

func (c *cli) history(ctx context.Context, args []string) error {
	cmd := historyCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	z := c.addZKFlags(fset, true)
	k := c.addKafkaFlags(fset, z, true)
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) != 1:
		return c.usageError(cmd, "want one job ID, got %d arguments", len(pos))
	}
	if err := checkEngines(z, k, false); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	id := job.ID(pos[0])
	if err := checkID(id); err != nil {
		return withCode(exitError, err)
	}
	b, err := c.openBackend(ctx, *storeArg, z, k, openOptions{mode: readOnly})
	if err != nil {
		return err
	}
	defer b.Close()
	h, err := loadHistory(ctx, b, id)
	if err != nil {
		return withCode(exitError, err)
	}
	if err := writeHistory(c.stdout, h); err != nil {
		return fmt.Errorf("job %s in %s: %v", id, b.where(), err)
	}
	return nil
}

// writeHistory prints h: a header, then one block per version.
//
//	job hello-1: 3 versions, now succeeded
//	v1  created: running, 0/2 actions settled, 1 dispatched
//	v2  running, 1/2 actions settled
//	      seq[0]#1 log: ok
//	v3  succeeded, 2/2 actions settled
//	      seq[1]#1 fail: failed: boom
func writeHistory(w io.Writer, h store.History) error {
	names := map[string]string{} // node path -> action name
	h.Origin.Walk(func(n job.NodeInfo) bool {
		if n.Kind == ast.KindAct {
			names[n.Path] = n.Action
		}
		return true
	})
	latest, err := h.Latest()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "job %s: %d version%s, now %s\n", h.Origin.ID(), 1+len(h.Steps), plural(1+len(h.Steps)), latest.Status())
	fmt.Fprintf(w, "v%d  created: %s, %d dispatched\n", h.Origin.Version(), stateOf(h.Origin), h.Origin.Running())
	j := h.Origin
	armed := map[string]bool{}
	for _, t := range h.Origin.Timers() {
		armed[t.ID] = true
		fmt.Fprintf(w, "      waits: %s due %s\n", t.ID, t.Due.UTC().Format(time.RFC3339Nano))
	}
	for _, step := range h.Steps {
		if j, err = job.Replay(j, []job.Step{step}); err != nil {
			return err
		}
		fmt.Fprintf(w, "v%d  %s\n", step.Version, stateOf(j))
		for _, r := range step.Results {
			if r.ActionID == job.CancelResult(j.ID(), "-").ActionID {
				fmt.Fprintf(w, "      cancelled: %s\n", job.Clip(r.Error))
				continue
			}
			if strings.Contains(r.ActionID, "@") {
				fmt.Fprintf(w, "      %s: timer fired at %s\n", r.ActionID, r.At.UTC().Format(time.RFC3339Nano))
				continue
			}
			name := "?"
			if p, _, err := job.SplitActionID(r.ActionID); err == nil {
				name = names[p]
			}
			fmt.Fprintf(w, "      %s %s: %s\n", r.ActionID, name, outcome(r))
		}
		// The waits this step asked for: retries of failed attempts and
		// deadlines of nodes that started.
		now := map[string]bool{}
		for _, t := range j.Timers() {
			now[t.ID] = true
			if !armed[t.ID] {
				fmt.Fprintf(w, "      waits: %s due %s\n", t.ID, t.Due.UTC().Format(time.RFC3339Nano))
			}
		}
		armed = now
	}
	return nil
}

// stateOf is a job's status and progress: "running, 1/6 actions settled".
func stateOf(j job.Job) string {
	settled, total := j.Progress()
	s := fmt.Sprintf("%s, %d/%d actions settled", j.Status(), settled, total)
	if f, ok := j.Failure(); ok {
		s += " (" + f.String() + ")"
	}
	return s
}

// outcome is "ok", "ok -> OUTPUT" or "failed: MESSAGE", clipped, with
// the failure's kind in brackets.
func outcome(r job.Result) string {
	switch {
	case r.Failed() && r.Kind != "":
		return "failed [" + r.Kind + "]: " + job.Clip(r.Error)
	case r.Failed():
		return "failed: " + job.Clip(r.Error)
	case len(r.Output) > 0:
		return "ok -> " + job.Clip(string(r.Output))
	}
	return "ok"
}
