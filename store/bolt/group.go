package bolt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"go.etcd.io/bbolt"

	"github.com/batonwf/baton/job"
)

// Group commit. A commit's fsync costs far more than the writes it makes
// durable, so Creates and Saves that wait at the same moment share one
// write transaction and one fsync: each is still durable when it returns,
// and none waits for anything but the commit in progress. There is no
// timer: the first caller commits at once (leads); callers that arrive
// while it commits queue up, and when it is done the first of them leads
// the next commit, with every write queued by then. So a lone writer pays
// one commit per write, as before, and N concurrent writers pay about one
// commit per round instead of N.
//
// Within a transaction the writes apply in arrival order, each checked on
// its own: a write refused (a conflict, a job that exists or is gone, a
// context that ended while it waited) is left out and gets its error, the
// others commit. An error of the transaction itself (a full disk, an I/O
// error, damage) is every write's error: none of them committed.

// groupWrite is one write waiting for the group commit.
type groupWrite struct {
	ctx context.Context
	// apply makes the write in tx. It returns a *refusal, before writing
	// anything, when the write must be left out; any other error aborts
	// the transaction.
	apply func(tx *bbolt.Tx, w *writes) error
	// committed runs after the transaction committed with this write.
	committed func()
	// j is the job the write stores, made by step (nil for a Create):
	// what the fault hook is told (see fault).
	j    job.Job
	step *job.Step
	err  error
	wake chan bool // false: done, err is set; true: lead the next commit
}

// refusal marks an error that leaves a write out of a group commit.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// refuse returns err as a refusal.
func refuse(err error) error { return &refusal{err} }

// group is the state of the group commit.
type group struct {
	mu      sync.Mutex
	queue   []*groupWrite
	leading bool // some caller is committing
	size    sizes
}

// sizes counts writes per commit, for Stats.
type sizes struct{ commits, writes, largest uint64 }

// commit makes gw durable, in a transaction of its own or shared with the
// writes waiting at the same moment, and returns its error.
func (s *Store) commit(gw *groupWrite) error {
	gw.wake = make(chan bool, 1)
	g := &s.group
	g.mu.Lock()
	g.queue = append(g.queue, gw)
	if g.leading {
		g.mu.Unlock()
		if lead := <-gw.wake; !lead {
			return gw.err
		}
		g.mu.Lock()
	}
	g.leading = true
	batch := g.queue
	g.queue = nil
	g.mu.Unlock()

	s.commitBatch(batch)

	g.mu.Lock()
	g.size.commits++
	g.size.writes += uint64(len(batch))
	g.size.largest = max(g.size.largest, uint64(len(batch)))
	if len(g.queue) > 0 {
		g.queue[0].wake <- true // the next commit is theirs
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	for _, other := range batch {
		if other != gw {
			other.wake <- false
		}
	}
	return gw.err
}

// commitBatch writes batch in one transaction and sets each write's error.
// The transaction waits for readers (see update) as long as one of the
// writes' contexts allows.
func (s *Store) commitBatch(batch []*groupWrite) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	left := atomic.Int64{}
	left.Store(int64(len(batch)))
	for _, gw := range batch {
		stop := context.AfterFunc(gw.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	in := make([]bool, len(batch)) // made in the transaction that committed
	err := s.update(ctx, func(tx *bbolt.Tx, w *writes) error {
		for i, gw := range batch {
			in[i] = false
			if err := gw.ctx.Err(); err != nil {
				gw.err = err
				continue
			}
			err := gw.apply(tx, w)
			var r *refusal
			switch {
			case errors.As(err, &r):
				gw.err = r.err
			case err != nil:
				return err
			default:
				gw.err, in[i] = nil, true
			}
		}
		for i, gw := range batch {
			if in[i] {
				if err := s.fault(faultCommit, gw.j, gw.step); err != nil {
					return err
				}
			}
		}
		return nil
	})
	for i, gw := range batch {
		txErr := err
		if err != nil && ctx.Err() != nil && gw.ctx.Err() != nil {
			// Every write's context ended while the commit waited for
			// readers: each gets its own context's error.
			txErr = fmt.Errorf("waiting for readers to leave the file: %w", gw.ctx.Err())
		}
		switch {
		case txErr != nil && in[i]:
			gw.err = txErr
		case txErr != nil && gw.err == nil:
			gw.err = txErr // refused or not, the transaction failed
		case !in[i]:
		default:
			if ferr := s.fault(faultCommitted, gw.j, gw.step); ferr != nil {
				gw.err = ferr
			} else if gw.committed != nil {
				gw.committed()
			}
		}
	}
}
