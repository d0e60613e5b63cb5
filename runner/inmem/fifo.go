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

// popShare appends to buf a fair share of the queue for one of consumers
// consumers: one item, or up to max when the queue holds more than two
// items per consumer. It blocks until there is an item or stop is closed.
func (q *fifo[T]) popShare(buf []T, consumers, max int, stop <-chan struct{}) ([]T, bool) {
	for {
		q.mu.Lock()
		if n := len(q.items) - q.head; n > 0 {
			k := min(max, n/(2*consumers))
			k = min(n, k)
			if k < 1 {
				k = 1
			}
			buf = append(buf, q.items[q.head:q.head+k]...)
			clear(q.items[q.head : q.head+k])
			q.head += k
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
			return buf, true
		}
		q.mu.Unlock()
		select {
		case <-q.signal:
		case <-stop:
			return buf, false
		}
	}
}
