package client_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batonwf/baton/client"
)

// TestNotBaton: a server that is not baton's (its pages, for an error
// or a 200) gives an *client.Error with no code whose Detail is one line
// naming the status and content type, never the page, for calls and for
// event streams alike (the stream's Detail was the whole page).
func TestNotBaton(t *testing.T) {
	page := "<!DOCTYPE html>\n<html><body><h1>Not Found</h1></body></html>\n"
	for _, status := range []int{http.StatusNotFound, http.StatusOK} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(status)
			io.WriteString(w, page)
		}))
		c := client.New(ts.URL, client.Options{})
		check := func(what string, err error) {
			t.Helper()
			var ce *client.Error
			if !errors.As(err, &ce) {
				t.Errorf("%s, a %d page: %v, want a *client.Error", what, status, err)
				return
			}
			if ce.Code != "" || strings.Contains(ce.Detail, "<") || strings.Contains(ce.Detail, "\n") ||
				!strings.Contains(ce.Detail, "text/html, not baton's API") {
				t.Errorf("%s, a %d page: code %q, detail %q", what, status, ce.Code, ce.Detail)
			}
		}
		_, err := c.List(t.Context(), client.ListQuery{})
		check("List", err)
		check("Delete", c.Delete(t.Context(), "j"))
		for _, err := range c.Events(t.Context(), "j", 0) {
			check("Events", err)
			break
		}
		ts.Close()
	}
}
