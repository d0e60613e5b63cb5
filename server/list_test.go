package server_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/server/servertest"
	"github.com/batonwf/baton/store"
)

// TestListWhileSubmitting: 10,000 jobs listed page by page while more are
// submitted between them: each job there before appears exactly once,
// none twice, in order.
func TestListWhileSubmitting(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 jobs")
	}
	const n = 10000
	var st store.Store
	e := servertest.NewEnv(t, checked(func(t *testing.T, reg *runner.Registry) (store.Store, any) {
		st = store.NewMemory()
		return st, runLocal(t, st, reg)
	}), nil)
	root := mustDecode(t, `{"version":1,"root":{"act":"ok"}}`)
	for i := range n {
		tr, err := job.New(job.ID(fmt.Sprintf("j-%05d", i)), root)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Create(t.Context(), tr.Job); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i += 97 {
			select {
			case <-stop:
				return
			default:
			}
			// Between the jobs there: j-00097-new sorts after j-00097.
			if _, _, err := e.Client.Submit(t.Context(), job.ID(fmt.Sprintf("j-%05d-new", i%n)), []byte(`{"version":1,"root":{"act":"ok"}}`)); err != nil && client.Code(err) != "" {
				t.Errorf("submit: %v", err)
				return
			}
		}
	}()
	seen := map[string]int{}
	last := ""
	var after job.ID
	for {
		page, err := e.Reader.List(t.Context(), client.ListQuery{Prefix: "j-", Limit: 1000, After: after})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page.Jobs {
			if s.ID <= last {
				t.Fatalf("%s listed after %s", s.ID, last)
			}
			last = s.ID
			seen[s.ID]++
		}
		if page.Next == "" {
			break
		}
		after = job.ID(page.Next)
	}
	close(stop)
	wg.Wait()
	for i := range n {
		if id := fmt.Sprintf("j-%05d", i); seen[id] != 1 {
			t.Fatalf("%s listed %d times", id, seen[id])
		}
	}
	t.Logf("%d jobs listed, %d of them submitted during the listing", len(seen), len(seen)-n)
}
