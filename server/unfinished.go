package server

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/batonwf/baton/store"
)

// The bound on unfinished jobs (Options.MaxUnfinished). The server's
// count is the store's listing of unfinished jobs plus the submits it
// made since. A listing reads every job the store holds (the finished
// ones too), so its cost grows with the store: it is taken again only
// once the time since the last one is at least recountShare times that
// listing's own duration, and at least a second while the count is
// under the bound. So listings take at most 1/recountShare of the
// server's time, whatever the store holds, and at the bound the count
// still learns of finished jobs soon (a listing of a millisecond is
// taken again after a tenth of a second). No submit waits for a listing
// another one takes, and none takes a lock of the server's.

// recountShare is how many times a listing's duration must pass before
// the unfinished jobs are listed again.
const recountShare = 100

// unfinishedCount is the count of unfinished jobs. Its zero value has
// no count yet: the first submit lists.
type unfinishedCount struct {
	n        atomic.Int64 // listed, plus the submits made since
	due      atomic.Int64 // the next listing's earliest time, in s.now's Unix nanoseconds; 0 at once
	atBound  atomic.Int64 // the same at the bound
	counting atomic.Bool  // a submit is listing
}

// added counts a job this server submitted.
func (c *unfinishedCount) added() { c.n.Add(1) }

// checkUnfinished refuses a submit past MaxUnfinished (429
// too_many_jobs), listing the unfinished jobs first when the count is
// due (see above).
func (s *srv) checkUnfinished(ctx context.Context) error {
	if s.maxUnfinished < 0 || s.lister == nil {
		return nil
	}
	c := &s.unfinished
	n := c.n.Load()
	now := s.now().UnixNano()
	due := c.due.Load()
	if n >= int64(s.maxUnfinished) {
		due = c.atBound.Load()
	}
	if now >= due && c.counting.CompareAndSwap(false, true) {
		start := s.now()
		infos, err := s.lister.List(ctx, store.Query{Unfinished: true, Limit: s.maxUnfinished})
		end := s.now()
		if err != nil {
			c.counting.Store(false)
			return newProblem(CodeStoreUnavailable, "count the unfinished jobs: "+err.Error())
		}
		took := max(end.Sub(start), 0)
		n = int64(len(infos))
		c.n.Store(n)
		c.atBound.Store(end.Add(recountShare * took).UnixNano())
		c.due.Store(end.Add(max(time.Second, recountShare*took)).UnixNano())
		c.counting.Store(false)
	}
	if n >= int64(s.maxUnfinished) {
		verb := "are"
		if n == 1 {
			verb = "is"
		}
		p := newProblem(CodeTooManyJobs, fmt.Sprintf("%d job%s %s unfinished, the most this server takes (--max-unfinished); submit again once some have finished", n, plural(int(n)), verb))
		p.retryAfter = 5
		return p
	}
	return nil
}
