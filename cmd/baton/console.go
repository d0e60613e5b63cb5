package main

import (
	"io"
	"os"
	"sync"
)

// console serialises what handlers, the runner's log and the progress line
// write, so lines never interleave, and clears the progress line before any
// other output so it never sits in the middle of a log line.
type console struct {
	mu       sync.Mutex
	out, err io.Writer
	tty      bool // err is a terminal: a progress line may be drawn
	showing  bool // a progress line is on screen
}

func newConsole(out, err io.Writer) *console {
	return &console{out: out, err: err, tty: isTerminal(err)}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Stdout and Stderr return writers that go through the console.
func (c *console) Stdout() io.Writer { return consoleWriter{c, false} }
func (c *console) Stderr() io.Writer { return consoleWriter{c, true} }

type consoleWriter struct {
	c     *console
	toErr bool
}

func (w consoleWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	w.c.clearLocked()
	if w.toErr {
		return w.c.err.Write(p)
	}
	return w.c.out.Write(p)
}

// progress draws line as the progress line, replacing the previous one.
// It does nothing unless stderr is a terminal.
func (c *console) progress(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.tty {
		return
	}
	io.WriteString(c.err, "\r"+line+"\x1b[K")
	c.showing = true
}

// clear removes the progress line, if one is drawn.
func (c *console) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
}

func (c *console) clearLocked() {
	if c.showing {
		io.WriteString(c.err, "\r\x1b[K")
		c.showing = false
	}
}
