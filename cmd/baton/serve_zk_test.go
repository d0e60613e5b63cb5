package main

import (
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/internal/zktest"
)

// TestServeZK: two 'baton serve' on one ZooKeeper root, one of them also
// running actions: a job submitted through the first is run by the
// second's worker and followed through the second; a cancel through the
// second ends a job submitted through the first.
func TestServeZK(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path("serve")
	a := startInProcess(t, "baton serve: http", "serve", "--zk", srv.ConnString(), "--root", root, "--listen", "127.0.0.1:0")
	b := startInProcess(t, "baton serve: http", "serve", "--zk", srv.ConnString(), "--root", root, "--listen", "127.0.0.1:0", "--workers", "2")
	ca, cb := client.New(serveURL(t, a), client.Options{}), client.New(serveURL(t, b), client.Options{})
	ctx := t.Context()
	if _, created, err := ca.Submit(ctx, "hello", []byte(helloJSON)); err != nil || !created {
		t.Fatalf("submit through a: %v, %v", created, err)
	}
	sum, err := cb.Wait(ctx, "hello")
	if err != nil || sum.Status != "succeeded" {
		t.Fatalf("hello through b: %+v, %v", sum, err)
	}
	contains(t, "b's stdout", b.out.String(), "hello par[0]#1: a\n")
	if _, _, err := ca.Submit(ctx, "slow", []byte(`{"version":1,"root":{"try":{"act":"sleep","payload":"1h"},"finally":{"act":"log","payload":"cleanup"}}}`)); err != nil {
		t.Fatal(err)
	}
	for {
		j, err := cb.Job(ctx, "slow", client.JobQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(j.Nodes) > 1 && j.Nodes[1].Status == "running" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Followed through a's event stream (b submitted nothing, a runs
	// nothing: a learns of the steps from ZooKeeper alone), cancelled
	// through b: a snapshot, the steps, then the end, cancelled.
	type seen struct {
		types []string
		end   string
		err   error
	}
	followed := make(chan seen, 1)
	opened := make(chan struct{})
	go func() {
		var s seen
		for ev, err := range ca.Events(ctx, "slow", 0) {
			if err != nil {
				s.err = err
				break
			}
			s.types = append(s.types, ev.Type)
			if ev.Type == "snapshot" {
				close(opened)
			}
			if ev.End != nil {
				s.end = ev.End.Status
			}
		}
		followed <- s
	}()
	select {
	case <-opened:
	case s := <-followed:
		t.Fatalf("a's stream ended before its snapshot: %+v", s)
	}
	if _, err := cb.Cancel(ctx, "slow", "not needed"); err != nil {
		t.Fatal(err)
	}
	if sum, err = ca.Wait(ctx, "slow"); err != nil || sum.Status != "cancelled" || sum.Cancel == nil || sum.Cancel.Reason != "not needed" {
		t.Fatalf("slow after the cancel: %+v, %v", sum, err)
	}
	s := <-followed
	if s.err != nil || s.end != "cancelled" || len(s.types) < 3 || s.types[0] != "snapshot" || s.types[1] != "step" || s.types[len(s.types)-1] != "end" {
		t.Errorf("a's stream of slow: %q, end %q, err %v; want snapshot, step..., end cancelled", s.types, s.end, s.err)
	}
	if code := b.stop(t); code != exitOK {
		t.Errorf("b exited %d:\n%s", code, b.errOut.String())
	}
	if code := a.stop(t); code != exitOK {
		t.Errorf("a exited %d:\n%s", code, a.errOut.String())
	}
}

// TestServeZKWorkers: 'baton serve --zk' lists the workers announced on
// the root, its own (--workers) and a 'baton serve' without workers alike.
func TestServeZKWorkers(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path("workers")
	a := startInProcess(t, "baton serve: http", "serve", "--zk", srv.ConnString(), "--root", root, "--listen", "127.0.0.1:0")
	b := startInProcess(t, "baton serve: http", "serve", "--zk", srv.ConnString(), "--root", root, "--listen", "127.0.0.1:0", "--workers", "3")
	ca := client.New(serveURL(t, a), client.Options{})
	ctx := t.Context()
	for {
		ws, err := ca.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ws.Known {
			t.Fatalf("serve --zk does not know its workers: %+v", ws)
		}
		if len(ws.Workers) == 1 {
			w := ws.Workers[0]
			if w.Name != "serve" || w.Capacity != 3 || strings.Join(w.Actions, ",") != "fail,http.get,log,sleep,value" || w.Since == nil {
				t.Fatalf("the worker of b: %+v", w)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("b's worker was never listed")
		case <-time.After(10 * time.Millisecond):
		}
	}
	// submit --json on ZooKeeper prints the API's summary of the job;
	// the job reads the same from the root as through the server.
	zkArgs := []string{"--zk", srv.ConnString(), "--root", root}
	r := baton(t, append([]string{"submit", writeWorkflow(t, "nap.json", `{"version":1,"root":{"act":"sleep","payload":"1ms"}}`), "--id", "nap", "--json", "--wait"}, zkArgs...)...).want(t, exitOK)
	if first, last, _ := strings.Cut(r.stdout, "\n"); !strings.HasPrefix(first, `{"id":"nap","status":"running","version":1,`) || !strings.HasPrefix(last, `{"id":"nap","status":"succeeded",`) {
		t.Errorf("submit --json --wait printed:\n%s", r.stdout)
	}
	for _, args := range [][]string{{"status", "--json", "nap"}, {"history", "nap"}, {"status", "nap"}, {"inspect", "--json", "--version", "1", "nap"}} {
		direct := baton(t, append(args, zkArgs...)...).want(t, exitOK)
		served := baton(t, append(args, "--server", serveURL(t, a))...).want(t, exitOK)
		if direct.stdout != served.stdout {
			t.Errorf("baton %q from the root:\n%s\nthrough the server:\n%s", args, direct.stdout, served.stdout)
		}
	}
	for _, p := range []*inProcess{b, a} {
		if code := p.stop(t); code != exitOK {
			t.Errorf("exited %d:\n%s", code, p.errOut.String())
		}
	}
}
