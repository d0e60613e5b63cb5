package runner_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/storetest"
)

// noLister is a store that cannot list.
type noLister struct{ store.Store }

// TestRecoverAllPages: RecoverAll hands every unfinished job to recover
// once, in pages of at most the page size, and lists the store
// N/page+1 times (counted by storetest.Counting), never all at once;
// finished jobs are not handed over.
func TestRecoverAllPages(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ unfinished, page, lists int }{
		{25, 10, 3}, {20, 10, 3}, {0, 10, 1}, {7, 0, 1},
	} {
		t.Run(fmt.Sprintf("%d/%d", tc.unfinished, tc.page), func(t *testing.T) {
			st := storetest.NewCounting(store.NewMemory())
			var want []job.ID
			for i := range tc.unfinished * 2 {
				id := job.ID(fmt.Sprintf("j%03d", i))
				tr, err := job.New(id, ast.Act("x", nil), job.WithIncarnation(uint64(i+1)))
				if err != nil {
					t.Fatal(err)
				}
				if err := store.Commit(ctx, st, tr); err != nil {
					t.Fatal(err)
				}
				if i%2 == 1 { // every other job finished
					a := tr.Actions[0]
					if tr, err = job.Restart(tr.Job, []job.Result{{JobID: id, ActionID: a.ID}}); err != nil {
						t.Fatal(err)
					}
					if err := store.Commit(ctx, st, tr); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want = append(want, id)
			}
			before := st.Counts()
			var got []job.ID
			biggest := 0
			jobs, actions, err := runner.RecoverAll(ctx, st, tc.page, func(_ context.Context, ids ...job.ID) (int, error) {
				got = append(got, ids...)
				biggest = max(biggest, len(ids))
				return len(ids), nil
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("recovered %v, want %v", got, want)
			}
			if jobs != len(want) || actions != len(want) {
				t.Errorf("RecoverAll = %d jobs, %d actions; want %d and %d", jobs, actions, len(want), len(want))
			}
			page := tc.page
			if page <= 0 {
				page = runner.RecoverPage
			}
			if biggest > page {
				t.Errorf("a page of %d jobs, over the page size %d", biggest, page)
			}
			if c := st.Counts().Sub(before); c.List != tc.lists || c.Reads() != c.List {
				t.Errorf("store calls %v; want %d listings and nothing else", c, tc.lists)
			}
		})
	}
}

// TestRecoverAllErrors: an error of recover is logged and the next page
// recovered; a store that cannot list is an error wrapping
// errors.ErrUnsupported; an ended context stops it.
func TestRecoverAllErrors(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	for i := range 5 {
		tr, err := job.New(job.ID(fmt.Sprintf("j%d", i)), ast.Act("x", nil), job.WithIncarnation(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Commit(ctx, st, tr); err != nil {
			t.Fatal(err)
		}
	}
	calls := 0
	jobs, _, err := runner.RecoverAll(ctx, st, 2, func(context.Context, ...job.ID) (int, error) {
		calls++
		return 0, errors.New("boom")
	}, nil)
	if err != nil || calls != 3 || jobs != 5 {
		t.Errorf("RecoverAll = %d jobs, %v after %d calls; want 5 jobs, nil after 3", jobs, err, calls)
	}
	if _, _, err := runner.RecoverAll(ctx, noLister{st}, 2, nil, nil); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("RecoverAll on a store that cannot list = %v, want ErrUnsupported", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	calls = 0
	_, _, err = runner.RecoverAll(cctx, st, 2, func(context.Context, ...job.ID) (int, error) {
		calls++
		cancel()
		return 0, nil
	}, nil)
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("RecoverAll after ctx ended = %v after %d calls, want Canceled after 1", err, calls)
	}
}
