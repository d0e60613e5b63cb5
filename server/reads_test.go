package server_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/servertest"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/storetest"
)

// TestStoreReadsPerRequest counts the store operations the server itself
// makes for a submit and a status (the runner's own writes go to the
// store under the counting one): a submit's answer is built from what was
// created and the store's Stat of it, with no Load before or after; a
// retry relies on the store's create-if-absent error and reads the job
// once; a status reads the job and its Stat. Counts, not time, guard the
// speed of these paths.
func TestStoreReadsPerRequest(t *testing.T) {
	var counting *storetest.Counting
	now := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	e := servertest.NewEnv(t, checked(func(t *testing.T, reg *runner.Registry) (store.Store, any) {
		st := store.NewMemory()
		t.Cleanup(func() { st.Close() })
		counting = storetest.NewCounting(st)
		return counting, runLocal(t, st, reg)
	}), func(o *server.Options) { o.Now = func() time.Time { return now } })
	ctx := t.Context()
	const flow = `{"version":1,"root":{"act":"ok"}}`

	// The first submit counts the unfinished jobs (once a second: the
	// clock stands still here).
	e.Submit(t, "first", flow)
	before := counting.Counts()
	for i := range 3 {
		id := job.ID(fmt.Sprintf("r-%d", i))
		sum := e.Submit(t, id, flow)
		if sum.ID != string(id) || sum.Version < 1 || sum.Total != 1 || sum.Created == nil || sum.Outstanding == nil {
			t.Fatalf("submit %s: %+v", id, sum)
		}
	}
	if got, want := counting.Counts().Sub(before), (storetest.Counts{Stat: 3}); got != want {
		t.Errorf("3 submits read the store: %v; want %v", got, want)
	}

	e.Settled(t, "r-0")
	before = counting.Counts()
	a := e.Do(t, "POST", "/api/v1/jobs?id=r-0", nil, flow)
	if a.Status != http.StatusOK {
		t.Fatalf("retry: %d %s", a.Status, a.Body)
	}
	if got, want := counting.Counts().Sub(before), (storetest.Counts{Load: 1, Stat: 1}); got != want {
		t.Errorf("a retry read the store: %v; want %v", got, want)
	}
	before = counting.Counts()
	a = e.Do(t, "POST", "/api/v1/jobs?id=r-0", nil, `{"version":1,"root":{"act":"fail"}}`)
	if a.Status != http.StatusConflict {
		t.Fatalf("another workflow: %d %s", a.Status, a.Body)
	}
	if got, want := counting.Counts().Sub(before), (storetest.Counts{Load: 1}); got != want {
		t.Errorf("a conflicting submit read the store: %v; want %v", got, want)
	}

	before = counting.Counts()
	j, err := e.Reader.Job(ctx, "r-0", client.JobQuery{NoNodes: true})
	if err != nil || j.Status != "succeeded" || j.Created == nil {
		t.Fatalf("status: %+v, %v", j, err)
	}
	if got, want := counting.Counts().Sub(before), (storetest.Counts{Load: 1, Stat: 1}); got != want {
		t.Errorf("a status read the store: %v; want %v", got, want)
	}
}
