package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kafkaBroker starts an in-process Kafka broker (kfake: the real protocol,
// on 127.0.0.1) for one test, closed when it ends, and returns its
// address.
func kafkaBroker(t *testing.T, opts ...kfake.Opt) string {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addrs := c.ListenAddrs()
	if len(addrs) != 1 || !strings.HasPrefix(addrs[0], "127.0.0.1:") {
		t.Fatalf("kfake listens on %q, want one loopback address", addrs)
	}
	return addrs[0]
}

// topics lists the topics on the broker at addr whose names start with
// prefix.
func topics(t *testing.T, addr, prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	md, err := (&kafka.Client{Addr: kafka.TCP(addr), Transport: tr}).Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tp := range md.Topics {
		if strings.HasPrefix(tp.Name, prefix) {
			out = append(out, tp.Name)
		}
	}
	return out
}

// messages counts the messages in topic on the broker at addr (its
// partitions' end offsets: nothing is deleted in a test).
func messages(t *testing.T, addr, topic string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	cl := &kafka.Client{Addr: kafka.TCP(addr), Transport: tr}
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
	for _, tp := range md.Topics {
		for _, p := range tp.Partitions {
			req.Topics[topic] = append(req.Topics[topic], kafka.LastOffsetOf(p.ID))
		}
	}
	res, err := cl.ListOffsets(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, po := range res.Topics[topic] {
		if po.Error != nil {
			t.Fatal(po.Error)
		}
		n += po.LastOffset
	}
	return n
}

// inProcess is a command run in-process until the test cancels it, as
// Ctrl-C would.
type inProcess struct {
	cancel      context.CancelFunc
	done        chan int
	out, errOut syncBuffer
}

// startInProcess runs baton ARGS... in-process and waits until its
// standard error contains ready.
func startInProcess(t *testing.T, ready string, args ...string) *inProcess {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &inProcess{cancel: cancel, done: make(chan int, 1)}
	c := &cli{stdin: strings.NewReader(""), stdout: &p.out, stderr: &p.errOut, getenv: os.Getenv, now: time.Now, noSignals: true}
	go func() { p.done <- c.main(ctx, args) }()
	t.Cleanup(func() { p.stop(t) })
	eventually(t, 20*time.Second, fmt.Sprintf("%q on stderr", ready), func() (bool, string) {
		select {
		case code := <-p.done:
			p.done <- code
			t.Fatalf("baton %s exited with %d at start:\n%s", strings.Join(args, " "), code, p.errOut.String())
		default:
		}
		return strings.Contains(p.errOut.String(), ready), p.errOut.String()
	})
	return p
}

// stop interrupts the command and returns its exit status (-1 if it did
// not stop within 20s). Calling it again returns the same.
func (p *inProcess) stop(t *testing.T) int {
	p.cancel()
	select {
	case code := <-p.done:
		p.done <- code
		return code
	case <-time.After(20 * time.Second):
		t.Errorf("did not stop within 20s of the interrupt:\n%s", p.errOut.String())
		return -1
	}
}

// TestKafka runs the commands against one in-process broker, each subtest
// under a prefix of its own, with baton worker processes (and an
// in-process one) running the actions.
func TestKafka(t *testing.T) {
	addr := kafkaBroker(t)
	kafkaArgs := func(prefix string, args ...string) []string {
		return append(args, "--kafka", addr, "--prefix", prefix)
	}
	where := func(prefix string) string { return "Kafka " + addr + " under prefix " + prefix }

	t.Run("SubmitWaitHistoryInspect", func(t *testing.T) {
		const p = "run"
		w := startWorkerProc(t, "w1", kafkaArgs(p, "worker", "--name", "w1"))
		contains(t, "worker stderr", w.stderr.String(), "baton worker w1: serving fail, http.get, log, sleep, value (4 at once) on "+where(p)+", as a restarter and a worker\n")
		// A message that is not baton's, on hello-1's partition of the
		// restarter topic: the restarter skips it (before the job, which
		// comes after it) and the worker counts it when it stops.
		junk := &kafka.Writer{Addr: kafka.TCP(addr), Topic: p + ".restarter", Balancer: &kafka.Murmur2Balancer{}, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
		if err := junk.WriteMessages(context.Background(), kafka.Message{Key: []byte("hello-1"), Value: []byte("not json")}); err != nil {
			t.Fatal(err)
		}
		junk.Close()
		hello := writeWorkflow(t, "hello.json", helloJSON)
		r := baton(t, kafkaArgs(p, "submit", hello, "--id", "hello-1", "--wait")...).want(t, exitOK)
		if !strings.HasPrefix(r.stdout, "hello-1\n") {
			t.Errorf("stdout does not start with the job ID:\n%s", r.stdout)
		}
		contains(t, "stdout", r.stdout, "par: succeeded\n", `act log "e" par[2].rescue: idle`, "job hello-1 succeeded: 5/6 actions settled, v")
		contains(t, "worker stdout", w.stdout.String(), "par[0]#1: a\n", "par[1].seq[0]#1: b\n", "par[2].finally#1: f\n")

		r = baton(t, kafkaArgs(p, "submit", writeWorkflow(t, "fail.json", failJSON), "--id", "fail-1", "--wait", "--quiet")...).want(t, exitFailed)
		contains(t, "stdout", r.stdout, "fail-1\njob fail-1 failed at seq[1].body (fail): boom: 3/4 actions settled")
		if strings.Contains(r.stdout, "seq: failed") {
			t.Errorf("--quiet printed the tree:\n%s", r.stdout)
		}
		contains(t, "worker stdout", w.stdout.String(), "seq[1].finally#1: cleanup\n")
		if strings.Contains(w.stdout.String(), "never") {
			t.Errorf("the action after the failure ran:\n%s", w.stdout.String())
		}

		r = baton(t, kafkaArgs(p, "submit", hello, "--id", "hello-1")...).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: job hello-1 already exists in "+where(p)+"; choose another --id")

		r = baton(t, kafkaArgs(p, "history", "fail-1")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "job fail-1: ", " now failed\n", "v1  created: running, 0/4 actions settled, 1 dispatched",
			"seq[0]#1 log on w1: ok", "seq[1].body#1 fail on w1: failed: boom", "seq[1].finally#1 log on w1: ok")
		r = baton(t, kafkaArgs(p, "inspect", "--format", "dot", "hello-1")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "digraph", "#b7e4a7")
		r = baton(t, kafkaArgs(p, "inspect", "--version", "1", "hello-1")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "job hello-1 v1: running")
		r = baton(t, kafkaArgs(p, "inspect", "--version", "99", "hello-1")...).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: job hello-1 in "+where(p)+" has versions 1 to ")
		r = baton(t, kafkaArgs(p, "status", "fail-1")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "job fail-1 v", "act fail \"boom\" seq[1].body: failed #1: boom")
		r = baton(t, kafkaArgs(p, "history", "nosuch")...).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: job nosuch not found in "+where(p)+" (run 'baton status --kafka "+addr+" --prefix "+p+"' for the list)")

		r = baton(t, kafkaArgs(p, "status")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "ID       STATUS     VERSION  SETTLED\nfail-1   failed     ", "hello-1  succeeded  ",
			"\nrestarters: 1 in group run.restarters\n", "ACTION    QUEUED  WORKERS  TOPIC\n", "log       0       1        run.action.log\n")
		if strings.Contains(r.stdout, "WARNING") {
			t.Errorf("status warns with a worker for every action:\n%s", r.stdout)
		}

		if code := w.stop(t); code != exitOK {
			t.Fatalf("worker exit status %d after SIGTERM", code)
		}
		contains(t, "worker stderr", w.stderr.String(), "malformed message on the restarter topic: skipped",
			"baton worker w1: stopping: finishing the actions in flight",
			"baton worker w1: skipped or failed on the way: malformed restarter messages: 1\n", "baton worker w1: stopped\n")
		r = baton(t, kafkaArgs(p, "status")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "WARNING: no restarter runs (group run.restarters has no member): new jobs, results and cancels wait in topic run.restarter")
	})

	t.Run("UnconsumedQueueAndCancel", func(t *testing.T) {
		const p = "mail"
		// A worker in-process, stopped by its context as Ctrl-C would.
		w := startInProcess(t, "baton worker w2: serving ", kafkaArgs(p, "worker", "--name", "w2")...)
		mail := writeWorkflow(t, "mail.json", `{"version":1,"root":{"try":{"seq":[{"act":"log","payload":"drafted"},{"act":"email.send","payload":"bob"}]},
			"finally":{"act":"log","payload":"cleanup"}}}`)
		r := baton(t, kafkaArgs(p, "submit", mail, "--id", "mail-1")...).want(t, exitOK)
		if r.stdout != "mail-1\n" {
			t.Errorf("stdout %q, want the job ID", r.stdout)
		}
		// (and of "log" too, should the worker not have joined its group yet)
		contains(t, "stderr", r.stderr, `baton: no worker in `+where(p)+` consumes the topic of "email.send"`, " yet: the job waits for one")
		eventually(t, 20*time.Second, "an email.send action queued with no consumer", func() (bool, string) {
			r := baton(t, kafkaArgs(p, "status")...)
			return r.code == exitOK && strings.Contains(r.stdout, "mail-1  running  2        1/3\n") &&
					strings.Contains(r.stdout, "email.send  1       0        mail.action.email.send\n") &&
					strings.Contains(r.stdout, `WARNING: email.send: 1 queued, no worker consumes this topic (mail.action.email.send): they wait until a worker with a handler for "email.send" starts`),
				r.stdout + r.stderr
		})

		r = baton(t, kafkaArgs(p, "cancel", "mail-1", "--reason", "not needed")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "job mail-1 cancelled")
		eventually(t, 20*time.Second, "job mail-1 cancelled after its finally block", func() (bool, string) {
			r := baton(t, kafkaArgs(p, "status", "mail-1")...)
			return regexp.MustCompile(`(?m)^job mail-1 v\d+: cancelled`).MatchString(r.stdout), r.stdout + r.stderr
		})
		contains(t, "worker stdout", w.out.String(), "body.seq[0]#1: drafted\n", "finally#1: cleanup\n")
		// The cancelled job's email.send is no longer waiting work
		// (issue 15, defect 7): status neither counts nor warns of it.
		r = baton(t, kafkaArgs(p, "status")...).want(t, exitOK)
		contains(t, "status", r.stdout, "email.send  0       0        mail.action.email.send\n")
		if strings.Contains(r.stdout, "WARNING: email.send") {
			t.Errorf("status warns of the cancelled job's action:\n%s", r.stdout)
		}
		r = baton(t, kafkaArgs(p, "cancel", "mail-1", "nosuch")...).want(t, exitError)
		contains(t, "stdout", r.stdout, "job mail-1 was cancelled already (not needed): cancelled\n")
		contains(t, "stderr", r.stderr, "baton: job nosuch not found in "+where(p))

		if code := w.stop(t); code != exitOK {
			t.Fatalf("in-process worker: exit status %d\n%s", code, w.errOut.String())
		}
		contains(t, "worker stderr", w.errOut.String(), "baton worker w2: stopped\n")
	})

	t.Run("SubmitBeforeAnyRestarter", func(t *testing.T) {
		const p = "early"
		// With no restarter, submit says so and waits; interrupted, it
		// leaves the job in the restarter topic, and the first worker to
		// start runs it.
		wf := writeWorkflow(t, "one.json", `{"version":1,"root":{"act":"log","payload":"early bird"}}`)
		s := startInProcess(t, "no restarter runs in "+where(p)+" (group early.restarters has no member): the job waits in topic early.restarter until one starts",
			kafkaArgs(p, "submit", wf, "--id", "early-1")...)
		// Interrupted once its message is in the topic (before, the job
		// may not have been submitted, as submit says).
		eventually(t, 20*time.Second, "the submit in early.restarter", func() (bool, string) {
			n := messages(t, addr, "early.restarter")
			return n == 1, fmt.Sprintf("%d messages", n)
		})
		if code := s.stop(t); code != exitInterrupted {
			t.Fatalf("interrupted submit: exit status %d, want %d\n%s", code, exitInterrupted, s.errOut.String())
		}
		contains(t, "submit stderr", s.errOut.String(), "interrupted: job early-1 may or may not have been submitted: see 'baton status --kafka "+addr+" --prefix early early-1'")
		w := startInProcess(t, "baton worker w4: serving ", kafkaArgs(p, "worker", "--name", "w4")...)
		eventually(t, 20*time.Second, "job early-1 run by the worker started after it", func() (bool, string) {
			r := baton(t, kafkaArgs(p, "status", "early-1")...)
			return strings.Contains(r.stdout, "job early-1 v2: succeeded"), r.stdout + r.stderr
		})
		contains(t, "worker stdout", w.out.String(), "root#1: early bird\n")
	})

	t.Run("PrefixWithoutTopics", func(t *testing.T) {
		const p = "typo"
		r := baton(t, kafkaArgs(p, "status")...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "no jobs in "+where(p)+"\n", "no topics in "+where(p)+": nothing was submitted there (is --prefix right?")
		for _, cmd := range [][]string{{"status", "j"}, {"history", "j"}, {"inspect", "j"}, {"cancel", "j"}} {
			r := baton(t, kafkaArgs(p, cmd...)...).want(t, exitError)
			contains(t, "stderr", r.stderr, "baton: job j not found in "+where(p))
		}
		if ts := topics(t, addr, p+"."); len(ts) != 0 {
			t.Errorf("reading made topics: %q", ts)
		}
	})
}

// TestKafkaErrors: the Kafka flags' usage errors, the commands that do
// not take --kafka, and an unreachable broker (a prompt exit 3 naming
// it).
func TestKafkaErrors(t *testing.T) {
	t.Setenv(kafkaPasswordEnv, "")
	for _, cmd := range []string{"status", "inspect", "history", "cancel", "worker", "submit"} {
		for _, tc := range []struct{ args, want string }{
			{"--kafka h:1 --store x.db", "--kafka and --store exclude each other: the jobs are either in Kafka or in a store file"},
			{"--kafka h:1 --zk h:2", "--kafka and --zk exclude each other: the jobs are either in Kafka or in ZooKeeper"},
			{"--kafka=", "--kafka is empty: give the Kafka brokers, HOST:PORT[,HOST:PORT...]"},
			{"--prefix p", "--prefix needs --kafka"},
		} {
			args := append([]string{cmd}, strings.Fields(tc.args)...)
			if cmd != "status" && cmd != "worker" {
				args = append(args, "j")
			}
			if (cmd == "worker" || cmd == "submit") && strings.Contains(tc.args, "--store") {
				continue // they have no --store
			}
			r := baton(t, args...).want(t, exitError)
			contains(t, "stderr", r.stderr, "baton: "+cmd+": "+tc.want, "usage: baton "+cmd)
		}
	}
	caFile := writeWorkflow(t, "notpem.txt", "hello")
	for args, want := range map[string]string{
		"status --kafka h:port":                                            `status: --kafka: bad port in "h:port": want a number from 1 to 65535`,
		"status --kafka a,,b":                                              `status: --kafka "a,,b" has an empty broker address`,
		"status --kafka :9092":                                             `status: --kafka: no host in ":9092"`,
		"status --kafka h:1:2":                                             `status: --kafka: bad broker address "h:1:2": want HOST:PORT`,
		"status --kafka h:1 --prefix a/b":                                  `status: --prefix "a/b" has '/' at byte 1: a topic name allows letters, digits, '.', '_' and '-'`,
		"status --kafka h:1 --prefix=":                                     `status: --prefix "": want 1 to `,
		"status --kafka h:1 --root /x":                                     "status: --root needs --zk; it does not go with --kafka",
		"status --kafka h:1 --connect-timeout 0s":                          "status: --connect-timeout must be positive",
		"status --connect-timeout 1s":                                      "status: --connect-timeout needs --zk or --kafka",
		"status --tls":                                                     "status: --tls needs --kafka",
		"status --sasl-user u":                                             "status: --sasl-user needs --kafka",
		"status --kafka h:1 --tls-cert c.pem":                              "status: --tls-cert needs --tls-key",
		"status --kafka h:1 --tls-key k.pem":                               "status: --tls-key needs --tls-cert",
		"status --kafka h:1 --tls-ca /nonexistent.pem":                     "status: --tls-ca /nonexistent.pem: no such file or directory",
		"status --kafka h:1 --tls-ca " + caFile:                            "status: --tls-ca " + caFile + ": no PEM certificate in it",
		"status --kafka h:1 --sasl plain":                                  "status: --sasl plain needs --sasl-user",
		"status --kafka h:1 --sasl plain --sasl-user u":                    "status: --sasl plain: the password is not set: put it in $BATON_KAFKA_PASSWORD",
		"status --kafka h:1 --sasl-user u":                                 "status: --sasl-user needs --sasl",
		"worker --kafka h:1 --workers 0":                                   "worker: --workers must be at least 1",
		"worker --kafka h:1 x":                                             "worker: takes no arguments",
		"worker --kafka h:1 --retain -1s":                                  "worker: --retain must not be negative",
		"resume --kafka h:1":                                               "resume: not with --kafka: there the restarters resume by themselves",
		"worker --prefix p":                                                "worker: --prefix needs --kafka",
		"worker":                                                           "worker: --zk or --kafka is required",
		"status --kafka h:1 --tls-cert c.pem --tls-key k":                  "status: --tls-cert c.pem: no such file or directory",
		"status --kafka h:1 --tls-cert " + caFile + " --tls-key " + caFile: "status: --tls-cert " + caFile + ", --tls-key " + caFile + ": failed to find any PEM data in certificate input",
	} {
		r := baton(t, strings.Fields(args)...).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: "+want)
	}
	t.Setenv(kafkaPasswordEnv, "pw")
	r := baton(t, "status", "--kafka", "h:1", "--sasl", "md5", "--sasl-user", "u").want(t, exitError)
	contains(t, "stderr", r.stderr, `baton: status: --sasl "md5": unknown mechanism (want plain, scram-sha-256 or scram-sha-512)`)

	// The help of every command that takes --kafka shows its flags.
	for _, cmd := range []string{"worker", "submit", "status", "history", "inspect", "cancel", "delete"} {
		r := baton(t, cmd, "--help").want(t, exitOK)
		contains(t, cmd+" --help", r.stdout, "--kafka HOST:PORT", "-kafka HOST:PORT[,HOST:PORT...]", "-prefix NAME", "-tls-ca FILE", "-sasl MECHANISM")
	}
	r = baton(t, "resume", "--help").want(t, exitOK)
	contains(t, "resume --help", r.stdout, "Not with --kafka")
	r = baton(t, "help").want(t, exitOK)
	contains(t, "help", r.stdout, "With --kafka HOST:PORT[,...], jobs are kept in Kafka topics")

	// A port nothing listens on: a prompt error naming the broker.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ok := writeWorkflow(t, "ok.json", helloJSON)
	for _, args := range [][]string{{"status"}, {"history", "j"}, {"submit", ok}, {"cancel", "j"}, {"delete", "j"}, {"worker"}} {
		start := time.Now()
		r := baton(t, append(args, "--kafka", addr)...).want(t, exitStore)
		contains(t, "stderr", r.stderr, "baton: cannot reach Kafka at "+addr+": connect: connection refused (is it running?)")
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: gave up after %v", args[0], d)
		}
	}
	// The file is read before Kafka is reached (there is none at addr).
	bad := writeWorkflow(t, "bad.json", "{\"version\":1,\n \"root\": {\"seq\": [\n   {\"act\": \"log\" \"payload\": 1}]}}")
	r = baton(t, "submit", "--kafka", addr, bad).want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: "+bad+": ", "line 3, column 18")
	r = baton(t, "submit", "--kafka", addr, "--id", "a/b", ok).want(t, exitError)
	contains(t, "stderr", r.stderr, `baton: job ID "a/b" has '/' at byte 1`)
}

// TestKafkaTLSAndSASL runs a worker and a submit on a broker that takes
// TLS connections only and authenticates them with SASL SCRAM-SHA-256,
// through the flags; a wrong password and a missing --tls are refused
// with an error naming the brokers.
func TestKafkaTLSAndSASL(t *testing.T) {
	serverTLS, caPEM := selfSignedTLS(t)
	addr := kafkaBroker(t, kfake.TLS(serverTLS), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "baton", "s3cret"))
	ca := writeWorkflow(t, "ca.pem", caPEM)
	secure := []string{"--kafka", addr, "--prefix", "secure", "--tls-ca", ca, "--sasl", "scram-sha-256", "--sasl-user", "baton"}
	t.Setenv(kafkaPasswordEnv, "s3cret")

	w := startInProcess(t, "baton worker w3: serving ", append([]string{"worker", "--name", "w3"}, secure...)...)
	r := baton(t, append([]string{"submit", writeWorkflow(t, "hello.json", helloJSON), "--id", "tls-1", "--wait", "--quiet"}, secure...)...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "tls-1\njob tls-1 succeeded: 5/6 actions settled")
	contains(t, "worker stdout", w.out.String(), "par[0]#1: a\n")
	r = baton(t, append([]string{"status"}, secure...)...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "tls-1  succeeded", "restarters: 1 in group secure.restarters")

	t.Setenv(kafkaPasswordEnv, "wrong")
	r = baton(t, append([]string{"status", "--connect-timeout", "3s"}, secure...)...).want(t, exitStore)
	contains(t, "stderr", r.stderr, "baton: Kafka "+addr+" under prefix secure: the broker closed the connection during a metadata request (does it take TLS? are --sasl, --sasl-user and $BATON_KAFKA_PASSWORD right?)")
	t.Setenv(kafkaPasswordEnv, "s3cret")
	r = baton(t, "status", "--kafka", addr, "--prefix", "secure", "--sasl", "scram-sha-256", "--sasl-user", "baton", "--connect-timeout", "2s").want(t, exitStore)
	contains(t, "stderr", r.stderr, "baton: Kafka "+addr+" under prefix secure: ", "does it want --tls?")

	if code := w.stop(t); code != exitOK {
		t.Fatalf("worker: exit status %d\n%s", code, w.errOut.String())
	}
}

// TestKafkaSlowBroker: a broker slow to answer metadata requests (as on a
// loaded machine) at first: kafka-go's first metadata fetch then times
// out and it would say the broker is "not available"; the store waits for
// a later fetch within --connect-timeout, and the command starts.
func TestKafkaSlowBroker(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	start := time.Now()
	var slowed atomic.Int32
	c.ControlKey(int16(kmsg.Metadata), func(kmsg.Request) (kmsg.Response, error, bool) {
		if time.Since(start) < 2*time.Second {
			slowed.Add(1)
			c.SleepControl(func() { time.Sleep(700 * time.Millisecond) })
		}
		return nil, nil, false // then answered as usual
	})
	w := startInProcess(t, "baton worker w5: serving ", "worker", "--kafka", c.ListenAddrs()[0], "--name", "w5", "--connect-timeout", "20s")
	if code := w.stop(t); code != exitOK {
		t.Fatalf("worker: exit status %d\n%s", code, w.errOut.String())
	}
	if slowed.Load() < 3 {
		t.Errorf("%d metadata requests were slowed; the test meant to slow the store's first", slowed.Load())
	}
}

// TestKafkaReadWithoutCreatePermission: a broker that refuses to create
// topics (a user without the permission) still serves the read commands
// on a prefix whose topics exist; none of them asks to create a topic.
func TestKafkaReadWithoutCreatePermission(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	const p = "ro"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	res, err := (&kafka.Client{Addr: kafka.TCP(addr), Transport: tr}).CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: p + ".restarter", NumPartitions: 2, ReplicationFactor: -1, ConfigEntries: []kafka.ConfigEntry{{ConfigName: "cleanup.policy", ConfigValue: "delete"}}},
		{Topic: p + ".state", NumPartitions: 2, ReplicationFactor: -1, ConfigEntries: []kafka.ConfigEntry{{ConfigName: "cleanup.policy", ConfigValue: "compact"}}},
		{Topic: p + ".stops", NumPartitions: 1, ReplicationFactor: -1, ConfigEntries: []kafka.ConfigEntry{{ConfigName: "cleanup.policy", ConfigValue: "delete"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for topic, err := range res.Errors {
		if err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
	var creates atomic.Int32
	c.ControlKey(int16(kmsg.CreateTopics), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		creates.Add(1)
		res := req.ResponseKind().(*kmsg.CreateTopicsResponse)
		res.SetVersion(req.GetVersion())
		for _, rt := range req.(*kmsg.CreateTopicsRequest).Topics {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic, st.ErrorCode = rt.Topic, kerr.TopicAuthorizationFailed.Code
			res.Topics = append(res.Topics, st)
		}
		return res, nil, true
	})
	where := "Kafka " + addr + " under prefix " + p
	r := baton(t, "status", "--kafka", addr, "--prefix", p).want(t, exitOK)
	contains(t, "stdout", r.stdout, "no jobs in "+where+"\n", "no action topics yet")
	for _, cmd := range [][]string{{"status", "j"}, {"history", "j"}, {"inspect", "j"}, {"cancel", "j"}} {
		r := baton(t, append(cmd, "--kafka", addr, "--prefix", p)...).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: job j not found in "+where)
	}
	if n := creates.Load(); n != 0 {
		t.Errorf("the read commands asked to create topics %d times", n)
	}
}

// TestKafkaStatusWorkersUnknown: when the workers group cannot be
// described, status shows the queues with WORKERS "?" and says it could
// not tell, instead of warning that no worker consumes a topic a worker
// does consume.
func TestKafkaStatusWorkersUnknown(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	args := func(a ...string) []string { return append(a, "--kafka", addr, "--prefix", "unk") }
	w := startInProcess(t, "baton worker w6: serving ", args("worker", "--name", "w6")...)
	nap := writeWorkflow(t, "nap.json", `{"version":1,"root":{"act":"sleep","payload":"60s"}}`)
	baton(t, args("submit", nap, "--id", "nap-1")...).want(t, exitOK)
	eventually(t, 20*time.Second, "the sleep action taken by the worker", func() (bool, string) {
		r := baton(t, args("status")...)
		return regexp.MustCompile(`(?m)^sleep +1 +1 +unk\.action\.sleep$`).MatchString(r.stdout), r.stdout + r.stderr
	})
	var failed atomic.Int32
	c.ControlKey(int16(kmsg.DescribeGroups), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		dreq := req.(*kmsg.DescribeGroupsRequest)
		if !slices.Contains(dreq.Groups, "unk.workers") {
			return nil, nil, false
		}
		failed.Add(1)
		res := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
		res.SetVersion(req.GetVersion())
		for _, g := range dreq.Groups {
			rg := kmsg.NewDescribeGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, kerr.CoordinatorNotAvailable.Code
			res.Groups = append(res.Groups, rg)
		}
		return res, nil, true
	})
	r := baton(t, args("status")...).want(t, exitOK)
	if !regexp.MustCompile(`(?m)^sleep +1 +\? +unk\.action\.sleep$`).MatchString(r.stdout) {
		t.Errorf("status does not show the sleep queue with workers \"?\":\n%s", r.stdout)
	}
	contains(t, "stdout", r.stdout, "restarters: 1 in group unk.restarters\n",
		"could not tell how many workers consume these topics, so whether actions wait for want of a worker is unknown: queues: describe group unk.workers: [15] Group Coordinator Not Available")
	if strings.Contains(r.stdout, "WARNING") {
		t.Errorf("status warns though it could not tell:\n%s", r.stdout)
	}
	if failed.Load() == 0 {
		t.Error("no request to describe the workers group was refused: the test checks nothing")
	}
	baton(t, args("cancel", "nap-1")...).want(t, exitOK)
	if code := w.stop(t); code != exitOK {
		t.Fatalf("worker: exit status %d\n%s", code, w.errOut.String())
	}
}

// selfSignedTLS returns a server configuration for 127.0.0.1 with a
// self-signed certificate, and the certificate as PEM (the CA a client
// trusts).
func selfSignedTLS(t *testing.T) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test broker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	server := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
	return server, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
