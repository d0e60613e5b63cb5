package storetest

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/google/go-cmp/cmp"
)

// driver plays the runner for one job: it keeps the live job, every
// transition made so far, and the outstanding actions in dispatch order.
type driver struct {
	t       testing.TB
	j       job.Job
	trs     []job.Transition // trs[v-1] made version v
	pending []job.Action
}

// newDriver starts a job. Its incarnation is derived from the ID and a
// counter, so that jobs made again under one ID differ, as runners make
// them.
func newDriver(t testing.TB, id job.ID, root ast.Node) *driver {
	t.Helper()
	tr, err := job.New(id, root, job.WithIncarnation(incarnations.Add(1)))
	if err != nil {
		t.Fatalf("job.New(%s): %v", id, err)
	}
	return &driver{t: t, j: tr.Job, trs: []job.Transition{tr}, pending: tr.Actions}
}

// incarnations numbers the jobs drivers make.
var incarnations atomic.Uint64

// version returns the job at version v.
func (d *driver) version(v int) job.Job { return d.trs[v-1].Job }

// steps returns the transitions after the creation: what Saves store.
func (d *driver) steps() []job.Transition { return d.trs[1:] }

// output returns a result output for a, varied so that stores see JSON,
// empty and non-JSON (binary) outputs.
func output(a job.Action) []byte {
	h := a.Attempt
	for _, c := range []byte(a.ID) {
		h += int(c)
	}
	switch h % 4 {
	case 0:
		return nil
	case 1:
		return []byte("\x00not json\xff " + a.ID)
	}
	return fmt.Appendf(nil, `{"done":%q}`, a.ID)
}

// padded returns a JSON output of about 150 bytes for a.
func padded(a job.Action) []byte {
	return fmt.Appendf(nil, `{"done":%q,"pad":"%0128d"}`, a.ID, a.Attempt)
}

// succeed completes the first n outstanding actions in one batch.
func (d *driver) succeed(n int) job.Transition {
	d.t.Helper()
	rs := make([]job.Result, 0, n)
	for _, a := range d.pending[:n] {
		rs = append(rs, a.Succeed(output(a)))
	}
	return d.apply(n, rs)
}

// fail fails the first outstanding action.
func (d *driver) fail(msg string) job.Transition {
	d.t.Helper()
	return d.apply(1, []job.Result{d.pending[0].Fail(msg)})
}

func (d *driver) apply(n int, rs []job.Result) job.Transition {
	d.t.Helper()
	tr, err := job.Restart(d.j, rs)
	if err != nil {
		d.t.Fatalf("job.Restart(%s v%d): %v", d.j.ID(), d.j.Version(), err)
	}
	if tr.Job.Version() != d.j.Version()+1 {
		d.t.Fatalf("job.Restart(%s v%d) applied nothing: %v", d.j.ID(), d.j.Version(), tr.Ignored)
	}
	d.j = tr.Job
	d.trs = append(d.trs, tr)
	d.pending = append(d.pending[n:], tr.Actions...)
	return tr
}

// parOf returns a par of n log actions.
func parOf(n int) ast.Node {
	kids := make([]ast.Node, n)
	for i := range kids {
		kids[i] = ast.Act("log", i)
	}
	return ast.Par(kids...)
}

// mixed is a small tree of every node kind.
func mixed() ast.Node {
	return ast.Seq(
		ast.Act("log", "a"),
		ast.Par(ast.Act("log", "b"), ast.Act("log", "c"), ast.Act("log", "d")),
		ast.Try(ast.Act("charge", map[string]int{"cents": 500}),
			ast.Rescue(ast.Act("refund", nil)),
			ast.Finally(ast.Act("release", nil))),
		ast.Act("log", "e"),
	)
}

// sameJob fails the test unless got encodes to exactly the bytes want does.
func sameJob(t testing.TB, what string, want, got job.Job) {
	t.Helper()
	if diff := diffJob(want, got); diff != "" {
		t.Fatalf("%s: %s", what, diff)
	}
}

// diffJob returns "" if got encodes to exactly the bytes want does, and a
// readable difference otherwise. It is safe to call from any goroutine.
func diffJob(want, got job.Job) string {
	wb, werr := job.Encode(want)
	gb, gerr := job.Encode(got)
	switch {
	case werr != nil:
		return fmt.Sprintf("encoding the live job: %v", werr)
	case gerr != nil:
		return fmt.Sprintf("encoding the stored job: %v", gerr)
	case bytes.Equal(wb, gb):
		return ""
	}
	diff := cmp.Diff(job.Describe(want), job.Describe(got))
	if diff == "" {
		diff = fmt.Sprintf("same description; encodings differ:\nlive %s\ngot  %s", wb, gb)
	}
	return fmt.Sprintf("job %s v%d differs from the live job v%d (-live +got):\n%s", got.ID(), got.Version(), want.Version(), diff)
}
