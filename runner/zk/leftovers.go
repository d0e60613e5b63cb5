package zk

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
)

// What a job leaves in the queue when it stops waiting for its actions.
// A worker that claims an entry of a job that no longer waits for it
// deletes it; but an action that no live worker has a handler for is
// never claimed, so its entry would stay for ever. Hence:
//   - a transition that stops actions (a cancel, a deadline) deletes the
//     entries of those that no worker has claimed (dropStopped); the
//     claimed ones are released by their worker, whose handler is
//     stopped;
//   - deleting a job deletes its entries, timers, signals not applied and
//     dispatching marker (dropLeftovers).
// Both list the queue once: what they cost grows with the queue (the
// actions waiting or running), not with the jobs the root holds.

// dropStopped deletes the queue entries of the actions in acts that no
// worker holds a claim on. An entry claimed meanwhile changes version,
// and is then left to its claimant.
func (c *conn) dropStopped(ctx context.Context, acts []job.Action) error {
	want := make(map[string]bool, len(acts))
	for _, a := range acts {
		want[keyName(a.JobID, a.ID)] = true
	}
	names, err := c.children(ctx, c.l.queue())
	if err != nil {
		return fmt.Errorf("list the queue: %w", err)
	}
	for _, name := range names {
		_, _, id, aid, ok := entryKey(name)
		if !ok || !want[keyName(id, aid)] {
			continue
		}
		st, err := c.stat(ctx, c.l.entry(name))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		claimed, err := c.exists(ctx, c.l.claim(name))
		if err != nil {
			return err
		}
		if claimed {
			continue
		}
		if err := c.delete(ctx, c.l.entry(name), st.Version); err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
			return err
		}
	}
	return nil
}

// dropLeftovers deletes the queue entries, timers, signal nodes and
// dispatching markers of the jobs in gone, which were deleted: every one, claimed or not (a
// claimant finds its job gone, and releases its claim). A job created
// again under the same ID meanwhile keeps the nodes made since: those
// younger (by ZooKeeper's transaction ID) than its new node.
func (c *conn) dropLeftovers(ctx context.Context, gone map[job.ID]bool) error {
	var nodes []string
	var of []job.ID
	names, err := c.children(ctx, c.l.queue())
	if err != nil {
		return fmt.Errorf("list the queue: %w", err)
	}
	for _, name := range names {
		if _, _, id, _, ok := entryKey(name); ok && gone[id] {
			nodes, of = append(nodes, c.l.entry(name)), append(of, id)
		}
	}
	if names, err = c.children(ctx, c.l.timers()); err != nil {
		return fmt.Errorf("list the timers: %w", err)
	}
	for _, name := range names {
		if _, id, _, ok := timerKey(name); ok && gone[id] {
			nodes, of = append(nodes, c.l.timers()+"/"+name), append(of, id)
		}
	}
	names, err = c.children(ctx, c.l.signals())
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("list the signals: %w", err)
	}
	for _, name := range names {
		if id, ok := signalKey(name); ok && gone[id] {
			nodes, of = append(nodes, c.l.signals()+"/"+name), append(of, id)
		}
	}
	for id := range gone {
		nodes, of = append(nodes, c.l.dispatchingJob(id)), append(of, id)
	}
	// Listed first, compared after: a job created again before the
	// listing has its node by now.
	again := map[job.ID]int64{}
	for id := range gone {
		st, err := c.stat(ctx, c.l.job(id))
		switch {
		case err == nil:
			again[id] = st.Czxid
		case !errors.Is(err, zk.ErrNoNode):
			return err
		}
	}
	for i, p := range nodes {
		if cut, ok := again[of[i]]; ok {
			st, err := c.stat(ctx, p)
			if errors.Is(err, zk.ErrNoNode) {
				continue
			}
			if err != nil {
				return err
			}
			if st.Czxid >= cut {
				continue
			}
		}
		if err := c.delete(ctx, p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNotEmpty) {
			return err
		}
	}
	return nil
}

// stat returns a node's Stat; ErrNoNode if it does not exist.
func (c *client) stat(ctx context.Context, path string) (st *zk.Stat, err error) {
	err = c.do(ctx, "stat "+path, func() error {
		var ok bool
		ok, st, err = c.c.Exists(path)
		if err == nil && !ok {
			err = zk.ErrNoNode
		}
		return err
	})
	return st, err
}
