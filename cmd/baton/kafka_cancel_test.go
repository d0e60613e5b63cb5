package main

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/batonwf/baton/job"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// kafkaCluster starts an in-process Kafka broker for one test, closed
// when it ends (kafkaBroker, for a test that injects faults).
func kafkaCluster(t *testing.T) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, c.ListenAddrs()[0]
}

// TestKafkaCancelWhileNoRestarter is issue 15's defect 4 from the command
// line: a worker stopped in the middle of seq(log, sleep, log), a cancel
// sent while no restarter runs, a worker started again. The cancel waited
// in the restarter topic; the restarter that starts applies it before the
// result of the last action, which its own worker runs at once (the broker
// holds the restarter's reads of its backlog until it has run it, the
// race the issue lost seven times in eight). The job ends cancelled and
// cancel says so.
func TestKafkaCancelWhileNoRestarter(t *testing.T) {
	c, addr := kafkaCluster(t)
	args := func(a ...string) []string { return append(a, "--kafka", addr, "--prefix", "nc") }
	w1 := startInProcess(t, "baton worker w1: serving ", args("worker", "--name", "w1")...)
	wf := writeWorkflow(t, "three.json", `{"version":1,"root":{"seq":[{"act":"log","payload":"one"},{"act":"sleep","payload":"1s"},{"act":"log","payload":"three"}]}}`)
	baton(t, args("submit", wf, "--id", "j1")...).want(t, exitOK)
	eventually(t, 20*time.Second, "the first action run", func() (bool, string) {
		return strings.Contains(w1.out.String(), "seq[0]#1: one\n"), w1.out.String()
	})
	if code := w1.stop(t); code != exitOK {
		t.Fatalf("worker w1: exit status %d\n%s", code, w1.errOut.String())
	}

	cancel := startInProcess(t, "a cancel waits in topic nc.restarter until one starts", args("cancel", "--reason", "given up", "j1")...)
	eventually(t, 20*time.Second, "the cancel in nc.restarter", func() (bool, string) {
		n := messages(t, addr, "nc.restarter")
		return n >= 2, "" // the submit and the cancel
	})

	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	c.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, tp := range req.(*kmsg.FetchRequest).Topics {
			if tp.Topic == "nc.restarter" {
				c.SleepControl(func() { <-release })
				break
			}
		}
		return nil, nil, false
	})
	w2 := startInProcess(t, "baton worker w2: serving ", args("worker", "--name", "w2")...)
	// The fetches are held until w2's worker has run what waited (before
	// the fix, until the job had ended) or for 3s.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(w2.out.String(), "three") {
			time.Sleep(500 * time.Millisecond)
			break
		}
	}
	free()

	select {
	case code := <-cancel.done:
		cancel.done <- code
		if code != exitOK {
			t.Errorf("cancel: exit status %d, want %d\n%s%s", code, exitOK, cancel.out.String(), cancel.errOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("cancel did not return:\n%s", cancel.errOut.String())
	}
	if !regexp.MustCompile(`^job j1 cancelled: cancelled at v\d+\n$`).MatchString(cancel.out.String()) {
		t.Errorf("cancel's stdout:\n%s", cancel.out.String())
	}
	r := baton(t, args("status", "j1")...).want(t, exitOK)
	contains(t, "status", r.stdout, "cancelled (cancel: given up)")
}

// TestKafkaCancelOfJobThatEndsFirst: a cancel that waits in the restarter
// topic behind the job's last result is applied after the job ended:
// cancel says the job finished and exits 2, as on ZooKeeper, instead of
// "job j2 cancelled: succeeded" and 0.
func TestKafkaCancelOfJobThatEndsFirst(t *testing.T) {
	_, addr := kafkaCluster(t)
	args := func(a ...string) []string { return append(a, "--kafka", addr, "--prefix", "ef") }
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	// A restarter of the test's own, with no worker: the job's action
	// waits in its topic, and the restarter stops.
	st, err := kafkarunner.Open(ctx, kafkarunner.Config{Brokers: []string{addr}, Prefix: "ef", Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, err := kafkarunner.New(kafkarunner.Options{Store: st, Role: kafkarunner.RoleRestarter})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- rs.Run(ctx) }()
	wf := writeWorkflow(t, "one.json", `{"version":1,"root":{"act":"sleep","payload":"1s"}}`)
	baton(t, args("submit", wf, "--id", "j2")...).want(t, exitOK)
	rs.Close()
	<-ran

	// The action's result reaches the restarter topic (a worker of
	// another process delivered it), then the cancel.
	client, err := kafkarunner.New(kafkarunner.Options{Store: st, Role: kafkarunner.RoleClient})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	j, err := client.Status(ctx, "j2")
	if err != nil {
		t.Fatal(err)
	}
	acts := j.Outstanding()
	if len(acts) != 1 {
		t.Fatalf("job j2: %d outstanding actions, want 1\n%s", len(acts), job.Describe(j))
	}
	res := acts[0].Succeed(nil)
	res.At = time.Now()
	if err := client.Deliver(ctx, res); err != nil {
		t.Fatal(err)
	}
	cancel := startInProcess(t, "a cancel waits in topic ef.restarter until one starts", args("cancel", "j2")...)
	startInProcess(t, "baton worker w3: serving ", args("worker", "--name", "w3")...)
	select {
	case code := <-cancel.done:
		cancel.done <- code
		if code != exitError {
			t.Errorf("cancel: exit status %d, want %d\n%s%s", code, exitError, cancel.out.String(), cancel.errOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("cancel did not return:\n%s", cancel.errOut.String())
	}
	if cancel.out.String() != "" {
		t.Errorf("cancel's stdout:\n%s", cancel.out.String())
	}
	contains(t, "cancel's stderr", cancel.errOut.String(), "baton: cancel job j2 in Kafka "+addr+" under prefix ef: job j2: cancel: runner: the job has finished (succeeded before the cancel was applied)\n")
}
