package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"unicode"
)

// runnerLogger returns the logger given to runners: warnings and errors
// only, one line each, "baton: LEVEL message key=value ...".
func runnerLogger(w io.Writer) *slog.Logger {
	return runnerLoggerAt(w, slog.LevelWarn)
}

// runnerLoggerAt returns the logger given to runners, taking records from
// level up: slog.LevelDebug for --verbose (each action's claim, start and
// end, each job's end).
func runnerLoggerAt(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(&lineHandler{w: w, level: level})
}

// logLevel is the level a command logs from: WARN, or DEBUG with --verbose.
func logLevel(verbose bool) slog.Level {
	if verbose {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

// lineHandler is a slog.Handler that writes one plain line per record.
type lineHandler struct {
	w     io.Writer
	level slog.Level
	attrs []slog.Attr
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("baton: ")
	b.WriteString(r.Level.String())
	b.WriteByte(' ')
	b.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		if a.Equal(slog.Attr{}) {
			return true
		}
		v := a.Value.Resolve().String()
		if a.Value.Kind() == slog.KindTime {
			v = a.Value.Time().UTC().Format("2006-01-02T15:04:05.000Z07:00")
		}
		if v == "" || strings.ContainsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || r == '"' || !unicode.IsPrint(r) }) {
			v = strconv.Quote(v)
		}
		b.WriteString(" " + a.Key + "=" + v)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	b.WriteByte('\n')
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &lineHandler{w: h.w, level: h.level, attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], as...)}
}

// WithGroup is not needed by the runners; groups are flattened.
func (h *lineHandler) WithGroup(string) slog.Handler { return h }
