package zk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// quarantineSettings sets root's quarantine policy: after 3 failures,
// 1.5 s doubling up to 10 s.
func quarantineSettings(t *testing.T, st *zkrunner.Store) {
	t.Helper()
	if _, err := st.UpdateSettings(context.Background(), func(s *placement.Settings) error {
		s.Quarantine = placement.Quarantine{After: 3, First: 1500 * time.Millisecond, Max: 10 * time.Second}.WithDefaults()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// flakyJob is one "flaky" leaf retried up to attempts times, 10 ms apart.
func flakyJob(attempts int) ast.Node {
	return ast.Act("flaky", nil).WithRetry(ast.Retry{Attempts: attempts, Initial: 10 * time.Millisecond})
}

var errBadDisk = errors.New("bad disk")

// TestQuarantine: a worker whose "flaky" handler always fails, beside a
// peer whose handler succeeds, quarantines itself for "flaky" only: while
// quarantined it runs no "flaky" and keeps running "ok"; its second
// quarantine is twice as long as its first; every job succeeds.
func TestQuarantine(t *testing.T) {
	srv := zktest.Start(t)
	root := freshRoot(srv.Root())
	subSt := openOn(t, srv.Addrs(), root, zkrunner.Config{})
	quarantineSettings(t, subSt)
	zc := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	node := root + "/quarantine/flaky/bad"
	quarantined := func() bool { ok, _, err := zc.Exists(node); return err == nil && ok }

	var mu sync.Mutex
	var flakyInQuarantine, okInQuarantine int
	var badLog logBuf
	bad := startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "bad", Workers: 1,
		Logger: slog.New(slog.NewTextHandler(&badLog, &slog.HandlerOptions{Level: slog.LevelInfo})), Registry: registry(t, map[string]runner.Handler{
			"flaky": func(ctx context.Context, a job.Action) ([]byte, error) {
				if quarantined() {
					mu.Lock()
					flakyInQuarantine++
					mu.Unlock()
				}
				return nil, errBadDisk
			},
			"ok": func(ctx context.Context, a job.Action) ([]byte, error) {
				if quarantined() {
					mu.Lock()
					okInQuarantine++
					mu.Unlock()
				}
				return nil, nil
			},
		})}, Store: openOn(t, srv.Addrs(), root, zkrunner.Config{})})
	startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "good", Workers: 4, Registry: registry(t, map[string]runner.Handler{
		"flaky": func(ctx context.Context, a job.Action) ([]byte, error) {
			time.Sleep(10 * time.Millisecond)
			return nil, nil
		},
		"ok": func(ctx context.Context, a job.Action) ([]byte, error) { return nil, nil },
	})}, Store: openOn(t, srv.Addrs(), root, zkrunner.Config{})})
	sub := submitter(t, subSt)
	ctx := context.Background()

	// A stream of jobs until the bad worker was quarantined twice and ran
	// "ok" while quarantined.
	seen := map[int]int64{} // strikes -> until_ms_left, as the quarantine node said
	quarantines := func() []string { return badLog.lines(`msg="quarantined:`, "name=flaky") }
	var ids []job.ID
	deadline := time.Now().Add(max(90*time.Second, zktest.Patience(t)))
	for i := 0; ; i++ {
		// No node (not quarantined now), or a read the loaded machine's
		// connection lost: the next round reads again.
		if data, _, err := zc.Get(node); err == nil {
			var q struct {
				UntilMsLeft int64 `json:"until_ms_left"`
				Strikes     int   `json:"strikes"`
			}
			if json.Unmarshal(data, &q) == nil {
				seen[q.Strikes] = q.UntilMsLeft
			}
		}
		mu.Lock()
		enough := okInQuarantine > 0 && len(quarantines()) >= 2
		mu.Unlock()
		if enough {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d rounds: quarantines %q (stats %+v), ok run while quarantined %d times", i, quarantines(), bad.Stats(), okInQuarantine)
		}
		for _, n := range []ast.Node{flakyJob(50), ast.Act("ok", nil)} {
			id := job.ID(fmt.Sprintf("j%d", len(ids)))
			if err := sub.Submit(ctx, id, n); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, id := range ids {
		if j := waitJob(t, sub, id, 60*time.Second); j.Status() != job.StatusSucceeded {
			t.Fatalf("job %s ended %s:\n%s", id, j.Status(), job.Describe(j))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if flakyInQuarantine > 0 {
		t.Errorf("the bad worker ran flaky %d times while quarantined for it", flakyInQuarantine)
	}
	// The back-off doubles: by the worker's log, and by the nodes this
	// test read (it may miss one while its connection is lost).
	qs := quarantines()
	if len(qs) < 2 || !strings.Contains(qs[0], "for=1.5s") || !strings.Contains(qs[0], "strikes=1") ||
		!strings.Contains(qs[1], "for=3s") || !strings.Contains(qs[1], "strikes=2") {
		t.Errorf("quarantines: %q; want 1.5 s (strikes=1), then 3 s (strikes=2)", qs)
	}
	for strikes, ms := range seen {
		if strikes > 2 {
			continue // a third, begun as the stream stopped
		}
		if want := map[int]int64{1: 1500, 2: 3000}[strikes]; ms != want {
			t.Errorf("the quarantine node said strikes %d, %d ms; want %d ms", strikes, ms, want)
		}
	}
	if kids, _, err := zc.Children(root + "/quarantine"); err != nil || len(kids) != 1 || kids[0] != "flaky" {
		t.Errorf("quarantined action names: %v (%v); want flaky only", kids, err)
	}
	t.Logf("%d jobs; bad quarantined %d times (%v), ran ok %d times while quarantined", len(ids), bad.Stats().Quarantines, seen, okInQuarantine)
}

// TestQuarantineNobody: when every worker fails an action, nobody is
// quarantined and the jobs fail by their retry policy; a worker alone is
// never quarantined either.
func TestQuarantineNobody(t *testing.T) {
	srv := zktest.Start(t)
	failing := func(name string, root string) *started {
		return startRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: name, Registry: registry(t, map[string]runner.Handler{
			"flaky": func(ctx context.Context, a job.Action) ([]byte, error) { return nil, errBadDisk },
		})}, Store: openOn(t, srv.Addrs(), root, zkrunner.Config{})})
	}
	for _, workers := range []int{2, 1} {
		t.Run(fmt.Sprintf("%d workers", workers), func(t *testing.T) {
			root := freshRoot(srv.Root())
			subSt := openOn(t, srv.Addrs(), root, zkrunner.Config{})
			quarantineSettings(t, subSt)
			var ws []*started
			for i := range workers {
				ws = append(ws, failing(fmt.Sprintf("w%d", i), root))
			}
			sub := submitter(t, subSt)
			var ids []job.ID
			for i := range 6 {
				id := job.ID(fmt.Sprintf("f%d", i))
				if err := sub.Submit(context.Background(), id, flakyJob(5)); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			for _, id := range ids {
				j := waitJob(t, sub, id, 60*time.Second)
				if f, failed := j.Failure(); !failed || f.Message != errBadDisk.Error() {
					t.Fatalf("job %s ended %s (%+v); want failed by its handler", id, j.Status(), f)
				}
			}
			for _, w := range ws {
				if n := w.Stats().Quarantines; n != 0 {
					t.Errorf("a worker quarantined itself %d times", n)
				}
			}
		})
	}
}
