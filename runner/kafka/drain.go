package kafka

import (
	"context"
	"errors"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
)

// errDrained is the cause of a runner's work ending because the control
// topic says it drains.
var errDrained = errors.New("kafka: the runner drains")

// watchControl reads the control topic from its start until ctx ends:
// it keeps the latest record of every worker (Runner.control), hands the
// others' loads to the worker (peers' successes, for quarantine), and
// calls drain once the runner's own admin state is draining. A record
// that does not parse is skipped, logged and counted.
func (r *Runner) watchControl(ctx context.Context, drain context.CancelCauseFunc) {
	spec := r.st.adm.controlSpec()
	if retrying().Retry(ctx, nil, func() error {
		_, err := r.st.adm.ensure(ctx, spec)
		if err != nil && ctx.Err() == nil {
			r.log.Error("the control topic (drains, loads): not watched yet", "topic", spec.name, "err", err)
		}
		return err
	}) != nil {
		return
	}
	rd := r.cfg.reader(spec.name, 0, r.st.limit)
	defer rd.Close()
	if err := rd.SetOffset(kafka.FirstOffset); err != nil {
		r.log.Error("reading the control topic", "err", err)
		return
	}
	for {
		m, err := r.cfg.fetch(ctx, rd)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Error("reading the control topic", "err", err)
			}
			return
		}
		r.mu.Lock()
		if r.control == nil {
			r.control = controlView{}
		}
		err = r.control.apply(m.Key, m.Value)
		name, _, _, _ := decodeControl(m.Key, m.Value)
		var cs ControlState
		if c := r.control[name]; c != nil {
			cs = *c
		}
		r.mu.Unlock()
		if err != nil {
			r.stats.badControl.Add(1)
			r.o.Hooks.Placed(runner.PlacementUnreadable, "")
			r.log.Warn("malformed record on the control topic: skipped", "topic", spec.name, "offset", m.Offset, "err", err)
			continue
		}
		if name == r.o.Name && cs.State == placement.StateDraining && !r.draining.Swap(true) {
			r.o.Hooks.Placed(runner.PlacementDraining, "")
			r.log.Info("draining: taking no more actions, finishing those that run, then leaving the groups", "worker", r.o.Name)
			drain(errDrained)
		}
		if r.w != nil && name != r.o.Name {
			r.w.peersChanged(cs, time.Now())
		}
	}
}

// controlSnapshot returns the control topic as this runner read it.
func (r *Runner) controlSnapshot() map[string]ControlState {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]ControlState, len(r.control))
	for n, cs := range r.control {
		out[n] = *cs
	}
	return out
}

// deregister deletes what the control topic says of the runner, once it
// drained: a process started under its name later starts afresh.
func (r *Runner) deregister(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.Timeout)
	defer cancel()
	w, err := r.st.controlWriter(ctx)
	if err == nil {
		err = w.WriteMessages(ctx, tombstones(r.o.Name)...)
	}
	if err != nil {
		r.log.Warn("drained, but deleting the worker's records from the control topic failed", "err", writeError(err))
		return
	}
	r.log.Info("drained: left the groups and deleted the worker's records", "worker", r.o.Name)
}
