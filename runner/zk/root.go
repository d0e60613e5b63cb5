package zk

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"
)

// Errors of Open about the root.
var (
	// ErrNoRoot is wrapped by Open's error (a RootError) when the root,
	// or a node of baton's under it, does not exist and Config.MustExist
	// forbids making it, or when the root's parent does not exist
	// (ZooKeeper makes no parents).
	ErrNoRoot = errors.New("zk: no such root")
	// ErrAccess is wrapped by Open's error when the root's ACL does not
	// admit the connection's credentials (Config.Auth), or their absence:
	// see AccessError.
	ErrAccess = errors.New("zk: the root's ACL does not admit these credentials")
)

// AccessError is Open's error when the root's nodes were made for other
// credentials than Config.Auth's. Every node baton creates carries the
// ACL of its creator's credentials, so clients of one root must all use
// the same ones: a client without credentials cannot read the nodes that
// a client with them made, and the reverse. Open therefore refuses, at
// once, a root made with credentials when it has none, with other ones,
// or a root made without credentials when it has some.
type AccessError struct {
	Root string
	// User is Config.Auth's user; empty without credentials.
	User string
	// Owners are the digest users the root's ACL grants access to, when
	// it could be read (a client without the right password cannot read
	// it).
	Owners []string
	// Open says the root is open to every client: it was made without
	// credentials.
	Open bool
}

func (e *AccessError) Error() string {
	switch {
	case e.User == "" && len(e.Owners) > 0:
		return fmt.Sprintf("zk: root %s is protected by the credentials of user %s: set Config.Auth", e.Root, strings.Join(e.Owners, ", "))
	case e.User == "":
		return fmt.Sprintf("zk: root %s is protected by credentials: set Config.Auth", e.Root)
	case e.Open:
		return fmt.Sprintf("zk: root %s was made without credentials: its nodes are open to every client, and those made with user %s's would be closed to the clients without them: use it without Config.Auth, or use a root made with it", e.Root, e.User)
	case len(e.Owners) > 0:
		return fmt.Sprintf("zk: root %s belongs to user %s, not %s", e.Root, strings.Join(e.Owners, ", "), e.User)
	}
	return fmt.Sprintf("zk: root %s does not admit user %s with this password (a wrong password, or the root belongs to another user)", e.Root, e.User)
}

func (e *AccessError) Unwrap() error { return ErrAccess }

// RootError is Open's error when a node the root needs is missing: the
// root itself (Config.MustExist), one of its ancestors (ZooKeeper makes
// no parents), or one of baton's nodes under it (Config.MustExist on a
// node that is not a whole baton root). It wraps ErrNoRoot.
type RootError struct {
	Root    string
	Missing string // the node missing: Root, an ancestor, or a node under Root
}

func (e *RootError) Error() string {
	switch {
	case e.Missing == e.Root:
		return fmt.Sprintf("zk: root %s does not exist", e.Root)
	case strings.HasPrefix(e.Missing, e.Root+"/"):
		return fmt.Sprintf("zk: root %s is not a baton root, or not a whole one: it has no node %s (a worker or a submit on it makes its nodes)", e.Root, e.Missing)
	}
	return fmt.Sprintf("zk: root %s: its parent %s does not exist (ZooKeeper makes no parents: create it first, or choose another root)", e.Root, e.Missing)
}

func (e *RootError) Unwrap() error { return ErrNoRoot }

// checkRootPath checks Config.Root's form.
func checkRootPath(root string) error {
	if !strings.HasPrefix(root, "/") || strings.HasSuffix(root, "/") || root == "/" {
		return fmt.Errorf("zk: root %q: want an absolute node path such as /baton (not / itself, no trailing slash)", root)
	}
	if err := zkPathOK(root); err != nil {
		return fmt.Errorf("zk: root %q: %w", root, err)
	}
	return nil
}

// openRoot makes sure the root is there and admits the connection's
// credentials. With mustExist it writes nothing: a missing root, or a
// root missing one of baton's nodes, is an error wrapping ErrNoRoot.
// Otherwise it creates the missing nodes (never the root's parents).
// Either way it then checks the ACL of baton's nodes (checkACL), so that a
// client never starts writing nodes the root's other clients cannot read.
func (c *conn) openRoot(ctx context.Context, mustExist bool, user string) error {
	root := c.l.root
	for i, p := range c.l.dirs() {
		var err error
		if mustExist {
			var ok bool
			ok, err = c.exists(ctx, p)
			if err == nil && !ok {
				if i == 0 {
					return c.missingRoot(ctx)
				}
				return &RootError{Root: root, Missing: p}
			}
		} else {
			err = c.ensure(ctx, p)
			if i == 0 && errors.Is(err, zk.ErrNoNode) {
				return c.missingRoot(ctx)
			}
		}
		if errors.Is(err, zk.ErrNoAuth) {
			return c.accessError(ctx, user)
		}
		if err != nil {
			return fmt.Errorf("zk: root %s: %s: %w", root, p, err)
		}
	}
	return c.checkACL(ctx, user)
}

// missingRoot is the error for a root that does not exist: it names the
// root, or its nearest ancestor that is missing too.
func (c *conn) missingRoot(ctx context.Context) error {
	root := c.l.root
	missing := root
	for p := path.Dir(root); p != "/"; p = path.Dir(p) {
		ok, err := c.exists(ctx, p)
		if err != nil || ok {
			break
		}
		missing = p
	}
	return &RootError{Root: root, Missing: missing}
}

// checkACL checks that the ACL of each of baton's nodes under the root
// admits the connection's credentials and only what they imply: with a
// user (Config.Auth), a digest entry of that user and password, and no
// entry open to every client; without one, an entry granting every
// client everything. (The root node itself is not checked: an operator
// may have made it with an ACL of their own.)
func (c *conn) checkACL(ctx context.Context, user string) error {
	for _, p := range c.l.dirs()[1:] {
		var acl []zk.ACL
		err := c.do(ctx, "get the ACL of "+p, func() (err error) {
			acl, _, err = c.c.GetACL(p)
			return err
		})
		if errors.Is(err, zk.ErrNoAuth) {
			return c.accessError(ctx, user)
		}
		if err != nil {
			return fmt.Errorf("zk: root %s: get the ACL of %s: %w", c.l.root, p, err)
		}
		open, mine := false, false
		var owners []string
		for _, a := range acl {
			switch {
			case a.Scheme == "world" && a.ID == "anyone":
				open = open || a.Perms&zk.PermAll == zk.PermAll
			case a.Scheme == "digest":
				owner, _, _ := strings.Cut(a.ID, ":")
				if !slices.Contains(owners, owner) {
					owners = append(owners, owner)
				}
				if user != "" && a.ID == c.acl[0].ID && a.Perms&zk.PermAll == zk.PermAll {
					mine = true
				}
			}
		}
		switch {
		case user == "" && !open, user != "" && open, user != "" && !mine:
			return &AccessError{Root: c.l.root, User: user, Owners: owners, Open: open}
		}
	}
	return nil
}

// accessError is the error for a root whose nodes refused this client:
// it names the users their ACL admits when it can read it.
func (c *conn) accessError(ctx context.Context, user string) error {
	e := &AccessError{Root: c.l.root, User: user}
	var acl []zk.ACL
	if err := c.do(ctx, "get the ACL of "+c.l.jobs(), func() (err error) {
		acl, _, err = c.c.GetACL(c.l.jobs())
		return err
	}); err == nil {
		for _, a := range acl {
			if owner, _, _ := strings.Cut(a.ID, ":"); a.Scheme == "digest" && !slices.Contains(e.Owners, owner) {
				e.Owners = append(e.Owners, owner)
			}
		}
	}
	return e
}
