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

// pop takes up to max items (at least one), blocking until some are there
// or stop is closed; ok is false when stopped.
func (q *fifo[T]) pop(max int, stop <-chan struct{}) (out []T, ok bool) {
	for {
		q.mu.Lock()
		if n := len(q.items) - q.head; n > 0 {
			n = min(n, max)
			out = append(out, q.items[q.head:q.head+n]...)
			clear(q.items[q.head : q.head+n])
			q.head += n
			if q.head == len(q.items) {
				q.items, q.head = q.items[:0], 0
			} else if q.head > 1024 && q.head > len(q.items)/2 {
				q.items = append(q.items[:0], q.items[q.head:]...)
				q.head = 0
			}
			more := q.head < len(q.items)
			q.mu.Unlock()
			if more {
				q.notify() // wake another consumer
			}
			return out, true
		}
		q.mu.Unlock()
		select {
		case <-q.signal:
		case <-stop:
			return nil, false
		}
	}
}

// tryPop is pop without blocking.
func (q *fifo[T]) tryPop(max int) []T {
	closed := make(chan struct{})
	close(closed)
	q.mu.Lock()
	empty := len(q.items) == q.head
	q.mu.Unlock()
	if empty {
		return nil
	}
	out, _ := q.pop(max, closed)
	return out
}
