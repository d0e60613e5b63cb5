package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// worker runs the actions of a Runner's Registry: it is a member of the
// workers group, subscribed to the action topics of the Registry's names.
type worker struct {
	r    *Runner
	log  *slog.Logger
	sem  chan struct{} // action slots
	base context.Context
	// drop cancels base: the handlers still running are handed back.
	drop context.CancelFunc
	wg   sync.WaitGroup // handlers and their deliveries

	limits map[string]chan struct{} // slots per action name (Options.Limits)

	mu      sync.Mutex
	running map[string]*running  // by runKey
	stopped map[string]time.Time // runKeys told to stop, and when
	place   placeState           // load, progress and quarantines (place.go)
}

// running is an action this process runs.
type running struct {
	cancel  context.CancelCauseFunc
	waiters []func(done bool) // messages of the same action read meanwhile
}

// runKey names one attempt of one action of one incarnation of a job.
func runKey(id job.ID, inc uint64, actionID string) string {
	return actionKey(id, actionID) + "/" + hexInc(inc)
}

func newWorker(r *Runner) *worker {
	base, drop := context.WithCancel(context.Background())
	w := &worker{r: r, log: r.log, sem: make(chan struct{}, r.o.Capacity), base: base, drop: drop,
		limits: map[string]chan struct{}{}, running: map[string]*running{}, stopped: map[string]time.Time{}}
	for name, n := range r.o.Limits {
		w.limits[name] = make(chan struct{}, n)
	}
	w.place.init(r.o.Clock.Now())
	return w
}

// run works until ctx ends or work does (a drain); then it stops: the
// partitions take no new action, and what ended is committed. Once ctx
// ends, the actions in flight have DrainTimeout to end (then they are
// handed back); a drain alone waits for them. It leaves the group and
// joins it again, with the topics of the names it is not quarantined for,
// when a quarantine starts or ends, and after it was wedged.
func (w *worker) run(ctx, work context.Context) {
	r := w.r
	names := r.o.Registry.Names()
	specs := make([]topicSpec, 0, len(names))
	for _, n := range names {
		specs = append(specs, r.st.adm.actionSpec(n))
	}
	if len(names) == 0 {
		<-work.Done()
		return
	}
	if retrying().Retry(work, nil, func() error {
		_, err := r.st.adm.ensure(work, specs...)
		if err != nil && work.Err() == nil {
			w.log.Error("creating the action topics", "err", err)
		}
		return err
	}) != nil {
		return // work ended
	}
	var wg sync.WaitGroup
	listenCtx, stopListening := context.WithCancel(context.WithoutCancel(ctx))
	wg.Go(func() { w.listenStops(listenCtx) })
	wg.Go(func() { w.tend(listenCtx) })
	// Once ctx ends, the member's partitions wait for their actions in
	// flight, for at most the DrainTimeout; then the handlers are
	// dropped (their actions handed back).
	left, drained := make(chan struct{}), make(chan struct{})
	stopDrain := context.AfterFunc(ctx, func() {
		defer close(drained)
		runner.Drain(r.o.DrainTimeout, left, w.drop, w.log)
	})
	for work.Err() == nil {
		topics := w.topics()
		mctx, leave := context.WithCancelCause(work)
		abandon := make(chan struct{})
		w.joined(leave, abandon)
		if len(topics) == 0 {
			<-mctx.Done() // quarantined for every name: wait for one to end
		} else {
			m := &member{cfg: r.cfg, group: r.cfg.workerGroup(), topics: topics, log: w.log, timing: r.o.Groups,
				balancer: r.balancer(r.cfg.workerGroup()),
				serve: func(ctx, gctx context.Context, c committer, gen int32, topic string, part int, offset int64) {
					w.serve(ctx, gctx, abandon, c, gen, topic, part, offset)
				}}
			m.run(mctx)
		}
		cause := context.Cause(mctx)
		leave(nil)
		if work.Err() != nil {
			break
		}
		if errors.Is(cause, errWedged) {
			w.rejoinWhenFree(work)
		}
	}
	close(left)
	if !stopDrain() {
		<-drained
	}
	w.drop()
	w.wg.Wait()
	stopListening()
	wg.Wait()
}

// tracker follows the offsets of one partition read in one generation:
// the offset committed is the one after the longest run of actions that
// ended.
type tracker struct {
	mu      sync.Mutex
	pending []int64        // offsets read and not ended, in order
	ended   map[int64]bool // of pending
	next    int64          // the offset after the longest ended run; -1 before any
	running int            // actions of the partition running here (or being reported)
	idle    chan struct{}  // closed when running drops to 0, if someone waits
}

func newTracker() *tracker { return &tracker{ended: map[int64]bool{}, next: -1} }

func (t *tracker) add(off int64) {
	t.mu.Lock()
	t.pending = append(t.pending, off)
	t.mu.Unlock()
}

// begin counts an action of offset off that starts running; the func it
// returns says that it stopped running, and whether it ended (its offset
// may be committed) or was handed back.
func (t *tracker) begin(off int64) func(ended bool) {
	t.mu.Lock()
	t.running++
	t.mu.Unlock()
	return func(ended bool) {
		t.mu.Lock()
		t.running--
		if t.running == 0 && t.idle != nil {
			close(t.idle)
			t.idle = nil
		}
		t.mu.Unlock()
		if ended {
			t.done(off)
		}
	}
}

func (t *tracker) done(off int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended[off] = true
	i := 0
	for i < len(t.pending) && t.ended[t.pending[i]] {
		delete(t.ended, t.pending[i])
		t.next = t.pending[i] + 1
		i++
	}
	t.pending = t.pending[i:]
}

// frontier returns the offset to commit (-1: none yet).
func (t *tracker) frontier() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.next
}

// wait returns a channel closed once no action of the partition runs.
func (t *tracker) wait() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch := make(chan struct{})
	if t.running == 0 {
		close(ch)
		return ch
	}
	if t.idle == nil {
		t.idle = make(chan struct{})
	}
	return t.idle
}

// serve runs the actions of one partition of an action topic.
// abandon is closed when the worker gives up waiting for the actions
// in flight (it was wedged).
func (w *worker) serve(ctx, gctx context.Context, abandon <-chan struct{}, c committer, _ int32, topic string, part int, offset int64) {
	r := w.r
	live, cancel := context.WithCancel(ctx)
	defer cancel()
	stopLive := context.AfterFunc(gctx, cancel)
	defer stopLive()
	log := w.log.With("topic", topic, "partition", part)
	name := strings.TrimPrefix(topic, r.cfg.actionPrefix())

	// Claims of at-most-once actions made by earlier owners lie between
	// the committed offset and the partition's end as it is now.
	end, err := r.st.endOffset(live, topic, part)
	if err != nil {
		log.Warn("reading the partition's end", "err", err)
		return
	}
	var claims map[string]bool // read lazily, at the first at-most-once action before end

	t := newTracker()
	commit := func() {
		if n := t.frontier(); n >= 0 {
			if err := c.commit(topic, part, n); err != nil {
				log.Debug("committing an action partition's offset", "offset", n, "err", err)
			}
		}
	}
	defer func() {
		if ctx.Err() != nil {
			// Stopping: let the actions in flight end (or be handed back),
			// then commit what ended.
			select {
			case <-t.wait():
			case <-w.base.Done():
				select {
				case <-t.wait():
				case <-time.After(5 * time.Second):
				}
			case <-abandon:
			}
		}
		commit()
	}()
	var cwg sync.WaitGroup
	defer cwg.Wait()
	cwg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		last := int64(-1)
		for {
			select {
			case <-live.Done():
				return
			case <-tick.C:
				if n := t.frontier(); n > last {
					commit()
					last = n
				}
			}
		}
	})

	rd := r.cfg.reader(topic, part, r.st.limit)
	defer rd.Close()
	if err := rd.SetOffset(offset); err != nil {
		log.Error("reading the action partition", "err", err)
		return
	}
	for {
		m, err := r.cfg.fetch(live, rd)
		if err != nil {
			if live.Err() == nil {
				log.Error("reading the action partition", "err", err)
			}
			return
		}
		t.add(m.Offset)
		off := m.Offset
		out, err := decodeOutbound(m.Key, m.Value)
		switch {
		case err != nil:
			r.stats.malformedActions.Add(1)
			log.Warn("malformed message on an action topic: skipped", "offset", off, "key", clip(m.Key), "err", err)
			t.done(off)
			continue
		case out.claimed:
			t.done(off)
			continue
		case out.a.Name != name:
			r.stats.malformedActions.Add(1)
			log.Warn("action of another name on this topic: skipped", "offset", off, "action", out.a.Name)
			t.done(off)
			continue
		}
		a := out.a
		key := runKey(a.JobID, a.Incarnation, a.ID)
		if w.wasStopped(key) {
			t.done(off)
			continue
		}
		if off < end && !r.st.waitsFor(live, a, nil) {
			// Queued before this worker took the partition, for a job
			// since cancelled, deleted or finished: the stop notice, if
			// any, came before this worker listened.
			log.Debug("action its job no longer waits for: skipped", "job", a.JobID, "action", a.ID, "offset", off)
			t.done(off)
			continue
		}
		done := t.begin(off)
		if w.attach(key, done) {
			continue
		}
		if a.AtMostOnce {
			if off < end && claims == nil {
				if claims, err = w.readClaims(live, topic, part, off, end); err != nil {
					log.Warn("reading the claims of at-most-once actions", "err", err)
					done(false)
					return // not ended: read again by the next owner, or by this one
				}
			}
			if claims[key] {
				r.stats.lost.Add(1)
				log.Info("at-most-once action claimed before (its worker may have run it): reported lost", "job", a.JobID, "action", a.ID)
				w.wg.Add(1)
				go func() {
					defer w.wg.Done()
					done(w.deliver(a, runner.LostResult(a, r.o.Clock.Now())))
				}()
				continue
			}
		}
		release, ok := w.slot(live, name)
		if !ok {
			done(false)
			return
		}
		if a.AtMostOnce && !w.claim(live, topic, part, a, off) {
			release()
			done(false)
			return
		}
		runner.LogClaimed(live, w.log, a, slog.String("topic", topic), slog.Int("partition", part), slog.Int64("offset", off))
		w.start(a, key, done, release)
	}
}

// claim appends a claim of at-most-once action a to its partition and
// waits for it: the action runs only once the claim is durable.
func (w *worker) claim(ctx context.Context, topic string, part int, a job.Action, off int64) bool {
	m := claimedMessage(topic, a, off, w.r.o.Name)
	m.Headers = []kafka.Header{{Key: hdrPartition, Value: []byte(strconv.Itoa(part))}}
	return retrying().Retry(ctx, nil, func() error {
		err := w.r.aw.WriteMessages(ctx, m)
		if err != nil {
			w.log.Warn("claiming an at-most-once action", "job", a.JobID, "action", a.ID, "err", writeError(err))
		}
		return err
	}) == nil
}

// readClaims reads topic/part from offset from to end and returns the
// at-most-once actions claimed there, by runKey.
func (w *worker) readClaims(ctx context.Context, topic string, part int, from, end int64) (map[string]bool, error) {
	claims := map[string]bool{}
	_, err := w.r.st.readRange(ctx, topic, part, from, end, func(off int64, m kafka.Message) {
		if out, err := decodeOutbound(m.Key, m.Value); err == nil && out.claimed {
			claims[runKey(out.a.JobID, out.a.Incarnation, out.a.ID)] = true
		}
	})
	return claims, err
}

// attach makes done follow the run of the action key, if this process
// runs it already (a message read again after a rebalance, or a second
// dispatch): the action does not run twice here.
func (w *worker) attach(key string, done func(bool)) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	run, ok := w.running[key]
	if ok {
		run.waiters = append(run.waiters, done)
	}
	return ok
}

// start runs action a (its slot taken) and delivers its result.
func (w *worker) start(a job.Action, key string, done func(bool), release func()) {
	r := w.r
	hctx := runner.NewStoppable(w.base)
	run := &running{cancel: hctx.Stop, waiters: []func(bool){done}}
	w.mu.Lock()
	w.running[key] = run
	w.place.begin(a.Name, time.Now())
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		res, err := runner.Execute(hctx, r.o.Registry, a, runner.ExecOptions{Timeout: r.o.ActionTimeout, Logger: w.log, Hooks: r.o.Hooks, Now: r.o.Clock.Now, Worker: r.o.Name})
		stopped := errors.Is(hctx.Stopped(), runner.ErrStopped)
		hctx.Release()
		release()
		w.observe(a, res, err, stopped)
		ended := false
		switch {
		case err == nil:
			ended = w.deliver(a, w.fit(a, res))
		case stopped:
			ended = true // its result would be ignored: nothing to deliver
		}
		w.mu.Lock()
		delete(w.running, key)
		waiters := run.waiters
		w.mu.Unlock()
		for _, f := range waiters {
			f(ended)
		}
	}()
}

// fit returns res, or, if it is too large for a message, a failure saying
// so.
func (w *worker) fit(a job.Action, res job.Result) job.Result {
	m := resultMessage(res, a.Incarnation)
	if n := size(m); n > w.r.st.limit {
		w.r.stats.oversized.Add(1)
		w.log.Warn("result too large for a message: reported as a failure", "job", a.JobID, "action", a.ID, "bytes", n)
		f := a.Fail(fmt.Sprintf("the result of action %q is %d bytes as a message, over the limit of %d bytes (MaxMessageBytes); it was dropped",
			a.Name, n, w.r.st.limit))
		f.Final, f.At = true, res.At
		return f
	}
	return res
}

// deliver hands a result to the restarter, trying again until it is
// applied or durable in the restarter topic, or the worker drops its
// actions. It reports whether the result was delivered (or needs no
// delivery: its job is gone).
func (w *worker) deliver(a job.Action, res job.Result) bool {
	in := input{in: inbound{id: a.JobID, kind: typeResult, result: res, inc: a.Incarnation, hasInc: true}, offset: -1}
	m := resultMessage(res, a.Incarnation)
	for n := 1; ; n++ {
		err := w.r.send(w.base, []input{in}, []kafka.Message{m})
		if err == nil || !retryable(err) {
			return true
		}
		if w.applied(a) {
			// The write that failed for the restarter landed: the job
			// as stored has the result.
			return true
		}
		if w.base.Err() != nil {
			return false
		}
		w.log.Warn("delivering a result; will try again", "job", a.JobID, "action", a.ID, "err", err)
		if retrying().Sleep(w.base, n) != nil {
			return false
		}
	}
}

// applied reports whether the job of a, as stored, no longer waits for
// a's result.
func (w *worker) applied(a job.Action) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	j, err := w.r.st.Load(ctx, a.JobID)
	if err != nil || j.Incarnation() != a.Incarnation {
		return false
	}
	_, out := j.Pending(a.ID)
	return !out
}

// stop cancels the handlers of this process that run the actions ids of
// job id (incarnation inc), with cause runner.ErrStopped, and remembers
// them so that they are not started if read later.
func (w *worker) stop(id job.ID, inc uint64, ids []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if len(w.stopped) > 10000 {
		for k, at := range w.stopped {
			if now.Sub(at) > 10*time.Minute {
				delete(w.stopped, k)
			}
		}
	}
	for _, aid := range ids {
		key := runKey(id, inc, aid)
		w.stopped[key] = now
		if run, ok := w.running[key]; ok {
			run.cancel(runner.ErrStopped)
		}
	}
}

func (w *worker) wasStopped(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.stopped[key]
	return ok
}

// listenStops reads the stops topic from its end until ctx ends.
func (w *worker) listenStops(ctx context.Context) {
	r := w.r
	topic := r.cfg.stopsTopic()
	_, _, stops := r.st.adm.specs()
	infos, err := r.st.adm.ensure(ctx, stops)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("the stops topic", "err", err)
		}
		return
	}
	var wg sync.WaitGroup
	for p := range infos[0].partitions {
		wg.Go(func() {
			rd := r.cfg.reader(topic, p, r.st.limit)
			defer rd.Close()
			if err := rd.SetOffset(kafka.LastOffset); err != nil {
				w.log.Error("reading the stops topic", "err", err)
				return
			}
			for {
				m, err := r.cfg.fetch(ctx, rd)
				if err != nil {
					if ctx.Err() == nil {
						w.log.Error("reading the stops topic", "err", err)
					}
					return
				}
				id, inc, ids, err := decodeStop(m.Key, m.Value)
				if err != nil {
					w.log.Warn("malformed stop notice: skipped", "offset", m.Offset, "err", err)
					continue
				}
				w.stop(id, inc, ids)
			}
		})
	}
	wg.Wait()
}
