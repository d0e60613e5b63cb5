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
// only, one line each, "baton: message key=value ...".
func runnerLogger(w io.Writer) *slog.Logger {
	return slog.New(&lineHandler{w: w})
}

// lineHandler is a slog.Handler that writes one plain line per record.
type lineHandler struct {
	w     io.Writer
	attrs []slog.Attr
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("baton: ")
	b.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		if a.Equal(slog.Attr{}) {
			return true
		}
		v := a.Value.Resolve().String()
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
	return &lineHandler{w: h.w, attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], as...)}
}

// WithGroup is not needed by the runners; groups are flattened.
func (h *lineHandler) WithGroup(string) slog.Handler { return h }
