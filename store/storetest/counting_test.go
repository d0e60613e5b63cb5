package storetest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/storetest"
)

// A Counting store is a store: it passes the suite as the store under it.
func TestCountingConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return storetest.NewCounting(store.NewMemory()) })
}

// onlyStore has none of the optional capabilities.
type onlyStore struct{ store.Store }

func TestCountingCounts(t *testing.T) {
	ctx := context.Background()
	c := storetest.NewCounting(onlyStore{store.NewMemory()})
	defer c.Close()
	tr, err := job.New("j", ast.Act("x", nil), job.WithIncarnation(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(ctx, c, tr); err != nil {
		t.Fatal(err)
	}
	a := tr.Actions[0]
	next, err := job.Restart(tr.Job, []job.Result{{JobID: "j", ActionID: a.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(ctx, c, next); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(ctx, "j"); err != nil {
		t.Fatal(err)
	}
	if in, err := store.Stat(ctx, c, "j"); err != nil || in.Status != job.StatusSucceeded {
		t.Fatalf("Stat = %+v, %v; want succeeded (from Load: the store under it is no Stater)", in, err)
	}
	if _, err := c.Load(ctx, "other"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Load(other) = %v, want ErrNotFound", err)
	}
	// The capabilities the store under it lacks are unsupported, counted.
	for what, err := range map[string]error{
		"List":   func() error { _, err := store.List(ctx, c, store.Query{}); return err }(),
		"Delete": store.Delete(ctx, c, "j"),
		"Sweep":  func() error { _, err := store.Sweep(ctx, c); return err }(),
	} {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s through a Counting store on a store without it: %v, want ErrUnsupported", what, err)
		}
	}
	if _, ok := c.Cached("j"); ok {
		t.Errorf("Cached found a copy in a store without a cache")
	}
	want := storetest.Counts{Create: 1, Save: 1, Load: 2, Stat: 1, List: 1, Delete: 1, Sweep: 1, Cached: 1}
	if got := c.Counts(); got != want {
		t.Errorf("Counts() = %v\nwant       %v", got, want)
	}
	want.Load, want.List, want.Sweep = 1, 0, 0
	if got := c.CountsOf("j"); got != want {
		t.Errorf("CountsOf(j) = %v\nwant          %v", got, want)
	}
	if got := c.CountsOf("other"); got != (storetest.Counts{Load: 1}) {
		t.Errorf("CountsOf(other) = %v, want one load", got)
	}
}
