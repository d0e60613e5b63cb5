package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/client"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestServeKafka: 'baton serve --kafka' on the in-process broker, over
// TLS: the Kafka client's TLS flags are --kafka-tls-ca, --kafka-tls-cert
// and --kafka-tls-key under serve (its own listener's are --tls-cert,
// --tls-key and --tls-client-ca). A job submitted through it runs on its
// restarter and worker (--workers) and is read through it, by the Go
// client and by the CLI.
func TestServeKafka(t *testing.T) {
	brokerTLS, caPEM := selfSignedTLS(t)
	addr := kafkaBroker(t, kfake.TLS(brokerTLS))
	ca := writeWorkflow(t, "ca.pem", caPEM)
	kafkaArgs := []string{"--kafka", addr, "--prefix", "served", "--kafka-tls-ca", ca}
	p := startInProcess(t, "baton serve: http", append([]string{"serve", "--listen", "127.0.0.1:0", "--workers", "2"}, kafkaArgs...)...)
	url := serveURL(t, p)
	contains(t, "serve's stderr", p.errOut.String(), "on Kafka "+addr+" under prefix served")
	c := client.New(url, client.Options{})
	ctx := t.Context()
	if _, created, err := c.Submit(ctx, "hello", []byte(helloJSON)); err != nil || !created {
		t.Fatalf("submit: %v, %v", created, err)
	}
	if sum, err := c.Wait(ctx, "hello"); err != nil || sum.Status != "succeeded" {
		t.Fatalf("hello: %+v, %v", sum, err)
	}
	contains(t, "serve's stdout", p.out.String(), "hello par[0]#1: a\n")
	// Its worker is listed, as the workers' group tells it.
	for {
		ws, err := c.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ws.Known {
			t.Fatalf("serve --kafka does not know its workers: %+v", ws)
		}
		if len(ws.Workers) == 1 && len(ws.Workers[0].Actions) > 0 {
			w := ws.Workers[0]
			if w.Name != "serve" || w.Capacity != 2 || strings.Join(w.Actions, ",") != "fail,http.get,log,sleep,value" || w.Since == nil {
				t.Fatalf("the worker: %+v", w)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the worker was never listed: %+v", ws)
		case <-time.After(20 * time.Millisecond):
		}
	}
	r := baton(t, "submit", writeWorkflow(t, "fail.json", failJSON), "--server", url, "--id", "bad", "--wait", "--quiet").want(t, exitFailed)
	contains(t, "stdout", r.stdout, "bad\njob bad failed at seq[1].body (fail): boom: 3/4 actions settled")
	// The same text through the server as from the topics.
	for _, args := range [][]string{{"status", "hello"}, {"history", "bad"}, {"inspect", "--format", "dot", "bad"}, {"status", "--json", "bad"}} {
		served := baton(t, append(args, "--server", url)...).want(t, exitOK)
		direct := baton(t, append(args, "--kafka", addr, "--prefix", "served", "--tls-ca", ca)...).want(t, exitOK)
		if served.stdout != direct.stdout {
			t.Errorf("baton %q through the server:\n%s\nfrom the topics:\n%s", args, served.stdout, direct.stdout)
		}
	}
	if code := p.stop(t); code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, p.errOut.String())
	}
}

// TestServeKafkaFlags: under serve, --tls-cert and --tls-key are the
// listener's, and the Kafka client's TLS flags are named --kafka-tls-*.
func TestServeKafkaFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kafka", "127.0.0.1:1", "--tls-cert", missing}, "--tls-cert and --tls-key go together"},
		{[]string{"--kafka", "127.0.0.1:1", "--kafka-tls-ca", missing}, "--kafka-tls-ca " + missing},
		{[]string{"--kafka", "127.0.0.1:1", "--kafka-tls-key", missing}, "--kafka-tls-key needs --kafka-tls-cert"},
		{[]string{"--kafka-tls-ca", missing}, "--kafka-tls-ca needs --kafka"},
		{[]string{"--kafka", "127.0.0.1:1", "--tls-ca", missing}, "flag provided but not defined: -tls-ca"},
		{[]string{"--kafka", "127.0.0.1:1", "--zk", "127.0.0.1:2"}, "--kafka and --zk exclude each other"},
	} {
		r := baton(t, append([]string{"serve", "--listen", "127.0.0.1:0"}, c.args...)...).want(t, exitError)
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("serve %q: stderr %q, want %q", c.args, r.stderr, c.want)
		}
	}
}
