package main

import (
	"strings"
	"testing"
	"time"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// TestKafkaDeleteAndRetain is issue 15's defect 13 from the command line:
// 'baton delete --kafka' deletes a job through the restarter that owns
// it (it refused before), and 'baton worker --kafka --retain D' deletes
// settled jobs older than D.
func TestKafkaDeleteAndRetain(t *testing.T) {
	if kafkarunner.DefaultRetention != zkrunner.DefaultRetention {
		t.Errorf("runner/kafka keeps settled jobs %v by default, runner/zk %v: worker's one --retain has one default", kafkarunner.DefaultRetention, zkrunner.DefaultRetention)
	}
	_, addr := kafkaCluster(t)
	args := func(prefix string, a ...string) []string { return append(a, "--kafka", addr, "--prefix", prefix) }
	where := "Kafka " + addr + " under prefix del"
	hello := writeWorkflow(t, "hello.json", helloJSON)

	w := startInProcess(t, "baton worker w1: serving ", args("del", "worker", "--name", "w1")...)
	baton(t, args("del", "submit", hello, "--id", "h1", "--wait", "--quiet")...).want(t, exitOK)
	r := baton(t, args("del", "delete", "h1")...).want(t, exitOK)
	if !strings.HasPrefix(r.stdout, "deleted h1 (job, succeeded at v") || !strings.HasSuffix(r.stdout, ") from "+where+"\n") {
		t.Errorf("delete's stdout:\n%s", r.stdout)
	}
	r = baton(t, args("del", "status", "h1")...).want(t, exitError)
	contains(t, "status", r.stderr, "baton: job h1 not found in "+where)
	r = baton(t, args("del", "delete", "h1", "nosuch")...).want(t, exitError)
	contains(t, "delete", r.stderr, "baton: job h1 not found in "+where, "baton: job nosuch not found in "+where)
	// The ID is free again.
	baton(t, args("del", "submit", hello, "--id", "h1", "--wait", "--quiet")...).want(t, exitOK)
	if code := w.stop(t); code != exitOK {
		t.Fatalf("worker: exit status %d\n%s", code, w.errOut.String())
	}

	// With no restarter, the delete says so and waits for one.
	d := startInProcess(t, "a delete waits in topic del.restarter until one starts", args("del", "delete", "h1")...)
	startInProcess(t, "baton worker w2: serving ", args("del", "worker", "--name", "w2")...)
	select {
	case code := <-d.done:
		d.done <- code
		if code != exitOK {
			t.Errorf("delete: exit status %d\n%s%s", code, d.out.String(), d.errOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("delete did not return:\n%s", d.errOut.String())
	}
	baton(t, args("del", "status", "h1")...).want(t, exitError)

	startInProcess(t, "baton worker w3: serving ", args("ret", "worker", "--name", "w3", "--retain", "300ms")...)
	baton(t, args("ret", "submit", hello, "--id", "old", "--wait", "--quiet")...).want(t, exitOK)
	eventually(t, 30*time.Second, "job old deleted by retention", func() (bool, string) {
		r := baton(t, args("ret", "status", "old")...)
		return r.code == exitError && strings.Contains(r.stderr, "job old not found"), r.stdout + r.stderr
	})
}
