package live

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Event is one server-sent event as a client reads it.
type Event struct {
	// ID is the last event ID the stream set (it carries over to the
	// events that set none), "" if none.
	ID string
	// Type is the event's name; "message" when it has none.
	Type string
	// Data is its data lines, joined by "\n".
	Data string
	// Retry is the reconnection time the event set, 0 if none.
	Retry time.Duration
}

// MaxEventLine bounds one line of a stream ReadEvents reads.
const MaxEventLine = 16 << 20

// ErrLineTooLong is ReadEvents' error for a line over MaxEventLine.
var ErrLineTooLong = errors.New("live: event stream line too long")

// ReadEvents reads a text/event-stream from r as the HTML standard's
// EventSource does, calling f for each event in order, until r ends (nil)
// or fails, or f returns an error (which ReadEvents returns). Lines end
// with "\n", "\r\n" or "\r"; comments (":...") are skipped; a field
// without a colon has an empty value; unknown fields are ignored; an ID
// containing NUL is ignored; an event with no data line is not
// dispatched; an event cut off by the end of the stream is dropped;
// invalid UTF-8 becomes U+FFFD. A line over MaxEventLine is
// ErrLineTooLong, so a hostile stream cannot make it hold unbounded
// memory.
func ReadEvents(r io.Reader, f func(Event) error) error {
	lr := &lineReader{br: bufio.NewReader(r)}
	var (
		id, typ string
		data    strings.Builder
		hasData bool
		retry   time.Duration
		first   = true
	)
	for {
		line, err := lr.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if first {
			line, first = bytes.TrimPrefix(line, []byte("\uFEFF")), false
		}
		if len(line) == 0 {
			if hasData {
				ev := Event{ID: id, Type: typ, Data: strings.TrimSuffix(data.String(), "\n"), Retry: retry}
				if ev.Type == "" {
					ev.Type = "message"
				}
				if err := f(ev); err != nil {
					return err
				}
			}
			typ, hasData, retry = "", false, 0
			data.Reset()
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		v := strings.ToValidUTF8(string(value), "\uFFFD")
		switch string(name) {
		case "event":
			typ = v
		case "data":
			data.WriteString(v)
			data.WriteByte('\n')
			hasData = true
		case "id":
			if !strings.ContainsRune(v, 0) {
				id = v
			}
		case "retry":
			if n, err := strconv.ParseUint(v, 10, 32); err == nil && v != "" && strings.Trim(v, "0123456789") == "" {
				retry = time.Duration(n) * time.Millisecond
			}
		}
	}
}

// lineReader splits a stream into lines ending with "\n", "\r\n" or
// "\r", without waiting past a "\r" for a "\n" that may never come.
type lineReader struct {
	br     *bufio.Reader
	skipLF bool // the last line ended with "\r": a "\n" first is its end
	line   []byte
}

// next returns the next line without its ending; the slice is valid
// until the next call. A last line without an ending is io.EOF: the event
// it belongs to is incomplete.
func (lr *lineReader) next() ([]byte, error) {
	lr.line = lr.line[:0]
	for {
		if lr.br.Buffered() == 0 {
			if _, err := lr.br.Peek(1); err != nil {
				if errors.Is(err, io.EOF) {
					return nil, io.EOF
				}
				return nil, fmt.Errorf("live: read event stream: %w", err)
			}
		}
		buf, _ := lr.br.Peek(lr.br.Buffered())
		if lr.skipLF {
			lr.skipLF = false
			if buf[0] == '\n' {
				_, _ = lr.br.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			i = len(buf)
		}
		if len(lr.line)+i > MaxEventLine {
			return nil, ErrLineTooLong
		}
		lr.line = append(lr.line, buf[:i]...)
		if i == len(buf) {
			_, _ = lr.br.Discard(i)
			continue
		}
		lr.skipLF = buf[i] == '\r'
		_, _ = lr.br.Discard(i + 1)
		return lr.line, nil
	}
}
