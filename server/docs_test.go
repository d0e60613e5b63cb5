package server_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/batonwf/baton/server"
)

// TestDocs: docs/api.md names every route of the table and every error
// code with its status.
func TestDocs(t *testing.T) {
	b, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, rt := range server.Routes() {
		name := rt.Method + " " + strings.TrimSuffix(rt.Pattern, "{$}")
		if !strings.Contains(doc, "`"+name+"`") {
			t.Errorf("docs/api.md does not name the route %s", name)
		}
		for _, q := range rt.Query {
			if !strings.Contains(doc, "`"+q+"`") {
				t.Errorf("docs/api.md does not name the parameter %s of %s", q, name)
			}
		}
	}
	for _, c := range server.Codes {
		line := ""
		for _, l := range strings.Split(doc, "\n") {
			if strings.Contains(l, "`"+string(c)+"`") && strings.HasPrefix(l, "| ") {
				line = l
				break
			}
		}
		if !strings.HasPrefix(line, "| "+strconv.Itoa(c.Status())+" |") {
			t.Errorf("docs/api.md's code table has no row with status %d for %s: %q", c.Status(), c, line)
		}
	}
}
