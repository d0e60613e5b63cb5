package web_test

import (
	"io"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server/web"
	"github.com/batonwf/baton/store"
)

// settledHistory runs a par of 10 seqs of 99 actions to the end, one
// result a step, stamped a millisecond apart.
func settledHistory(b testing.TB) (store.History, job.Job) {
	seqs := make([]ast.Node, 10)
	for i := range seqs {
		acts := make([]ast.Node, 99)
		for k := range acts {
			acts[k] = ast.Act("a", k)
		}
		seqs[i] = ast.Seq(acts...)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr, err := job.New("b", ast.Par(seqs...), job.StartedAt(t0))
	if err != nil {
		b.Fatal(err)
	}
	h := store.History{Origin: tr.Job}
	j, pending := tr.Job, tr.Actions
	for n := 1; len(pending) > 0; n++ {
		a := pending[0]
		pending = pending[1:]
		next, err := job.Restart(j, []job.Result{{JobID: "b", ActionID: a.ID, Output: []byte(`1`), At: t0.Add(time.Duration(n) * time.Millisecond)}})
		if err != nil {
			b.Fatal(err)
		}
		j = next.Job
		pending = append(pending, next.Actions...)
		h.Steps = append(h.Steps, next.Step)
	}
	return h, j
}

// BenchmarkJobPage renders the page of a settled job of 1,000 nodes
// with its 991 steps: the server's part of a page load.
func BenchmarkJobPage(b *testing.B) {
	h, j := settledHistory(b)
	site, err := web.NewSite()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		hist, err := api.HistoryOf(h, 0, 0)
		if err != nil {
			b.Fatal(err)
		}
		tree, err := web.DrawTree(j, nil)
		if err != nil {
			b.Fatal(err)
		}
		v := web.JobViewOf(web.JobInput{Summary: api.SummaryOf(j), Job: j, Latest: j.Version(), Steps: hist.Steps, History: true, Tree: tree, Now: j.Clock()})
		if err := site.Job(io.Discard, v); err != nil {
			b.Fatal(err)
		}
	}
}
