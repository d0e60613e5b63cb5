package zk_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// TestCancelAndDeleteRemoveTheQueue: the queue entries (and timers) of a
// job whose actions no worker has a handler for are removed when the job
// is cancelled or deleted, as baton cancel and baton delete do it: a
// runner without a Registry cancels, the store deletes. A worker that
// serves other actions sees none of them; another job's stay.
func TestCancelAndDeleteRemoveTheQueue(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path("leftovers")
	st := openStore(t, srv, zkrunner.Config{Root: root})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reg := runner.NewRegistry()
	if err := reg.Register("other", func(context.Context, job.Action) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	runRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
	cli, err := zkrunner.New(zkrunner.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	wf := ast.Par(ast.Act("nohandler", 1), ast.Act("nohandler", 2)).WithDeadline(time.Hour)
	for _, id := range []job.ID{"cancelled", "deleted", "kept"} {
		if err := cli.Submit(ctx, id, wf); err != nil {
			t.Fatal(err)
		}
	}
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	of := func(dir string) map[string]int {
		names, _, err := c.Children(root + "/" + dir)
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, name := range names {
			for _, id := range []string{"cancelled", "deleted", "kept"} {
				if strings.Contains(name, "-"+id+"-") {
					n[id]++
				}
			}
		}
		return n
	}
	if q, tm := of("queue"), of("timers"); q["cancelled"] != 2 || q["deleted"] != 2 || q["kept"] != 2 || tm["kept"] != 1 {
		t.Fatalf("before: queue %v, timers %v", q, tm)
	}

	if err := cli.Cancel(ctx, "cancelled", "not needed"); err != nil {
		t.Fatal(err)
	}
	if q := of("queue"); q["cancelled"] != 0 {
		t.Errorf("the cancelled job keeps %d queue entries", q["cancelled"])
	}
	if err := st.Delete(ctx, "deleted"); err != nil {
		t.Fatal(err)
	}
	q, tm := of("queue"), of("timers")
	if q["deleted"] != 0 || tm["deleted"] != 0 {
		t.Errorf("the deleted job keeps %d queue entries and %d timers", q["deleted"], tm["deleted"])
	}
	if q["kept"] != 2 || tm["kept"] != 1 {
		t.Errorf("the other job's entries went: queue %v, timers %v", q, tm)
	}
	names, _, _ := c.Children(root + "/jobs")
	slices.Sort(names)
	if !slices.Equal(names, []string{"cancelled", "kept"}) {
		t.Errorf("jobs %v", names)
	}
}
