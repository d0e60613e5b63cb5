package servertest

import (
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/client"
)

// timesSlack bounds how far a store's or runner's clock may be from the
// test's: far more than clock skew on one machine, far less than a unit
// mistake.
const timesSlack = time.Hour

// testTimes: a summary tells when the job was created and last updated
// (submit, job, listing), and a cancelled job and its history when it was
// cancelled, in RFC 3339 UTC.
func testTimes(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	ctx := ctxOf(t)
	start := time.Now()
	near := func(what string, tm *time.Time) {
		t.Helper()
		switch {
		case tm == nil:
			t.Errorf("%s: no time", what)
		case tm.Location() != time.UTC:
			t.Errorf("%s: %v is not in UTC", what, tm)
		case tm.Before(start.Add(-timesSlack)) || tm.After(time.Now().Add(timesSlack)):
			t.Errorf("%s: %v is nowhere near the test's clock (%v)", what, tm, start)
		}
	}
	sum := e.Submit(t, "t", okFlow)
	near("submit: created", sum.Created)
	j := e.Settled(t, "t")
	near("job: created", j.Created)
	near("job: updated", j.Updated)
	if j.Created != nil && j.Updated != nil && j.Updated.Before(*j.Created) {
		t.Errorf("job: updated %v before created %v", j.Updated, j.Created)
	}
	if sum.Created != nil && j.Created != nil && !sum.Created.Equal(*j.Created) {
		t.Errorf("created %v at submit, %v later", sum.Created, j.Created)
	}
	l, err := e.Reader.List(ctx, client.ListQuery{Prefix: "t"})
	if err != nil || len(l.Jobs) != 1 {
		t.Fatalf("list: %+v, %v", l, err)
	}
	near("listing: created", l.Jobs[0].Created)
	near("listing: updated", l.Jobs[0].Updated)
	if l.Jobs[0].Created != nil && j.Created != nil && !l.Jobs[0].Created.Equal(*j.Created) {
		t.Errorf("listing: created %v, the job says %v", l.Jobs[0].Created, j.Created)
	}
	a := e.Do(t, "GET", "/api/v1/jobs/t?nodes=false", nil, "")
	if !strings.Contains(string(a.Body), `"created":"`) || !strings.Contains(string(a.Body), `Z","updated":"`) {
		t.Errorf("the job's JSON: %s", a.Body)
	}

	e.Submit(t, "tc", blockFlow)
	e.Running(t, "tc", "body")
	if _, err := e.Client.Cancel(ctx, "tc", "enough"); err != nil {
		t.Fatal(err)
	}
	c := e.Settled(t, "tc")
	if c.Cancel == nil {
		t.Fatalf("cancelled job: %+v", c.Summary)
	}
	near("job: cancel time", c.Cancel.Time)
	h, err := e.Reader.History(ctx, "tc", 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var cancels []api.Cancel
	for _, st := range h.Steps {
		if st.Cancel != nil {
			cancels = append(cancels, *st.Cancel)
		}
	}
	if len(cancels) != 1 {
		t.Fatalf("history: %d cancels, want 1: %+v", len(cancels), h)
	}
	near("history: cancel time", cancels[0].Time)
	if c.Cancel.Time != nil && cancels[0].Time != nil && !c.Cancel.Time.Equal(*cancels[0].Time) {
		t.Errorf("cancel time: the job says %v, its history %v", c.Cancel.Time, cancels[0].Time)
	}
}
