package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// transport is the restarter's runner.Transport: save the transition,
// then dispatch (W1-W4 in the package doc).
type transport struct{ r *Runner }

var _ runner.Transport[struct{}] = transport{}

// Commit writes the state (W1), publishes the stops (W2), produces the
// actions and arms the timers (W3), and marks the version dispatched (W4).
func (t transport) Commit(ctx context.Context, tr job.Transition, _ struct{}) error {
	r := t.r
	if err := r.cfg.fault(faultCommit, "", &tr); err != nil {
		return err
	}
	if err := store.Commit(ctx, r.st, tr); err != nil {
		return err
	}
	if err := r.cfg.fault(faultCommitted, "", &tr); err != nil {
		return err
	}
	id := tr.Job.ID()
	if len(tr.Stops) > 0 {
		r.stopActions(ctx, tr.Job, tr.Stops)
	}
	held, err := r.dispatch(ctx, tr.Actions)
	if err != nil {
		return fmt.Errorf("job %s v%d: %w: %w", id, tr.Job.Version(), runner.ErrNotDispatched, err)
	}
	r.arm(tr.Timers)
	if !held {
		r.st.markDispatched(id, tr.Job.Version())
	}
	return nil
}

// Dispatch dispatches again the actions that may not have been
// dispatched, and arms the timers: what recovery and redelivered results
// ask for. Of the outstanding actions it is given, those the job's head
// says were dispatched are not produced again; an at-most-once one that
// may have been is reported lost instead.
func (t transport) Dispatch(ctx context.Context, acts []job.Action, ts []job.Timer) error {
	r := t.r
	byJob := map[job.ID][]job.Action{}
	var order []job.ID
	for _, a := range acts {
		if _, ok := byJob[a.JobID]; !ok {
			order = append(order, a.JobID)
		}
		byJob[a.JobID] = append(byJob[a.JobID], a)
	}
	var errs []error
	for _, id := range order {
		ids, all, version := r.st.suspects(id)
		var todo []job.Action
		var lost []input
		for _, a := range byJob[id] {
			switch {
			case !all && !ids[a.ID]:
			case a.AtMostOnce:
				lost = append(lost, failure(runner.LostResult(a, r.o.Clock.Now())))
			default:
				todo = append(todo, a)
			}
		}
		if len(lost) > 0 {
			r.stats.lost.Add(int64(len(lost)))
			r.log.Info("at-most-once actions that may have been dispatched are reported lost", "job", id, "actions", len(lost))
			r.handBack(id, lost)
		}
		held, err := r.dispatch(ctx, todo)
		if err != nil {
			errs = append(errs, fmt.Errorf("job %s: %w", id, err))
			continue
		}
		if len(lost) == 0 && !held && version > 0 {
			r.st.markDispatched(id, version)
		}
	}
	r.arm(ts)
	return errors.Join(errs...)
}

func failure(res job.Result) input {
	return input{in: inbound{id: res.JobID, kind: typeResult, result: res}, offset: -1}
}

// handBack hands inputs the transport made (lost or oversized actions) to
// the loop of their job's partition. A loop that is gone is no loss: the
// next owner finds the same actions outstanding and does the same.
func (r *Runner) handBack(id job.ID, ins []input) {
	if l := r.loopFor(id); l != nil {
		l.hand(ins...)
	}
}

// arm arms timers in the loops of their jobs' partitions.
func (r *Runner) arm(ts []job.Timer) {
	for _, t := range ts {
		if l := r.loopFor(t.JobID); l != nil {
			l.arm([]job.Timer{t})
		}
	}
}

// dispatch produces actions to their topics and waits for every in-sync
// replica. An action too large for one message is not produced: it fails,
// Final, saying why (held reports that some were, and that their failures
// wait in the partition's loop).
func (r *Runner) dispatch(ctx context.Context, acts []job.Action) (held bool, err error) {
	if len(acts) == 0 {
		return false, nil
	}
	var specs []topicSpec
	seen := map[string]bool{}
	for _, a := range acts {
		if !seen[a.Name] {
			seen[a.Name] = true
			specs = append(specs, r.st.adm.actionSpec(a.Name))
		}
	}
	infos, err := r.st.adm.ensure(ctx, specs...)
	if err != nil {
		return false, err
	}
	limits := map[string]int{}
	for i, s := range specs {
		limits[s.name] = r.st.limit
		if mm := infos[i].maxMessage; mm > 0 && mm-2*messageOverhead < r.st.limit {
			limits[s.name] = mm - 2*messageOverhead
		}
	}
	msgs := make([]kafka.Message, 0, len(acts))
	for _, a := range acts {
		topic := r.cfg.actionTopic(a.Name)
		m := actionMessage(topic, a)
		if n := size(m); n > limits[topic] {
			res := a.Fail(fmt.Sprintf("the action is %d bytes as a message (its payload and inputs), over the limit of %d bytes of topic %s; it was not run",
				n, limits[topic], topic))
			res.Final, res.At = true, r.o.Clock.Now()
			r.stats.oversized.Add(1)
			r.log.Warn("action too large for a message: failed", "job", a.JobID, "action", a.ID, "bytes", n, "limit", limits[topic])
			r.handBack(a.JobID, []input{failure(res)})
			held = true
			continue
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return held, nil
	}
	if err := r.aw.WriteMessages(ctx, msgs...); err != nil {
		return held, fmt.Errorf("kafka: produce %d actions: %w", len(msgs), writeError(err))
	}
	return held, nil
}

// stopActions tells the workers running acts of j to stop: this process's
// at once, the others through the stops topic (best effort).
func (r *Runner) stopActions(ctx context.Context, j job.Job, acts []job.Action) {
	ids := make([]string, len(acts))
	for i, a := range acts {
		ids[i] = a.ID
	}
	if r.w != nil {
		r.w.stop(j.ID(), j.Incarnation(), ids)
	}
	m := stopMessage(j.ID(), j.Incarnation(), ids)
	if size(m) > r.st.limit {
		r.log.Warn("too many actions to stop in one notice: the workers of other processes are not told", "job", j.ID(), "actions", len(ids))
		return
	}
	if err := r.sw.WriteMessages(ctx, m); err != nil {
		r.log.Warn("publishing a stop notice (the actions run to their end; their results are ignored)", "job", j.ID(), "err", writeError(err))
	}
}
