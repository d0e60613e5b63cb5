package kafka

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// errLoopGone is the answer to an input handed to a partition loop that
// stopped (its partition went to another restarter, or the runner is
// stopping) before applying it: the sender produces it to the restarter
// topic instead.
var errLoopGone = errors.New("kafka: the partition's loop stopped before applying this")

// input is one thing a partition loop applies: a message of the restarter
// topic, or something handed in within the process (a local worker's
// result, a Submit, a Cancel, a Deliver, a timer's firing, an action
// reported lost or too large).
type input struct {
	in     inbound
	offset int64      // of a message; -1 for the others
	ack    chan error // for an input handed in that waits for its outcome
}

// loop is the restarter's loop of one partition it owns: it applies the
// inputs of its jobs, one batch at a time, and commits the partition's
// offset after each.
type loop struct {
	r     *Runner
	part  int
	gen   int32
	token uint64

	mu      sync.Mutex
	closed  bool
	pending []input // handed in, not yet taken
	timers  timerHeap
	armed   map[timerKey]bool
	wake    chan struct{}
}

type timerKey struct {
	id    job.ID
	timer string
	due   int64
}

type timerHeap []job.Timer

var _ heap.Interface = (*timerHeap)(nil)

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].Due.Before(h[j].Due) }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(job.Timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

func (l *loop) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// hand queues inputs for the loop; it reports false if the loop stopped.
func (l *loop) hand(ins ...input) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.pending = append(l.pending, ins...)
	l.poke()
	return true
}

// arm arms timers (again: a timer armed twice fires twice, which the
// reducer ignores, but the loop arms each once).
func (l *loop) arm(ts []job.Timer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range ts {
		k := timerKey{t.JobID, t.ID, t.Due.UnixNano()}
		if l.armed[k] {
			continue
		}
		l.armed[k] = true
		heap.Push(&l.timers, t)
	}
	l.poke()
}

// disarm drops the timers of job id (it was deleted).
func (l *loop) disarm(id job.ID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := l.timers[:0]
	for _, t := range l.timers {
		if t.JobID == id {
			delete(l.armed, timerKey{t.JobID, t.ID, t.Due.UnixNano()})
			continue
		}
		kept = append(kept, t)
	}
	l.timers = kept
	heap.Init(&l.timers)
}

// take returns the inputs handed in and the timers due, and when the next
// timer is due (zero if none).
func (l *loop) take(now time.Time) ([]input, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ins := l.pending
	l.pending = nil
	for len(l.timers) > 0 && !l.timers[0].Due.After(now) {
		t := heap.Pop(&l.timers).(job.Timer)
		delete(l.armed, timerKey{t.JobID, t.ID, t.Due.UnixNano()})
		ins = append(ins, input{in: inbound{id: t.JobID, kind: typeResult, result: t.Fire(now)}, offset: -1})
	}
	var next time.Time
	if len(l.timers) > 0 {
		next = l.timers[0].Due
	}
	return ins, next
}

// close stops the loop taking inputs and answers those it holds.
func (l *loop) close() {
	l.mu.Lock()
	l.closed = true
	ins := l.pending
	l.pending = nil
	l.mu.Unlock()
	for _, in := range ins {
		if in.ack != nil {
			in.ack <- errLoopGone
		}
	}
}

// loopFor returns the loop of the partition of job id, if this runner owns
// it.
func (r *Runner) loopFor(id job.ID) *loop {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loops[partitionOf(id, r.st.nparts)]
}

// retrying is the back-off of what the restarter and the worker try
// again until it passes (claiming a partition, reading its end, recovering
// and applying jobs, creating topics, delivering results): from 50ms,
// doubling, at most 2s, jittered.
func retrying() runner.Backoff {
	return runner.Backoff{Base: 50 * time.Millisecond, Max: 2 * time.Second}
}

// sleep waits d, or until ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// serveRestarter is the restarter's serve: it claims the partition,
// rebuilds its jobs, recovers them, and applies the partition's inputs
// until the generation or the runner ends.
func (r *Runner) serveRestarter(ctx, gctx context.Context, c committer, gen int32, topic string, part int, offset int64) {
	live, cancel := context.WithCancel(ctx)
	defer cancel()
	stopLive := context.AfterFunc(gctx, cancel)
	defer stopLive()
	log := r.log.With("partition", part)

	var tok uint64
	var ids []job.ID
	if retrying().Retry(live, nil, func() error {
		var err error
		if tok, ids, err = r.st.claim(live, part, gen, true, r.o.Name); err != nil && live.Err() == nil {
			log.Warn("claiming the state partition", "err", err)
		}
		return err
	}) != nil {
		return // live ended
	}
	l := &loop{r: r, part: part, gen: gen, token: tok, armed: map[timerKey]bool{}, wake: make(chan struct{}, 1)}
	defer func() { r.st.release(part, l.token) }() // the token of its last claim: it may claim again
	r.mu.Lock()
	r.loops[part] = l
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		if r.loops[part] == l {
			delete(r.loops, part)
		}
		r.mu.Unlock()
		l.close()
	}()
	log.Debug("partition taken over", "unfinished", len(ids), "offset", offset)
	if !r.o.noResume {
		r.recoverJobs(live, l, ids)
	}

	// The backlog: what waits in the partition as it is taken over (a
	// cancel sent while no restarter ran, results of workers of other
	// processes). It is applied, in offset order, before anything handed
	// in within this process (a local worker's result, a timer's firing):
	// those came after it.
	var backlog int64
	if retrying().Retry(live, nil, func() error {
		var err error
		if backlog, err = r.st.backlogEnd(live, topic, part, offset); err != nil && live.Err() == nil {
			log.Warn("reading the restarter partition's end", "err", err)
		}
		return err
	}) != nil {
		return // live ended
	}

	rd := r.cfg.reader(topic, part, r.st.limit)
	defer rd.Close()
	if err := rd.SetOffset(offset); err != nil {
		log.Error("reading the restarter partition", "err", err)
		return
	}
	msgs := make(chan kafka.Message, 256)
	go func() {
		defer close(msgs)
		for {
			m, err := r.cfg.fetch(live, rd)
			if err != nil {
				if live.Err() == nil {
					log.Error("reading the restarter partition", "err", err)
				}
				return
			}
			select {
			case msgs <- m:
			case <-live.Done():
				return
			}
		}
	}()

	// The next timer (or sweep) is armed on the runner's clock, for the
	// time left until it is due by that clock; it wakes the loop through
	// due, and is armed again only when the next due time changes.
	due := make(chan struct{}, 1)
	var armed runner.Timer
	var armedFor time.Time
	defer func() {
		if armed != nil {
			armed.Stop()
		}
	}()
	clock := r.o.Clock
	inBacklog := backlog > 0
	retention := r.cfg.retention()
	var nextSweep time.Time // now: the partition's first sweep comes after its backlog
	for {
		var ins []input
		var next time.Time
		if !inBacklog {
			now := clock.Now()
			if retention > 0 && !now.Before(nextSweep) {
				nextSweep = now.Add(sweepEvery(retention))
				if r.sweep(live, l, log) {
					nextSweep = now // more are due: after this batch
				}
				if live.Err() != nil {
					return
				}
			}
			ins, next = l.take(now)
			if retention > 0 && (next.IsZero() || nextSweep.Before(next)) {
				next = nextSweep
			}
		}
		var last int64 = -1
		if len(ins) == 0 {
			wake, fire := l.wake, (<-chan struct{})(due)
			if inBacklog {
				wake, fire = nil, nil // only the backlog, for now
			} else if !next.Equal(armedFor) {
				if armed != nil {
					armed.Stop()
					armed = nil
				}
				if !next.IsZero() {
					armed = clock.AfterFunc(max(next.Sub(clock.Now()), 0), func() {
						select {
						case due <- struct{}{}:
						default:
						}
					})
				}
				armedFor = next
			}
			select {
			case m, ok := <-msgs:
				if !ok {
					return
				}
				ins = append(ins, r.decode(log, m))
				last = m.Offset
			case <-wake:
				continue
			case <-fire:
				armedFor = time.Time{} // fired: arm the next one afresh
				continue
			case <-live.Done():
				return
			}
		}
	drain:
		for len(ins) < r.o.MaxBatch {
			select {
			case m, ok := <-msgs:
				if !ok {
					break drain
				}
				ins = append(ins, r.decode(log, m))
				last = m.Offset
			default:
				break drain
			}
		}
		if !r.apply(live, l, log, ins) {
			return // not applied: the messages are read again by the next owner
		}
		if last >= 0 {
			if err := c.commit(topic, part, last+1); err != nil {
				log.Warn("committing the restarter partition's offset (the generation ended?)", "offset", last+1, "err", err)
				return
			}
			if inBacklog && last+1 >= backlog {
				inBacklog = false
				log.Debug("backlog applied", "offset", last+1)
			}
		}
	}
}

// decode turns a restarter message into an input; a malformed one becomes
// an input that applies nothing (its offset is committed with the rest).
func (r *Runner) decode(log *slog.Logger, m kafka.Message) input {
	in, err := decodeInbound(m.Key, m.Value)
	if err != nil {
		r.stats.malformed.Add(1)
		log.Warn("malformed message on the restarter topic: skipped", "offset", m.Offset, "key", clip(m.Key), "err", err)
		return input{offset: m.Offset}
	}
	return input{in: in, offset: m.Offset}
}

func clip(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

// recoverJobs dispatches again what the jobs of a partition just taken
// over may not have dispatched, and arms their timers; it retries the jobs
// it could not recover for as long as the partition is owned.
func (r *Runner) recoverJobs(ctx context.Context, l *loop, ids []job.ID) {
	for n := 1; len(ids) > 0; n++ {
		var failed []job.ID
		for _, id := range ids {
			if _, err := r.eng.Recover(ctx, id); err != nil {
				if ctx.Err() != nil {
					return
				}
				r.log.Warn("recovering a job", "job", id, "err", err)
				failed = append(failed, id)
			}
		}
		ids = failed
		if len(ids) > 0 && retrying().Sleep(ctx, n) != nil {
			return
		}
	}
}

// apply applies a batch of inputs: grouped by job, the jobs in parallel.
// It returns once every job's inputs are applied (true), retrying what
// failed for a reason that may pass, or when ctx ends first (false).
func (r *Runner) apply(ctx context.Context, l *loop, log *slog.Logger, ins []input) bool {
	byJob := map[job.ID][]input{}
	var order []job.ID
	for _, in := range ins {
		if in.in.id == "" {
			continue // malformed
		}
		if _, ok := byJob[in.in.id]; !ok {
			order = append(order, in.in.id)
		}
		byJob[in.in.id] = append(byJob[in.in.id], in)
	}
	todo := order
	for n := 1; ; n++ {
		var mu sync.Mutex
		var failed []job.ID
		var wg sync.WaitGroup
		sem := make(chan struct{}, r.o.Appliers)
		rests := map[job.ID][]input{}
		for _, id := range todo {
			sem <- struct{}{}
			ins := byJob[id]
			wg.Go(func() {
				defer func() { <-sem }()
				rest, err := r.applyJob(ctx, l, log, id, ins)
				mu.Lock()
				rests[id] = rest
				if err != nil {
					failed = append(failed, id)
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		maps.Copy(byJob, rests)
		if len(failed) == 0 {
			return true
		}
		if retrying().Sleep(ctx, n) != nil {
			return false
		}
		if r.st.dirty(l.part) {
			tok, ids, err := r.st.claim(ctx, l.part, l.gen, false, r.o.Name)
			if err != nil {
				log.Warn("claiming the state partition again", "err", err)
				continue
			}
			l.token = tok
			r.recoverJobs(ctx, l, ids)
		}
		todo = failed
	}
}

// applyJob applies the inputs of one job, in order: submits and deletes
// one by one, the results and cancels between them in batches that fit
// one state record. It returns the
// inputs still to apply, and an error if they should be tried again.
// Inputs handed in with an ack are answered once, after their first try:
// their senders decide what a failure means.
func (r *Runner) applyJob(ctx context.Context, l *loop, log *slog.Logger, id job.ID, ins []input) ([]input, error) {
	answer := func(in input, err error) {
		if in.ack != nil {
			in.ack <- loopErr(ctx, err)
		}
	}
	for len(ins) > 0 {
		in := ins[0]
		if in.in.kind == typeSubmit || in.in.kind == typeDelete {
			var err error
			if in.in.kind == typeSubmit {
				err = r.create(ctx, log, in.in)
			} else {
				err = r.deleteJob(ctx, log, l, in.in)
			}
			if err != nil && retryable(err) && in.ack == nil {
				return unanswered(ins, loopErr(ctx, err)), err
			}
			answer(in, err)
			ins = ins[1:]
			continue
		}
		// A run of results and cancels, as large as one step may be.
		n, bytes := 0, 0
		for n < len(ins) && ins[n].in.kind != typeSubmit && ins[n].in.kind != typeDelete && n < r.o.MaxBatch {
			res := ins[n].in.result
			sz := len(res.ActionID) + len(res.Output) + len(res.Error) + len(res.Kind) + 32
			if n > 0 && bytes+sz > r.st.limit/2 {
				break
			}
			bytes += sz
			n++
		}
		run := ins[:n]
		err := r.applyResults(ctx, log, id, run)
		if err != nil && retryable(err) {
			return unanswered(ins, loopErr(ctx, err)), err
		}
		for _, in := range run {
			answer(in, err)
		}
		ins = ins[n:]
	}
	return nil, nil
}

// loopErr is the answer to a sender whose input failed with err: when
// the loop's own context ended meanwhile (its partition was taken away,
// or the runner stops), the failure says nothing of the input, only that
// this loop can no longer apply it: errLoopGone, so that the sender hands
// it to the partition's next owner through the restarter topic (a submit
// read again makes the same job). Without it, a submit that met a
// rebalance failed its caller with "context canceled" though the job
// would be created by the next owner.
func loopErr(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && !errors.Is(err, errLoopGone) {
		return fmt.Errorf("%w (%v)", errLoopGone, err)
	}
	return err
}

// unanswered answers the inputs of ins handed in with an ack (their
// senders retry as they see fit), and returns the others, to be tried
// again.
func unanswered(ins []input, err error) []input {
	var keep []input
	for _, in := range ins {
		if in.ack != nil {
			in.ack <- err
			continue
		}
		keep = append(keep, in)
	}
	return keep
}

// retryable reports whether an error of Apply may pass if tried again: it
// is not about the input itself.
func retryable(err error) bool {
	return !errors.Is(err, store.ErrNotFound) && !errors.Is(err, job.ErrCorrupt) && !errors.Is(err, job.ErrWrongJob) &&
		!errors.Is(err, store.ErrExists) && !errors.Is(err, errStale) && !errors.Is(err, store.ErrNoStep)
}

// errStale is the answer to a result for an earlier incarnation of its
// job.
var errStale = errors.New("kafka: result for an earlier incarnation of the job")

// applyResults applies results and cancels of job id through the engine.
func (r *Runner) applyResults(ctx context.Context, log *slog.Logger, id job.ID, run []input) error {
	var results []job.Result
	var j job.Job
	for _, in := range run {
		if in.in.hasInc && j.ID() == "" {
			if loaded, err := r.st.Load(ctx, id); err == nil {
				j = loaded
			}
		}
		if in.in.hasInc && j.ID() != "" && in.in.inc != j.Incarnation() {
			r.stats.stale.Add(1)
			log.Info("result for an earlier incarnation of its job: ignored", "job", id, "action", in.in.result.ActionID,
				"incarnation", hexInc(in.in.inc), "job incarnation", hexInc(j.Incarnation()))
			continue
		}
		results = append(results, in.in.result)
	}
	if len(results) == 0 {
		return fmt.Errorf("job %s: %w", id, errStale)
	}
	_, err := r.eng.Apply(ctx, id, results)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, runner.ErrNotDispatched):
		// The state is saved; its actions are dispatched by recovery,
		// before anything else of the partition goes on.
		log.Warn("actions not dispatched; dispatching them again", "job", id, "err", err)
		return r.recoverUntil(ctx, id)
	case errors.Is(err, store.ErrNotFound):
		r.stats.unknownJobs.Add(1)
		log.Warn("results for a job the partition does not hold: skipped", "job", id, "results", len(results), "first", results[0].ActionID)
	case !retryable(err):
		log.Error("results that cannot be applied: skipped", "job", id, "err", err)
	default:
		if ctx.Err() == nil {
			log.Warn("applying results; will try again", "job", id, "err", err)
		}
	}
	return err
}

// recoverUntil recovers job id (Engine.Recover: its actions dispatched
// again, its timers armed) until that passes or ctx ends; it returns nil
// then, or the last error, joined to ctx's.
func (r *Runner) recoverUntil(ctx context.Context, id job.ID) error {
	return retrying().Retry(ctx, nil, func() error {
		_, err := r.eng.Recover(ctx, id)
		return err
	})
}

// create makes the job a submit message asks for: job.New with the
// message's incarnation and start time (so that a submit read twice makes
// the same job), then Engine.Create.
func (r *Runner) create(ctx context.Context, log *slog.Logger, in inbound) error {
	tr, err := job.New(in.id, in.workflow, job.WithIncarnation(in.inc), job.StartedAt(in.started))
	if err != nil {
		r.stats.malformed.Add(1)
		log.Warn("submit of a workflow job.New refuses: skipped", "job", in.id, "err", err)
		return err
	}
	_, err = r.eng.Create(ctx, tr)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, runner.ErrNotDispatched):
		log.Warn("actions not dispatched; dispatching them again", "job", in.id, "err", err)
		return r.recoverUntil(ctx, in.id)
	case errors.Is(err, store.ErrExists):
		j, lerr := r.st.Load(ctx, in.id)
		if lerr == nil && j.Incarnation() == in.inc {
			// This submit, read again: its job may not have been
			// dispatched.
			_, rerr := r.eng.Recover(ctx, in.id)
			return rerr
		}
		log.Info("submit of a job ID in use: ignored", "job", in.id)
		return err
	}
	return err
}
