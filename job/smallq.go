package job

// smallQ is a queue of the engine: its first items are kept in itself,
// so that a step of a few nodes allocates nothing for it, and nothing in
// it points into itself, so that the engine holding it can stay on the
// stack (a slice of an array in the engine would move the engine to the
// heap). Items are read and written by index, from 0 to len.
type smallQ[T any] struct {
	n     int
	first [8]T
	more  []T // items from len(first) on
}

func (q *smallQ[T]) len() int { return q.n }

func (q *smallQ[T]) push(x T) {
	if q.n < len(q.first) {
		q.first[q.n] = x
	} else {
		q.more = append(q.more, x)
	}
	q.n++
}

// at returns item i; 0 <= i < len.
func (q *smallQ[T]) at(i int) T {
	if i < len(q.first) {
		return q.first[i]
	}
	return q.more[i-len(q.first)]
}

// set replaces item i; 0 <= i < len.
func (q *smallQ[T]) set(i int, x T) {
	if i < len(q.first) {
		q.first[i] = x
	} else {
		q.more[i-len(q.first)] = x
	}
}

// truncate keeps the first n items; 0 <= n <= len.
func (q *smallQ[T]) truncate(n int) {
	q.n = n
	q.more = q.more[:max(0, n-len(q.first))]
}
