package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// TestClaimsBounded is issue 15's defect 12: every start of a restarter
// claims its partitions, and the claims it supersedes that no record
// depends on are deleted with tombstones, so the live claims do not grow
// with the starts; the claims name the runner (Options.Name). Compaction
// then leaves every job as it was.
func TestClaimsBounded(t *testing.T) {
	c := privateCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.Brokers = c.ListenAddrs()
	const parts, starts = 4, 15
	cfg.Partitions = parts
	counter := newCounter(t)
	client := start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleClient})

	var ids []job.ID
	for i := range starts {
		r := start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Name: "restarter-a", Registry: counter.reg, DrainTimeout: time.Second}, Store: openStore(t, cfg)})
		for r.Owns() < parts {
			if ctx.Err() != nil {
				t.Fatalf("start %d: the runner owns %d partitions, want %d", i, r.Owns(), parts)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if i%5 == 0 { // a few starts make jobs; the others only claim
			id := job.ID(fmt.Sprintf("job-%d", i))
			ids = append(ids, id)
			if err := client.Submit(ctx, id, fanJob()); err != nil {
				t.Fatal(err)
			}
			if _, err := client.Wait(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		r.stop(t)
	}

	st := openStore(t, cfg)
	live, err := st.LiveKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	claims := 0
	for k, v := range live {
		if !strings.HasPrefix(k, "/claim/") {
			continue
		}
		claims++
		if owner, err := kafkarunner.ClaimOwner(v); err != nil || owner != "restarter-a" {
			t.Errorf("claim %s names %q (%v), want the runner's name", k, owner, err)
		}
	}
	// One per partition, and one per start that wrote records in it.
	if max := parts + len(ids); claims > max {
		t.Errorf("%d live claims after %d starts on %d partitions, want at most %d", claims, starts, parts, max)
	}
	t.Logf("%d live claims after %d starts on %d partitions", claims, starts, parts)

	// What compaction leaves replays to the same jobs.
	c.Compact()
	fresh := openStore(t, cfg)
	for _, id := range ids {
		j, err := fresh.Load(ctx, id)
		if err != nil || j.Status() != job.StatusSucceeded {
			t.Errorf("job %s after compaction: %v %v", id, j.Status(), err)
			continue
		}
		checkHistory(t, ctx, fresh, j)
	}
	start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Name: "restarter-b", Registry: counter.reg, DrainTimeout: time.Second}, Store: openStore(t, cfg)})
	if err := client.Submit(ctx, "after", ast.Act("noop", nil)); err != nil {
		t.Fatal(err)
	}
	if j, err := client.Wait(ctx, "after"); err != nil || j.Status() != job.StatusSucceeded {
		t.Errorf("a job after compaction: %v %v", j.Status(), err)
	}
}
