package inmem

import "sync"

// fifo is an unbounded queue. Unbounded, because the restarter must never
// block on dispatch while workers block on reporting results: that is a
// deadlock. Memory is bounded by the work the jobs hold anyway.
type fifo[T any] struct {
	mu     sync.Mutex
	items  []T
	head   int
	signal chan struct{} // has a token when items may be available
}

func newFifo[T any]() *fifo[T] {
	return &fifo[T]{signal: make(chan struct{}, 1)}
}

func (q *fifo[T]) push(xs ...T) {
	if len(xs) == 0 {
		return
	}
	q.mu.Lock()
	q.items = append(q.items, xs...)
	q.mu.Unlock()
	q.notify()
}

func (q *fifo[T]) notify() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// empty reports whether the queue holds nothing right now.
func (q *fifo[T]) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.head == len(q.items)
}

// pop1 takes one item, blocking until there is one or stop is closed.
func (q *fifo[T]) pop1(stop <-chan struct{}) (x T, ok bool) {
	for {
		q.mu.Lock()
		if q.head < len(q.items) {
			x = q.items[q.head]
			var zero T
			q.items[q.head] = zero
			q.head++
			if q.head == len(q.items) {
				q.items, q.head = q.items[:0], 0
			} else if q.head > 1024 && q.head > len(q.items)/2 {
				q.items = append(q.items[:0], q.items[q.head:]...)
				q.head = 0
			}
			more := q.head < len(q.items)
			q.mu.Unlock()
			if more {
				q.notify()
			}
			return x, true
		}
		q.mu.Unlock()
		select {
		case <-q.signal:
		case <-stop:
			return x, false
		}
	}
}
