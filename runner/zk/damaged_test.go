package zk_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/store"
)

// TestDamagedRecordIsolated: one job whose record is damaged (as
// `zkCli.sh create /baton/jobs/x '{"bad'` makes it) is listed as damaged;
// the other jobs are listed, and a worker that starts resumes them; the
// damaged job can be deleted.
func TestDamagedRecordIsolated(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path("damaged")
	st := openStore(t, srv, zkrunner.Config{Root: root})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sub, err := zkrunner.New(zkrunner.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []job.ID{"a", "z"} {
		if err := sub.Submit(ctx, id, ast.Act("noop", string(id))); err != nil {
			t.Fatal(err)
		}
	}
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	// The queue entries are lost too: only resuming brings the jobs back.
	entries, _, err := c.Children(root + "/queue")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := c.Delete(root+"/queue/"+e, -1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Create(root+"/jobs/x", []byte(`{"bad`), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	infos, err := st.List(ctx, store.Query{})
	if err != nil {
		t.Fatalf("List with one damaged record: %v", err)
	}
	var ids []job.ID
	for _, in := range infos {
		ids = append(ids, in.ID)
		if (in.ID == "x") != (in.Damaged != nil) {
			t.Errorf("job %s: Damaged %v", in.ID, in.Damaged)
		}
		if in.ID == "x" && !errors.Is(in.Damaged, job.ErrCorrupt) {
			t.Errorf("job x: Damaged %v does not wrap job.ErrCorrupt", in.Damaged)
		}
	}
	if len(ids) != 3 || ids[0] != "a" || ids[1] != "x" || ids[2] != "z" {
		t.Fatalf("listed %v, want a x z", ids)
	}
	unfinished, err := st.List(ctx, store.Query{Unfinished: true})
	if err != nil || len(unfinished) != 3 {
		t.Errorf("List(Unfinished): %v %v; want a, x (its status unknown) and z", unfinished, err)
	}

	reg := runner.NewRegistry()
	if err := reg.Register("noop", func(context.Context, job.Action) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	runRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
	for _, id := range []job.ID{"a", "z"} {
		j, err := sub.Wait(ctx, id)
		if err != nil || j.Status() != job.StatusSucceeded {
			t.Fatalf("job %s after a worker started: %v %v", id, j.Status(), err)
		}
	}
	if err := st.Delete(ctx, "x"); err != nil {
		t.Fatalf("deleting the damaged job: %v", err)
	}
	if _, err := st.Load(ctx, "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after Delete: %v", err)
	}
}
