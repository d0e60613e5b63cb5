package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/store"
)

// zkBackend is a ZooKeeper root: the workers run the jobs, and a command
// reaches them through a runner that runs nothing (it saves a cancel and
// queues what follows for the workers).
type zkBackend struct {
	st  *zkrunner.Store
	z   *zkFlags
	log *slog.Logger // the runners'
}

var _ backend = (*zkBackend)(nil)

// openZKBackend connects to the root --zk and --root name; with
// mustExist it writes nothing, and a root that does not exist is an
// error.
func openZKBackend(ctx context.Context, z *zkFlags, mustExist bool, log *slog.Logger) (*zkBackend, error) {
	st, err := z.open(ctx, log, mustExist)
	if err != nil {
		return nil, withCode(zkExit(err), err)
	}
	return &zkBackend{st: st, z: z, log: log}, nil
}

func (b *zkBackend) where() string     { return b.z.where() }
func (b *zkBackend) hint() string      { return b.z.hint() }
func (b *zkBackend) jobs() store.Store { return b.st }
func (b *zkBackend) Close() error      { return b.st.Close() }

// client returns a runner with no handlers: it submits, cancels, resumes
// and waits; the workers run the actions.
func (b *zkBackend) client() (*zkrunner.Runner, error) {
	return zkrunner.New(zkrunner.Options{WorkerOptions: runner.WorkerOptions{Logger: b.log}, Store: b.st, NoResume: true})
}

func (b *zkBackend) canceller(context.Context) (canceller, error) {
	r, err := b.client()
	if err != nil {
		return nil, err
	}
	return &runnerCanceller{r: r, st: b.st, saves: true, stop: func() { r.Close() }}, nil
}

func (b *zkBackend) deleter(context.Context) (deleter, error) { return storeDeleter{b.st}, nil }

func (b *zkBackend) submitter(context.Context) (submitter, error) {
	r, err := b.client()
	if err != nil {
		return nil, err
	}
	return &zkSubmitter{r, b}, nil
}

// zkSubmitter submits through a runner with no handlers.
type zkSubmitter struct {
	r *zkrunner.Runner
	b *zkBackend
}

func (s *zkSubmitter) submit(ctx context.Context, id job.ID, root ast.Node) error {
	return s.r.Submit(ctx, id, root)
}

func (s *zkSubmitter) status(ctx context.Context, id job.ID) (api.Summary, error) {
	return summaries(s.r.Status)(ctx, id)
}

func (s *zkSubmitter) wait(ctx context.Context, id job.ID) (api.Job, error) {
	j, err := s.r.Wait(ctx, id)
	if err != nil {
		return api.Job{}, fmt.Errorf("job %s in %s: %w", id, s.b.where(), err)
	}
	return api.JobOf(j, true), nil
}

func (s *zkSubmitter) unserved(ctx context.Context, root ast.Node) string {
	missing, err := unserved(ctx, s.b.st, root)
	if err != nil || len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("baton: no live worker in %s has a handler for %s yet: the job waits for one ('baton worker %s' serves the built-in actions)",
		s.b.where(), quoteAll(missing), s.b.hint())
}

func (s *zkSubmitter) close() { s.r.Close() }

func (b *zkBackend) worker(o workerOptions) (workerRunner, error) {
	r, err := zkrunner.New(zkrunner.Options{
		WorkerOptions: o.WorkerOptions,
		Store:         b.st,
		Limits:        o.limits,
		Grace:         o.grace,
		ClaimLease:    o.claimLease,
	})
	if err != nil {
		return nil, plainError{"zk: ", err}
	}
	return zkWorker{r}, nil
}

func (w zkWorker) drained() (string, bool) {
	rep, ok := w.Drained()
	return fmt.Sprintf("%d action%s finished, %d pin%s released", rep.Finished, plural(int(rep.Finished)), rep.PinsReleased, plural(rep.PinsReleased)), ok
}

// zkWorker is a ZooKeeper worker.
type zkWorker struct{ *zkrunner.Runner }

func (w zkWorker) Run(ctx context.Context) error {
	if err := w.Runner.Run(ctx); err != nil {
		return plainError{"zk: ", err}
	}
	return nil
}

func (zkWorker) role() string    { return "" }
func (zkWorker) skipped() string { return "" }

func (b *zkBackend) writeStatus(ctx context.Context, w io.Writer) error {
	return writeWorkers(ctx, w, b)
}

// unserved lists the action names of root that no live worker has a
// handler for, sorted.
func unserved(ctx context.Context, st *zkrunner.Store, root ast.Node) ([]string, error) {
	workers, err := st.Workers(ctx)
	if err != nil {
		return nil, err
	}
	served := map[string]bool{}
	for _, w := range workers {
		if !w.Live {
			continue
		}
		for _, a := range w.Actions {
			served[a] = true
		}
	}
	var missing []string
	ast.Walk(root, func(_ string, n *ast.Node) bool {
		if n.Kind == ast.KindAct && !served[n.Action] && !slices.Contains(missing, n.Action) {
			missing = append(missing, n.Action)
		}
		return true
	})
	slices.Sort(missing)
	return missing, nil
}

// maxClaimsShown bounds the actions listed per worker by status.
const maxClaimsShown = 8

// maxOldestShown bounds the queue entries status lists.
const maxOldestShown = 5

// writeWorkers prints the registered workers of a ZooKeeper root, the
// placement settings and the queue:
//
//	WORKER  STATE                  PID   BUSY  PINS  ACTIONS                        RUNNING
//	w1      available              4242  1/4   0     fail,http.get,log,sleep,value  order-7/seq[1]#1
//	w2      down (grace 12s left)  -     0/4   2     fail,http.get,log,sleep,value  -
//	placement: strategy spread, wait 2s, quarantine after 5 failures (at most 20% of a name's workers)
//	queue: 2 entries (actions waiting or running); the first 2:
//	  order-7/seq[1]#1  log    -                      on w1
//	  order-8/root#1    sleep  k2e822c46578545ab.1aao  waits: w2 at +1m0s: holder w1 busy 4/4, spill at +1m0s
func writeWorkers(ctx context.Context, w io.Writer, b *zkBackend) error {
	workers, err := b.st.Workers(ctx)
	if err != nil {
		return fmt.Errorf("list workers in %s: %v", b.where(), err)
	}
	queued, err := b.st.Queued(ctx)
	if err != nil {
		return fmt.Errorf("list the queue in %s: %v", b.where(), err)
	}
	fmt.Fprintln(w)
	if len(workers) == 0 {
		fmt.Fprintf(w, "no workers in %s (start one with 'baton worker %s')\n", b.where(), b.hint())
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKER\tSTATE\tPID\tBUSY\tPINS\tACTIONS\tRUNNING")
		now := time.Now()
		for _, wi := range workers {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", wi.Name, workerState(wi, now), orDash(wi.PID), busy(wi), wi.Pins, actionList(wi.Actions), claimList(wi.Running))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if s, err := b.st.Settings(ctx); err != nil {
		fmt.Fprintf(w, "placement: %v\n", err)
	} else {
		fmt.Fprintln(w, settingsLine(s))
	}
	entries := "entries"
	if queued == 1 {
		entries = "entry"
	}
	fmt.Fprintf(w, "queue: %d %s (actions waiting or running)", queued, entries)
	if queued == 0 {
		fmt.Fprintln(w)
		return nil
	}
	oldest, err := b.st.Oldest(ctx, maxOldestShown)
	if err != nil {
		return fmt.Errorf("list the queue in %s: %v", b.where(), err)
	}
	if len(oldest) == 0 { // emptied since it was counted
		fmt.Fprintln(w)
		return nil
	}
	fmt.Fprintf(w, "; the first %d:\n", len(oldest))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, q := range oldest {
		fmt.Fprintf(tw, "  %s/%s\t%s\t%s\t%s\n", q.Job, q.Action, orDashString(q.Name), orDashString(q.Route), entryState(q))
	}
	return tw.Flush()
}

// entryState is where a queue entry runs ("on w1"), or why it waits: what
// placement.Decide answers for it (zkrunner.QueueEntry.Reason).
func entryState(q zkrunner.QueueEntry) string {
	switch {
	case q.Worker != "":
		return "on " + q.Worker
	case q.Reason != "":
		return q.Reason
	}
	return "waiting"
}

func orDashString(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// workerState is a worker's state for status: available, draining (with
// its timeout), down with the time left in its grace, quarantined with
// the names and until when, or unreadable.
func workerState(wi zkrunner.WorkerInfo, now time.Time) string {
	switch {
	case wi.Unreadable:
		return "unreadable (its registration does not parse)"
	case wi.State == placement.StateNone:
		return "stopping"
	case wi.State == placement.StateDown:
		if wi.GraceLeft > 0 {
			return fmt.Sprintf("down (grace %v left)", wi.GraceLeft.Round(time.Second))
		}
		return "down (grace over)"
	case wi.State == placement.StateDraining && wi.DrainTimeout > 0:
		return fmt.Sprintf("draining (timeout %v)", wi.DrainTimeout)
	case wi.State == placement.StateQuarantined:
		var qs []string
		for _, name := range slices.Sorted(maps.Keys(wi.Quarantined)) {
			if until := wi.Quarantined[name]; until.After(now) {
				qs = append(qs, fmt.Sprintf("%s until %s", name, until.Format("15:04:05")))
			}
		}
		return "quarantined: " + strings.Join(qs, ", ")
	}
	return wi.State.String()
}

// busy is "RUNNING/CAPACITY", or the running count for a worker whose
// announcement is gone (it is stopping).
func busy(wi zkrunner.WorkerInfo) string {
	if wi.Capacity == 0 {
		return fmt.Sprintf("%d/-", len(wi.Running))
	}
	return fmt.Sprintf("%d/%d", len(wi.Running), wi.Capacity)
}

func orDash(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func actionList(names []string) string {
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ",")
}

// claimList is "JOB/ACTION JOB/ACTION ...", sorted, at most
// maxClaimsShown of them (job IDs hold no '/').
func claimList(cs []zkrunner.Claim) string {
	if len(cs) == 0 {
		return "-"
	}
	cs = slices.Clone(cs)
	slices.SortFunc(cs, func(a, b zkrunner.Claim) int {
		return cmp.Or(cmp.Compare(a.Job, b.Job), cmp.Compare(a.Action, b.Action))
	})
	var parts []string
	for i, cl := range cs {
		if i == maxClaimsShown {
			parts = append(parts, fmt.Sprintf("(+%d more)", len(cs)-i))
			break
		}
		parts = append(parts, string(cl.Job)+"/"+cl.Action)
	}
	return strings.Join(parts, " ")
}

// listWorkers returns the workers announced on the root, for 'baton serve
// --zk' (GET /api/v1/workers): a worker stopping has capacity 0.
func (b *zkBackend) listWorkers(ctx context.Context) ([]api.Worker, error) {
	infos, err := b.st.Workers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.Worker, 0, len(infos))
	for _, w := range infos {
		if !w.Live {
			continue // registered but down: the API lists the live ones
		}
		since := w.Started.UTC()
		out = append(out, api.Worker{Name: w.Name, Capacity: w.Capacity, Busy: len(w.Running), Actions: w.Actions, Since: &since})
	}
	return out, nil
}

// workerError is the message of an error of Drain or Undrain, naming
// the root, with its exit status.
func workerError(b *zkBackend, err error) error {
	var unk *zkrunner.UnknownWorkerError
	var last *zkrunner.LastWorkerError
	switch {
	case errors.As(err, &unk):
		known := "none is registered"
		if len(unk.Known) > 0 {
			known = "registered: " + strings.Join(unk.Known, ", ")
		}
		return withCode(exitError, fmt.Errorf("no worker %q in %s (%s)", unk.Name, b.where(), known))
	case errors.As(err, &last):
		return withCode(exitError, fmt.Errorf("worker %s is the only available worker for %s in %s: draining it would leave them with none; start another worker first, or give --force",
			last.Name, strings.Join(last.Actions, ", "), b.where()))
	}
	return withCode(zkExit(err), fmt.Errorf("%s: %v", b.where(), strings.TrimPrefix(err.Error(), "zk: ")))
}

// drainWorker drains worker name (baton drain).
func (b *zkBackend) drainWorker(ctx context.Context, name string, force bool, timeout time.Duration) (zkrunner.DrainResult, error) {
	return b.st.Drain(ctx, name, zkrunner.DrainOptions{Force: force, Timeout: timeout})
}

// unknownWorker is the error of a command given a worker name that is
// not registered, listing those that are.
func unknownWorker(b *zkBackend, name string, ws []zkrunner.WorkerInfo) error {
	var known []string
	for _, w := range ws {
		known = append(known, w.Name)
	}
	return workerError(b, &zkrunner.UnknownWorkerError{Name: name, Known: known})
}
