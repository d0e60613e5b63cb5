package zk_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// zxid reads the server's last zxid: each transaction it applied (a
// multi-op is one) took the next.
func zxid(t *testing.T, srv *zktest.Server) int64 {
	t.Helper()
	out, err := zktest.FourLetter(srv.Addr(), "srvr")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(out, "\n") {
		if v, ok := strings.CutPrefix(line, "Zxid: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("srvr without a Zxid: %q", out)
	return 0
}

// TestStatsCountMultiOps: Stats.Multis counts the multi-ops the server
// applied for the runner's connection, as the server's zxids count them,
// and Stats.MultiOps the operations inside them: a submit of a job of a
// par of 2 actions is one multi-op of the job's node and its 2 queue
// entries at least.
func TestStatsCountMultiOps(t *testing.T) {
	srv := zktest.Start(t)
	if srv.External() {
		t.Skip("a shared server: other tests' writes move its zxid")
	}
	st := openStore(t, srv, zkrunner.Config{})
	sub := submitter(t, st)
	ctx := context.Background()
	s0, z0 := sub.Stats(), zxid(t, srv)
	for _, id := range []job.ID{"a", "b", "c"} {
		if err := sub.Submit(ctx, id, ast.Par(ast.Act("x", 1), ast.Act("x", 2))); err != nil {
			t.Fatal(err)
		}
	}
	s1, z1 := sub.Stats(), zxid(t, srv)
	multis, ops := s1.Multis-s0.Multis, s1.MultiOps-s0.MultiOps
	if multis != 3 || z1-z0 != 3 {
		t.Errorf("3 submits: %d multi-ops counted, %d transactions on the server; want 3 and 3", multis, z1-z0)
	}
	if ops < 3*3 {
		t.Errorf("3 submits of 2 actions: %d operations counted inside their multi-ops; want at least 9", ops)
	}
	t.Logf("3 submits: %d multi-ops, %d operations", multis, ops)
}
