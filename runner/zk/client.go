package zk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// backoff returns b with ZooKeeper's defaults in its zero fields: the
// first wait at most 100 ms, doubling up to 10 s (Config.Backoff).
func backoff(b runner.Backoff) runner.Backoff {
	if b.Base <= 0 {
		b.Base = 100 * time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = 10 * time.Second
	}
	return b
}

// client is a ZooKeeper connection with the runner's ACL and retries.
// go-zookeeper takes no context and retries nothing: a request in flight
// when the connection drops fails. client retries such requests with
// back-off until the context ends; every write it retries is idempotent
// or guarded by a version, so a retry of a write that had in fact been
// applied fails visibly (ErrNodeExists, ErrBadVersion, ErrNoNode) and
// the caller treats that as "already done" or as a conflict.
type client struct {
	c       *zk.Conn
	acl     []zk.ACL
	backoff runner.Backoff // with ZooKeeper's defaults (backoff)
	log     *slog.Logger
	// faults, set only by the package's tests (export_test.go) before
	// the connection is used, injects faults (see fault).
	faults func(faultPoint, *job.Transition) error
	// multis and multiOps count the multi-ops the server applied and the
	// operations inside them (Stats.Multis, Stats.MultiOps).
	multis, multiOps atomic.Int64
}

// retryable reports whether err is the connection's, not the request's.
func retryable(err error) bool {
	var ne *net.OpError
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) || errors.Is(err, zk.ErrClosing) ||
		errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// do runs f until it succeeds, fails for a reason of its own, or ctx
// ends, waiting c.backoff's n-th wait after the n-th failure.
func (c *client) do(ctx context.Context, what string, f func() error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	for attempt := 1; ; attempt++ {
		if err := c.fault(faultRequest, nil); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		err := f()
		if err == nil || !retryable(err) {
			return err
		}
		lvl := slog.LevelDebug
		if attempt > 3 {
			lvl = slog.LevelWarn
		}
		c.log.Log(ctx, lvl, "zookeeper unreachable; retrying", "op", what, "attempt", attempt, "err", err)
		if serr := c.backoff.Sleep(ctx, attempt); serr != nil {
			return fmt.Errorf("%s: %w (last error: %w)", what, serr, err)
		}
	}
}

func (c *client) get(ctx context.Context, path string) (data []byte, st *zk.Stat, err error) {
	err = c.do(ctx, "get "+path, func() error {
		data, st, err = c.c.Get(path)
		return err
	})
	return data, st, err
}

func (c *client) children(ctx context.Context, path string) (names []string, err error) {
	err = c.do(ctx, "list "+path, func() error {
		names, _, err = c.c.Children(path)
		return err
	})
	return names, err
}

func (c *client) exists(ctx context.Context, path string) (ok bool, err error) {
	err = c.do(ctx, "stat "+path, func() error {
		ok, _, err = c.c.Exists(path)
		return err
	})
	return ok, err
}

// create creates a node with the runner's ACL. A retry after a lost
// connection may find the node it created itself: ErrNodeExists.
func (c *client) create(ctx context.Context, path string, data []byte, flags int32) (name string, err error) {
	err = c.do(ctx, "create "+path, func() error {
		name, err = c.c.Create(path, data, flags, c.acl)
		return err
	})
	return name, err
}

// ensure creates the persistent node path if it does not exist.
func (c *client) ensure(ctx context.Context, path string) error {
	_, err := c.create(ctx, path, nil, 0)
	if errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return err
}

func (c *client) delete(ctx context.Context, path string, version int32) error {
	return c.do(ctx, "delete "+path, func() error { return c.c.Delete(path, version) })
}

// multi runs ops as one transaction. On failure it returns the error of
// the op that failed, and that op's index (-1 if none is known).
func (c *client) multi(ctx context.Context, what string, ops []any) (rs []zk.MultiResponse, failed int, err error) {
	rs, failed, _, err = c.multiRetried(ctx, what, ops)
	return rs, failed, err
}

// multiRetried is multi that also reports whether ops were sent again
// after an attempt failed with the connection: that attempt's reply was
// lost, and it may have been applied, so a failure of a later one may
// be on what the earlier one wrote.
func (c *client) multiRetried(ctx context.Context, what string, ops []any) (rs []zk.MultiResponse, failed int, retried bool, err error) {
	failed = -1
	attempts := 0
	err = c.do(ctx, what, func() error {
		attempts++
		rs, err = c.c.Multi(ops...)
		return err
	})
	retried = attempts > 1
	if err == nil {
		c.multis.Add(1)
		c.multiOps.Add(int64(len(ops)))
		return rs, -1, retried, nil
	}
	for i, r := range rs {
		if r.Error != nil && !errors.Is(r.Error, zk.ErrAPIError) && r.Error.Error() != "unknown error: -2" {
			return rs, i, retried, r.Error
		}
	}
	return rs, failed, retried, err
}

// createOp returns a create request with the runner's ACL.
func (c *client) createOp(path string, data []byte, flags int32) *zk.CreateRequest {
	return &zk.CreateRequest{Path: path, Data: data, Acl: c.acl, Flags: flags}
}

// deleteTree deletes the node p and everything under it, children first,
// a multi-op of at most 500 deletes at a time. Nodes deleted meanwhile by
// someone else are not an error.
func (c *client) deleteTree(ctx context.Context, p string) error {
	kids, err := c.children(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	var leaves []string
	for _, k := range kids {
		sub, err := c.children(ctx, p+"/"+k)
		switch {
		case errors.Is(err, zk.ErrNoNode):
		case err != nil:
			return err
		case len(sub) > 0:
			if err := c.deleteTree(ctx, p+"/"+k); err != nil {
				return err
			}
		default:
			leaves = append(leaves, p+"/"+k)
		}
	}
	for len(leaves) > 0 {
		n := min(len(leaves), 500)
		ops := make([]any, n)
		for i, l := range leaves[:n] {
			ops[i] = &zk.DeleteRequest{Path: l, Version: -1}
		}
		if _, _, err := c.multi(ctx, "delete under "+p, ops); err != nil {
			// Someone deleted some meanwhile: one at a time.
			for _, l := range leaves[:n] {
				if err := c.delete(ctx, l, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
					return err
				}
			}
		}
		leaves = leaves[n:]
	}
	if err := c.delete(ctx, p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}
