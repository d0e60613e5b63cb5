package main

import (
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
	if _, err := cb.Cancel(ctx, "slow", "not needed"); err != nil {
		t.Fatal(err)
	}
	if sum, err = ca.Wait(ctx, "slow"); err != nil || sum.Status != "cancelled" || sum.Cancel == nil || sum.Cancel.Reason != "not needed" {
		t.Fatalf("slow after the cancel: %+v, %v", sum, err)
	}
	if code := b.stop(t); code != exitOK {
		t.Errorf("b exited %d:\n%s", code, b.errOut.String())
	}
	if code := a.stop(t); code != exitOK {
		t.Errorf("a exited %d:\n%s", code, a.errOut.String())
	}
}
