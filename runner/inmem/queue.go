package inmem

import (
	"context"
	"sync"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// queue holds the actions waiting for a worker, and knows every action
// this runner has in hand (live): queued, kept by a worker, running, or
// finished with its result not yet applied. Dispatch skips live actions,
// which makes it idempotent: a recovery, a redelivery or a second Resume
// never queues an action twice.
//
// The queue is unbounded, because whoever applies results must never block
// on dispatch while workers block on reporting results: that is a
// deadlock. Memory is bounded by the work the jobs hold anyway.
type queue struct {
	mu sync.Mutex
	// segs holds the queued actions in the segments push queued them in,
	// oldest first; segs[0][head:] are next. A segment is the caller's
	// slice itself when push queued all of it (a transition's actions are
	// never copied), so the actions of a step cost no copy and no growth
	// of one big slice.
	segs   [][]job.Action
	head   int
	live   map[actionKey]struct{}
	signal chan struct{} // has a token when items may be available

	// held counts the live actions of each job that has some; released
	// is called, outside q.mu, with a job whose last live action left.
	held     map[job.ID]int
	released func(job.ID)

	// running holds the handler contexts of the live
	// actions a worker is performing; stopped, the live actions told to
	// stop before a worker began them (it skips them).
	running map[actionKey]*runner.Stoppable
	stopped map[actionKey]struct{}
	// fresh are Stoppables not used yet, made stoppableBlock at a time
	// (runner.NewStoppables), all under the context begin was given.
	fresh    []runner.Stoppable
	freshCtx context.Context
}

// stoppableBlock is how many Stoppables begin makes at once.
const stoppableBlock = 16

type actionKey struct {
	job job.ID
	inc uint64 // the job's incarnation
	id  string
}

func keyOf(a job.Action) actionKey { return actionKey{a.JobID, a.Incarnation, a.ID} }

func newQueue(released func(job.ID)) *queue {
	return &queue{
		live:     map[actionKey]struct{}{},
		held:     map[job.ID]int{},
		released: released,
		signal:   make(chan struct{}, 1),
		running:  map[actionKey]*runner.Stoppable{},
		stopped:  map[actionKey]struct{}{},
	}
}

// push queues the actions that are not live. If keep is not nil and holds
// no action, and nothing waits in the queue, the first new action goes to
// *keep instead: the worker that committed the step runs it next, with no
// hand-off between goroutines (a sequence runs on one worker). When others
// wait, it takes its turn.
//
// With again (a dispatch of actions dispatched before: a recovery, a
// redelivery), an at-most-once action that is not live is not queued: it
// may have run, under another process or before a restart. push returns
// those; the caller reports them lost.
//
// push may keep acts itself until its actions are popped: the caller must
// not change it afterwards (a committed transition's Actions never are).
func (q *queue) push(acts []job.Action, keep *slot, again bool) (lost []job.Action) {
	if len(acts) == 0 {
		return nil
	}
	q.mu.Lock()
	// The actions queued are acts[lo:hi] while they are contiguous, which
	// is the rule (a step's actions are all new); copied once a gap shows.
	lo, hi := -1, -1
	var copied []job.Action
	for i, a := range acts {
		k := keyOf(a)
		if _, ok := q.live[k]; ok {
			continue
		}
		if again && a.AtMostOnce {
			lost = append(lost, a)
			continue
		}
		q.live[k] = struct{}{}
		q.held[k.job]++
		switch {
		case keep != nil && !keep.full && len(q.segs) == 0 && lo < 0:
			keep.next, keep.full = a, true
		case copied != nil:
			copied = append(copied, a)
		case lo < 0:
			lo, hi = i, i+1
		case hi == i:
			hi++
		default:
			copied = append(make([]job.Action, 0, hi-lo+len(acts)-i), acts[lo:hi]...)
			copied = append(copied, a)
		}
	}
	queued := true
	switch {
	case copied != nil:
		q.segs = append(q.segs, copied)
	case lo >= 0:
		q.segs = append(q.segs, acts[lo:hi:hi])
	default:
		queued = false
	}
	q.mu.Unlock()
	if queued {
		q.notify()
	}
	return lost
}

func (q *queue) notify() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// tryPop returns the oldest queued action, if there is one, and whether
// more wait after it (the caller may wake another worker for them: see
// notify). It never blocks.
func (q *queue) tryPop() (a job.Action, more, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.segs) == 0 {
		return job.Action{}, false, false
	}
	seg := q.segs[0]
	a = seg[q.head]
	if q.head++; q.head == len(seg) {
		// The whole segment was taken: drop it (its actions' payloads go
		// with it), never write into it.
		q.segs[0] = nil
		q.segs, q.head = q.segs[1:], 0
	}
	return a, len(q.segs) > 0, true
}

// wait blocks until actions may have been queued since a tryPop that
// found none (push wakes one waiter, and so does notify), or until stop
// is closed: then it returns false.
func (q *queue) wait(stop <-chan struct{}) bool {
	select {
	case <-q.signal:
		return true
	case <-stop:
		return false
	}
}

// forget drops actions from the live set: their results were applied (or
// will never be), or they were handed back.
func (q *queue) forget(keys ...actionKey) {
	q.mu.Lock()
	var idle []job.ID
	for _, k := range keys {
		idle = q.dropLocked(k, idle)
	}
	q.mu.Unlock()
	q.release(idle)
}

// forgetResults drops the actions of batch's results from the live set,
// each under the incarnation it carries, or inc where it carries none.
func (q *queue) forgetResults(batch []inHand, inc uint64) {
	q.mu.Lock()
	var idle []job.ID
	for _, h := range batch {
		k := actionKey{h.res.JobID, h.inc, h.res.ActionID}
		if k.inc == 0 {
			k.inc = inc
		}
		idle = q.dropLocked(k, idle)
	}
	q.mu.Unlock()
	q.release(idle)
}

// dropLocked drops k from the live set, under q.mu, and appends its job
// to idle if that was the job's last live action.
func (q *queue) dropLocked(k actionKey, idle []job.ID) []job.ID {
	if _, ok := q.live[k]; ok {
		delete(q.live, k)
		if q.held[k.job]--; q.held[k.job] == 0 {
			delete(q.held, k.job)
			idle = append(idle, k.job)
		}
	}
	delete(q.stopped, k)
	return idle
}

// release tells of the jobs whose last live action left (outside q.mu).
func (q *queue) release(idle []job.ID) {
	for _, id := range idle {
		q.released(id)
	}
}

// holds reports whether job id has live actions here: this runner will
// apply their results (or hand them back), and call released once the
// last of them has left.
func (q *queue) holds(id job.ID) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.held[id] > 0
}

// begin is called by a worker about to perform a: it returns the context
// to perform it under (ctx, cancelled with cause cause when a is told to
// stop), or false if a was told to stop already: the worker skips it.
// The worker calls end when the handler has returned.
func (q *queue) begin(ctx context.Context, a job.Action) (*runner.Stoppable, bool) {
	k := keyOf(a)
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.stopped[k]; ok {
		delete(q.stopped, k)
		return nil, false
	}
	if len(q.fresh) == 0 || q.freshCtx != ctx {
		q.fresh, q.freshCtx = runner.NewStoppables(ctx, stoppableBlock), ctx
	}
	actx := &q.fresh[0]
	q.fresh = q.fresh[1:]
	q.running[k] = actx
	return actx, true
}

// end releases what begin made for the action with key k.
func (q *queue) end(k actionKey) {
	q.mu.Lock()
	actx := q.running[k]
	delete(q.running, k)
	q.mu.Unlock()
	if actx != nil {
		actx.Release()
	}
}

// stop tells the live actions among acts to stop, with cause: those being
// performed have their contexts cancelled, the others are skipped when a
// worker takes them. Actions that are not live are not this runner's.
func (q *queue) stop(acts []job.Action, cause error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, a := range acts {
		k := keyOf(a)
		if actx, ok := q.running[k]; ok {
			actx.Stop(cause)
			continue
		}
		if _, ok := q.live[k]; ok {
			q.stopped[k] = struct{}{}
		}
	}
}

// slot is the action a worker keeps for itself (see push).
type slot struct {
	next job.Action
	full bool
}
