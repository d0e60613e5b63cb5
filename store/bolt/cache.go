package bolt

import (
	"container/list"
	"sync"

	"github.com/batonwf/baton/job"
)

// cache keeps the newest known version of recently used jobs, so that a
// Load after a Save in the same process does not decode a snapshot and
// replay a journal. Jobs are immutable values, so a cached Job can be handed
// out as is.
//
// The cache is only a hint: an entry is used only when its incarnation and
// version match the job's meta record read in the same call, so a stale
// entry (left by a racing writer, or by a deleted and re-created job) costs
// a decode, never a wrong answer. It is least-recently-used and bounded
// twice: by the number of jobs, and by their actions (a job's memory grows
// with its tree), so that it holds every job a busy runner works on while
// a few huge jobs cannot fill the memory.
type cache struct {
	mu        sync.Mutex
	max       int // jobs
	maxLeaves int // actions of the jobs held; the newest job is held whatever its size
	leaves    int
	order     *list.List // of *centry, most recent first
	byID      map[job.ID]*list.Element
}

// cacheLeaves is the default bound on the actions of the cached jobs:
// about 50 MB of job state.
const cacheLeaves = 1 << 18

func leavesOf(j job.Job) int {
	_, total := j.Progress()
	return total
}

// maxOrigins bounds the origins History keeps (Store.origins), whatever
// the jobs cached.
const maxOrigins = 64

// originsCached is the bound on the origins kept beside a cache of jobs
// jobs (0: none).
func originsCached(jobs int) int { return min(jobs, maxOrigins) }

type centry struct {
	inc uint64
	j   job.Job
}

func newCache(max int) *cache {
	return &cache{max: max, maxLeaves: cacheLeaves, order: list.New(), byID: map[job.ID]*list.Element{}}
}

// get returns the cached job id if it is the incarnation inc at version v.
func (c *cache) get(id job.ID, inc, v uint64) (job.Job, bool) {
	if c.max <= 0 {
		return job.Job{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[id]
	if !ok {
		return job.Job{}, false
	}
	e := el.Value.(*centry)
	if e.inc != inc || e.j.Version() != v {
		return job.Job{}, false
	}
	c.order.MoveToFront(el)
	return e.j, true
}

// put records j, incarnation inc, unless the cache holds a newer version
// or a newer incarnation (incarnations only grow).
func (c *cache) put(inc uint64, j job.Job) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[j.ID()]; ok {
		e := el.Value.(*centry)
		if e.inc > inc || e.inc == inc && e.j.Version() > j.Version() {
			return
		}
		c.leaves += leavesOf(j) - leavesOf(e.j)
		e.inc, e.j = inc, j
		c.order.MoveToFront(el)
	} else {
		c.byID[j.ID()] = c.order.PushFront(&centry{inc: inc, j: j})
		c.leaves += leavesOf(j)
	}
	for c.order.Len() > c.max || (c.leaves > c.maxLeaves && c.order.Len() > 1) {
		c.remove(c.order.Back())
	}
}

// remove drops the entry el. c.mu is held.
func (c *cache) remove(el *list.Element) {
	e := el.Value.(*centry)
	c.order.Remove(el)
	delete(c.byID, e.j.ID())
	c.leaves -= leavesOf(e.j)
}

// drop forgets id.
func (c *cache) drop(id job.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[id]; ok {
		c.remove(el)
	}
}
