package zk

import "sync"

// notifier wakes any number of readers, each on a channel of its own
// with a buffer of one: a burst of notifications wakes each reader once,
// and a reader that is busy misses nothing but the duplicates.
type notifier struct {
	mu    sync.Mutex
	chans []chan struct{}
}

// sub returns a new reader's channel.
func (n *notifier) sub() <-chan struct{} {
	ch := make(chan struct{}, 1)
	n.mu.Lock()
	n.chans = append(n.chans, ch)
	n.mu.Unlock()
	return ch
}

// notify wakes every reader, never blocking.
func (n *notifier) notify() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ch := range n.chans {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
