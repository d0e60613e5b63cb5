package zk_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/internal/zktest"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// TestOpenMustExist: an Open that must not write (Config.MustExist, what
// the read-only commands use) creates nothing: a missing root is an error
// naming it, and so is a node that is not a baton root. A root whose
// parent is missing says so, whether Open may create or not.
func TestOpenMustExist(t *testing.T) {
	srv := zktest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	open := func(cfg zkrunner.Config) error {
		cfg.Servers = srv.Addrs()
		s, err := zkrunner.Open(ctx, cfg)
		if err == nil {
			s.Close()
		}
		return err
	}

	typo := srv.Path("typo")
	err := open(zkrunner.Config{Root: typo, MustExist: true})
	if !errors.Is(err, zkrunner.ErrNoRoot) || !strings.Contains(err.Error(), "root "+typo+" does not exist") {
		t.Errorf("MustExist on a missing root: %v; want ErrNoRoot naming %s", err, typo)
	}
	if ok, _, err := c.Exists(typo); err != nil || ok {
		t.Errorf("MustExist created %s (%v)", typo, err)
	}

	for _, mustExist := range []bool{true, false} {
		nested := srv.Path("nope", "nested")
		err := open(zkrunner.Config{Root: nested, MustExist: mustExist})
		if !errors.Is(err, zkrunner.ErrNoRoot) || !strings.Contains(err.Error(), "its parent "+srv.Path("nope")+" does not exist") {
			t.Errorf("MustExist=%v, a root whose parent is missing: %v; want ErrNoRoot naming the parent", mustExist, err)
		}
	}

	// A node that exists but is no baton root: nothing is made under it.
	plain := srv.Path("plain")
	if _, err := c.Create(plain, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	err = open(zkrunner.Config{Root: plain, MustExist: true})
	if !errors.Is(err, zkrunner.ErrNoRoot) || !strings.Contains(err.Error(), "not a baton root") {
		t.Errorf("MustExist on a node that is no baton root: %v", err)
	}
	if kids, _, err := c.Children(plain); err != nil || len(kids) != 0 {
		t.Errorf("MustExist made %v under %s (%v)", kids, plain, err)
	}

	// A root that a writer made opens for readers.
	made := srv.Path("made")
	if err := open(zkrunner.Config{Root: made}); err != nil {
		t.Fatal(err)
	}
	if err := open(zkrunner.Config{Root: made, MustExist: true}); err != nil {
		t.Errorf("MustExist on a root a writer made: %v", err)
	}
}

// TestOpenChecksCredentials: every node baton makes carries its maker's
// ACL, so the clients of a root must share credentials. Open refuses at
// once, with an error naming the root and what is wrong: credentials on
// a root made without any (their nodes would be closed to the others),
// none on a root made with some, another user, a wrong password, an
// empty one. It writes nothing when it refuses.
func TestOpenChecksCredentials(t *testing.T) {
	srv := zktest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	open := func(root, auth string) error {
		s, err := zkrunner.Open(ctx, zkrunner.Config{Servers: srv.Addrs(), Root: root, Auth: auth})
		if err == nil {
			s.Close()
		}
		return err
	}
	openRoot := srv.Path("open")
	if err := open(openRoot, ""); err != nil {
		t.Fatal(err)
	}
	err := open(openRoot, "alice:pw")
	var ae *zkrunner.AccessError
	if !errors.As(err, &ae) || !errors.Is(err, zkrunner.ErrAccess) || !ae.Open || ae.User != "alice" ||
		!strings.Contains(err.Error(), "root "+openRoot+" was made without credentials") {
		t.Errorf("credentials on a root made without: %v; want an AccessError saying the root is open", err)
	}
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	for _, d := range []string{"jobs", "queue", "claims", "timers", "workers", "dispatching"} {
		acl, _, err := c.GetACL(openRoot + "/" + d)
		if err != nil || len(acl) != 1 || acl[0].Scheme != "world" {
			t.Errorf("%s/%s: ACL %v (%v) after the refused Open; want the world's", openRoot, d, acl, err)
		}
	}

	closed := srv.Path("closed")
	if err := open(closed, "alice:pw"); err != nil {
		t.Fatal(err)
	}
	for auth, want := range map[string]string{
		"":          "root " + closed + " is protected by credentials",
		"bob:pw":    "root " + closed + " does not admit user bob",
		"alice:bad": "root " + closed + " does not admit user alice with this password",
	} {
		err := open(closed, auth)
		if !errors.Is(err, zkrunner.ErrAccess) || !strings.Contains(err.Error(), want) {
			t.Errorf("Auth %q on a root made by alice: %v; want ErrAccess, %q", auth, err, want)
		}
	}
	if err := open(closed, "alice:pw"); err != nil {
		t.Errorf("the credentials the root was made with: %v", err)
	}
	if err := open(srv.Path("x"), "alice:"); err == nil || !strings.Contains(err.Error(), "neither empty") {
		t.Errorf("an empty password: %v", err)
	}
}
