package zk

import (
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
)

// TestEntryName: an entry's name carries its action name and route token
// and reads back whole, for every kind of route and names holding '-';
// names of older entries (no route, no action name) still read, as no
// route and an unknown name; the sort order stays rank, then time.
func TestEntryName(t *testing.T) {
	const at = int64(1732600000000)
	cases := []struct {
		a    job.Action
		want placement.Route
	}{
		{job.Action{JobID: "j-1", ID: "seq[0]#1", Name: "log"}, placement.Route{}},
		{job.Action{JobID: "j", ID: "par[1]#2", Name: "fetch-data", Priority: 5,
			Placement: &job.Placement{Key: "dataset-42", Wait: 2 * time.Second}},
			placement.Route{Kind: placement.RouteSoft, Key: placement.KeyHash("dataset-42"), Wait: 2 * time.Second}},
		{job.Action{JobID: "a-b-c", ID: "seq[0]#1", Name: "x.y_z",
			Placement: &job.Placement{Key: "a-b-c/path:", Strict: true, Names: []string{"x.y_z"}}},
			placement.Route{Kind: placement.RoutePin, Key: placement.KeyHash("a-b-c/path:")}},
		{job.Action{JobID: "r", ID: "race[1].seq[0]#1", Name: "sleep", Replica: &job.Replica{Race: "", Copy: 1, Of: 3}},
			placement.Route{Kind: placement.RouteGroup, Key: groupKey("r", "")}},
		{job.Action{JobID: "w", ID: "seq[0]#1", Name: "n", Placement: &job.Placement{Key: "k", Wait: 2 * placement.MaxWait}},
			placement.Route{Kind: placement.RouteSoft, Key: placement.KeyHash("k"), Wait: placement.MaxWait}},
	}
	for _, c := range cases {
		name := entryName(c.a, at)
		e, ok := parseEntry(name)
		if !ok {
			t.Fatalf("%s: does not parse", name)
		}
		if e.rank != rank(c.a.Priority) || e.queuedMs != at || e.id != c.a.JobID || e.actionID != c.a.ID || e.action != c.a.Name || e.route != c.want {
			t.Errorf("%s: read back as %+v, want route %+v", name, e, c.want)
		}
		if err := zkNameOK(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !strings.HasPrefix(name, "a-") {
			t.Errorf("%s: not an entry name", name)
		}
	}
	// An entry an older baton named.
	old := "a-10000-1732600000000-3-j-1-seq[0]#1"
	e, ok := parseEntry(old)
	if !ok || e.id != "j-1" || e.actionID != "seq[0]#1" || e.action != "" || e.route != (placement.Route{}) || e.rank != 10000 {
		t.Errorf("old name %s read as %+v, %v", old, e, ok)
	}
	// Rank, then time, whatever the route and name.
	a := entryName(job.Action{JobID: "z", ID: "a#1", Name: "zzz", Placement: &job.Placement{Key: "k", Strict: true}}, at)
	b := entryName(job.Action{JobID: "a", ID: "a#1", Name: "aaa"}, at+1)
	c := entryName(job.Action{JobID: "a", ID: "a#1", Name: "aaa", Priority: 1}, at+2)
	if !(c < a && a < b) {
		t.Errorf("order of %s, %s, %s: want priority first, then time", c, a, b)
	}
	for _, bad := range []string{"a-10000-1732600000000-", "a-10000-1732600000000-q-3-log-1-j-x", "a-10000-1732600000000---9-log-1-j-x", "a-10000-1732600000000-k00.1-3-log-1-j-x"} {
		if e, ok := parseEntry(bad); ok {
			t.Errorf("%s: read as %+v, want malformed", bad, e)
		}
	}
}
