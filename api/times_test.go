package api_test

import (
	"errors"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// TestSummaryTimes: a listing's summary has the store's times; a loaded
// job's takes Created from the store, and Updated only when the store's
// Info is of the same version; a damaged job's has none.
func TestSummaryTimes(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c, u := t0.Add(time.Second), t0.Add(time.Minute)
	tr, err := job.New("j", ast.Seq(ast.Act("a", 1), ast.Act("b", 2)), job.StartedAt(t0))
	if err != nil {
		t.Fatal(err)
	}
	in := store.InfoOf(tr.Job)
	in.Created, in.Updated = c.In(time.FixedZone("x", 3600)), u
	l := api.SummaryOfInfo(in)
	if l.Created == nil || !l.Created.Equal(c) || l.Created.Location() != time.UTC || l.Updated == nil || !l.Updated.Equal(u) {
		t.Errorf("listing: created %v, updated %v", l.Created, l.Updated)
	}
	s := api.SummaryOf(tr.Job).WithInfo(in)
	if s.Created == nil || !s.Created.Equal(c) || s.Updated == nil || !s.Updated.Equal(u) {
		t.Errorf("loaded, same version: created %v, updated %v", s.Created, s.Updated)
	}
	in.Version++ // the store moved on: Updated is not this version's
	s = api.SummaryOf(tr.Job).WithInfo(in)
	if s.Created == nil || s.Updated == nil || !s.Updated.Equal(t0) {
		t.Errorf("loaded, older version: created %v, updated %v (want the job's clock %v)", s.Created, s.Updated, t0)
	}
	if s := api.SummaryOf(tr.Job).WithInfo(store.Info{ID: "other", Created: c}); s.Created != nil {
		t.Errorf("another job's Info: created %v", s.Created)
	}
	d := api.SummaryOfInfo(store.Info{ID: "d", Created: c, Damaged: errors.New("bad")})
	if d.Created != nil || d.Status != api.StatusDamaged {
		t.Errorf("damaged: %+v", d)
	}
	if s := api.SummaryOfInfo(store.Info{ID: "z", Status: job.StatusRunning}); s.Created != nil || s.Updated != nil {
		t.Errorf("a store that tells no times: %+v", s)
	}
}

// TestCancelTime: the time stamped on a cancel is the cancel's time in
// the history's step and in the job's summary; a cancel without one has
// none.
func TestCancelTime(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, at := range []time.Time{t0.Add(time.Hour), {}} {
		tr, err := job.New("c", ast.Act("a", 1), job.StartedAt(t0))
		if err != nil {
			t.Fatal(err)
		}
		h := store.History{Origin: tr.Job}
		r := job.CancelResult("c", "stop")
		r.At = at
		next, err := job.Restart(tr.Job, []job.Result{r})
		if err != nil {
			t.Fatal(err)
		}
		h.Steps = append(h.Steps, next.Step)
		hist, err := api.HistoryOf(h, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		last := hist.Steps[len(hist.Steps)-1]
		if last.Cancel == nil || last.Cancel.Reason != "stop" || (last.Cancel.Time == nil) != at.IsZero() || last.Cancel.Time != nil && !last.Cancel.Time.Equal(at) {
			t.Errorf("history step cancel: %+v, want the time %v", last.Cancel, at)
		}
		if s := api.SummaryOf(next.Job); s.Cancel == nil || s.Cancel.Reason != "stop" || (s.Cancel.Time == nil) != at.IsZero() || s.Cancel.Time != nil && !s.Cancel.Time.Equal(at) {
			t.Errorf("summary cancel: %+v, want the time %v", s.Cancel, at)
		}
	}
}
