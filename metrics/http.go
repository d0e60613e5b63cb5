package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Middleware returns next, counted and timed: each request counts in
// baton_http_requests_total by route, method and status code, and its
// time goes to baton_http_request_duration_seconds by route and method,
// except for event streams (a text/event-stream answer), whose time is
// how long a client stayed.
//
// The route is the request's Pattern, as the http.ServeMux that served it
// set it (a request no pattern matched is "unmatched"), never its path,
// which a client chooses: wrap the ServeMux itself, or the handlers of its
// routes, since a handler between this middleware and the mux that
// serves a copy of the request hides the pattern. The method is one of
// the methods of RFC 9110 and PATCH, else "other". The writer the handler
// gets unwraps (http.ResponseController) to the one the middleware was
// given, so streams flush. A panic in next is counted as a 500 and goes
// on up. A nil *Metrics returns next.
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		finished := false
		defer func() {
			code := sw.code
			if !finished {
				code = http.StatusInternalServerError // a panic, on its way up
			} else if code == 0 {
				code = http.StatusOK
			}
			route := routeLabel(r.Pattern)
			method := methodLabel(r.Method)
			m.httpRequests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
			if !strings.HasPrefix(sw.Header().Get("Content-Type"), "text/event-stream") {
				m.httpDuration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
			}
		}()
		next.ServeHTTP(sw, r)
		finished = true
	})
}

// statusWriter records the status code written.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code // 1xx answers are interim
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes a flush on, for handlers that ask for http.Flusher.
func (w *statusWriter) Flush() {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap returns the writer under it, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// routeLabel returns the route label of a request whose ServeMux pattern
// is pattern.
func routeLabel(pattern string) string {
	if pattern == "" {
		return "unmatched"
	}
	return clipValue(pattern, 200)
}

// methodLabel returns the method label of method.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return "other"
}
