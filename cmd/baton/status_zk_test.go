package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/internal/zktest"
)

// TestZKStatusReasons: 'baton status --zk' says, for each of the oldest
// queued entries, why it waits. Two workers of capacity 1; a long action
// of soft key k runs on k's holder; a second action of k, with a wait of
// 10 minutes, waits for that busy holder, and status says so, naming the
// holder and when the action spills.
func TestZKStatusReasons(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path("reasons")
	args := func(a ...string) []string { return append(a, "--zk", srv.ConnString(), "--root", root) }
	startWorker(t, srv, root, "w1", "--capacity", "1")
	startWorker(t, srv, root, "w2", "--capacity", "1")

	keyed := func(sleep string) string {
		return `{"version":2,"root":{"act":"sleep","payload":"` + sleep + `","affinity":{"key":"k","wait":"10m"}}}`
	}
	baton(t, args("submit", writeWorkflow(t, "long.json", keyed("60s")), "--id", "long")...).want(t, exitOK)
	holder := regexp.MustCompile(`(?m)^(w[12]) .* 1/1 .* long/root#1\n`)
	var h string
	eventually(t, 30*time.Second, "the holder of k running long", func() (bool, string) {
		r := baton(t, args("status")...)
		m := holder.FindStringSubmatch(r.stdout)
		if m != nil {
			h = m[1]
		}
		return m != nil, r.stdout + r.stderr
	})
	baton(t, args("submit", writeWorkflow(t, "next.json", keyed("1ms")), "--id", "next")...).want(t, exitOK)
	// The holder's load is published at most once a second: until it is,
	// the others may read it as having room.
	var out string
	eventually(t, 30*time.Second, "next's reason: its holder busy", func() (bool, string) {
		r := baton(t, args("status")...)
		out = r.stdout
		return strings.Contains(out, "holder "+h+" busy 1/1, spill at +"), out + r.stderr
	})
	contains(t, "stdout", out, "queue: 2 entries (actions waiting or running); the first 2:\n",
		"  long/root#1  sleep  k", "  on "+h+"\n",
		"  next/root#1  sleep  k", "  waits: ")
	baton(t, args("cancel", "long", "next")...).want(t, exitOK)
}
