package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// cancelNode is 'baton cancel --node NAME JOB': it cancels the running
// node called name in job id (job.CancelNode) through the backend's
// canceller, and prints a line. A node that is not running is left as it
// is, and the line says so (exit 0); a job not found, finished, or
// without a node of that name exits 2.
func (c *cli) cancelNode(ctx context.Context, b backend, id job.ID, name, reason string) error {
	cr, err := b.canceller(ctx)
	if err != nil {
		return withCode(exitError, err)
	}
	defer cr.close()
	path := b.where()
	j, err := view(b).viewJob(ctx, id, 0)
	if err != nil {
		c.errorf("%v", err)
		return exitWith(max(storeExit(err), exitCode(err)))
	}
	if j.Status != job.StatusRunning.String() {
		c.errorf("job %s in %s has finished (%s): no node to cancel", id, path, j.Status)
		return exitWith(exitError)
	}
	n, ok := findNode(j, name)
	switch {
	case !ok:
		c.errorf("job %s in %s has no node called %s (run 'baton inspect %s %s' for its nodes)", id, path, name, b.hint(), id)
		return exitWith(exitError)
	case n.Status != job.StatusRunning.String():
		fmt.Fprintln(c.stdout, notRunningLine(id, n))
		return nil
	}
	line, err := cr.cancelNode(ctx, id, name, reason)
	switch {
	case errors.Is(err, runner.ErrFinished):
		c.errorf("job %s in %s has finished: no node to cancel", id, path)
		return exitWith(exitError)
	case err != nil:
		c.errorf("cancel node %s of job %s in %s: %v", name, id, path, err)
		return exitWith(max(storeExit(err), exitCode(err)))
	}
	fmt.Fprintln(c.stdout, line)
	return nil
}

// findNode returns the node of j called name, and whether there is one.
func findNode(j api.Job, name string) (api.Node, bool) {
	for _, n := range j.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return api.Node{Name: name}, false
}

// notRunningLine says that node n of job id, not running, was left as it
// is.
func notRunningLine(id job.ID, n api.Node) string {
	return fmt.Sprintf("node %s at %s of job %s is %s, not running: left as it is", n.Name, ast.ShowPath(n.Path), id, n.Status)
}

// nodeCancelLine says what became of the cancel of node n of job id, as
// read after it: settled (cancelled, or a failure it had first), or still
// running while what runs under it settles; saved says the cancel is
// known to be applied (the job at version), else it may be on its way
// (Kafka's restarter, a server's runner).
func nodeCancelLine(id job.ID, n api.Node, version uint64, saved bool) string {
	what := fmt.Sprintf("node %s at %s of job %s", n.Name, ast.ShowPath(n.Path), id)
	switch {
	case n.Failure != nil && n.Failure.Kind == job.KindCancelled:
		return fmt.Sprintf("%s cancelled: %s at v%d", what, n.Status, version)
	case n.Status != job.StatusRunning.String():
		return fmt.Sprintf("%s is %s at v%d: it settled before the cancel applied", what, n.Status, version)
	case saved:
		return fmt.Sprintf("%s cancelled at v%d; it fails with kind cancelled once what runs under it has settled", what, version)
	}
	return fmt.Sprintf("cancel of %s sent; it fails with kind cancelled once what runs under it has settled", what)
}
