package server

import (
	"io"
	"sync"
)

// LogWriter is the io.Writer to put under Options.Logger's handler when
// the request log goes to a file: a Write copies its line into a buffer
// and returns, and one goroutine of the LogWriter's writes what has piled
// up to the file in one write, at once: with no timer, a lone line is
// written as soon as it is logged, and the lines of requests answered
// while a write runs share the next one. So no request waits for the
// file, and the file gets fewer writes; each line is written whole, in
// the order of the Writes.
//
// At most MaxLogBuffer bytes wait: a Write beyond that waits for the
// file, so a stalled file holds up requests rather than filling memory.
// Close writes what waits and stops the goroutine; a Write after Close
// goes to the file at once. A line held when the process dies without
// Close is lost: it was logged a write ago at most.
//
// All methods may be called concurrently.
type LogWriter struct {
	w    io.Writer
	mu   sync.Mutex
	cond sync.Cond // signalled when the waiting lines were taken, and on Close
	// next holds the lines waiting; spare is the buffer of the last
	// write, for the next lines.
	next, spare []byte
	closed      bool
	err         error         // the first error of a write to w
	wake        chan struct{} // a token when lines may wait
	done        chan struct{} // closed when run has returned
}

// MaxLogBuffer bounds the bytes a LogWriter holds.
const MaxLogBuffer = 1 << 20

// NewLogWriter returns a LogWriter in front of w, its goroutine started.
func NewLogWriter(w io.Writer) *LogWriter {
	l := &LogWriter{w: w, wake: make(chan struct{}, 1), done: make(chan struct{})}
	l.cond.L = &l.mu
	go l.run()
	return l
}

// Write queues p, a line, and returns len(p), nil; or, after Close,
// writes it to the file. It does not keep p.
func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	for len(l.next) > 0 && len(l.next)+len(p) > MaxLogBuffer && !l.closed {
		l.cond.Wait()
	}
	if l.closed {
		l.mu.Unlock()
		<-l.done // the lines queued before are written first
		return l.w.Write(p)
	}
	l.next = append(l.next, p...)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default: // already woken: the goroutine takes this line too
	}
	return len(p), nil
}

// run writes the waiting lines until Close.
func (l *LogWriter) run() {
	defer close(l.done)
	for {
		<-l.wake
		l.mu.Lock()
		var b []byte
		closed := l.closed
		if len(l.next) > 0 { // else woken for lines taken already: the buffers stay
			b = l.next
			l.next, l.spare = l.spare[:0], nil
			l.cond.Broadcast()
		}
		l.mu.Unlock()
		if len(b) > 0 {
			_, err := l.w.Write(b)
			l.mu.Lock()
			if l.err == nil && err != nil {
				l.err = err
			}
			if cap(b) <= MaxLogBuffer {
				l.spare = b[:0]
			}
			l.mu.Unlock()
		}
		if closed {
			return
		}
	}
}

// Close writes the lines waiting and stops the goroutine. It returns the
// first error a write to the file returned. Close twice is Close once.
func (l *LogWriter) Close() error {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		l.cond.Broadcast()
		l.mu.Unlock()
		select {
		case l.wake <- struct{}{}:
		default:
		}
		<-l.done
		l.mu.Lock()
	}
	defer l.mu.Unlock()
	return l.err
}
