package server

import (
	"net/http"
	"time"
)

// The defaults of Limits: those of 'baton serve'.
const (
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
)

// Limits bound what a connection to the API's http.Server may hold; a
// zero field takes its default.
type Limits struct {
	// ReadHeaderTimeout bounds the reading of a request's line and
	// headers: a client that trickles them in is cut off.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the reading of a whole request, its body
	// included: a body that trickles in is cut off at it (the handler's
	// read fails, 400 bad_request), and the connection closed.
	ReadTimeout time.Duration
	// WriteTimeout bounds the writing of an answer; event streams extend
	// their own deadline before each write.
	WriteTimeout time.Duration
	// IdleTimeout is how long a kept-alive connection may wait for its
	// next request before the server closes it.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers (431 past it, net/http's
	// own plain-text answer).
	MaxHeaderBytes int
}

// HTTPServer returns an http.Server of h with l's limits: how 'baton
// serve' serves the API. The caller sets what else it needs (TLSConfig,
// ErrorLog) before serving.
func HTTPServer(h http.Handler, l Limits) *http.Server {
	or := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	maxHeader := l.MaxHeaderBytes
	if maxHeader <= 0 {
		maxHeader = DefaultMaxHeaderBytes
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: or(l.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		ReadTimeout:       or(l.ReadTimeout, DefaultReadTimeout),
		WriteTimeout:      or(l.WriteTimeout, DefaultWriteTimeout),
		IdleTimeout:       or(l.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    maxHeader,
	}
}
