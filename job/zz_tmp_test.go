package job_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

func tmpFanIn() ast.Node {
	acts := make([]ast.Node, 11)
	for i := range acts {
		acts[i] = ast.Act("noop", json.RawMessage(`{"id":"o-`+strconv.Itoa(i)+`","n":`+strconv.Itoa(i)+`}`))
	}
	return ast.Seq(ast.Par(acts[:10]...), acts[10])
}

func BenchmarkTmpNewFanIn(b *testing.B) {
	root := tmpFanIn()
	b.ReportAllocs()
	for range b.N {
		if _, err := job.New("a-1-123", root); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTmpValidateFanIn(b *testing.B) {
	root := tmpFanIn()
	b.ReportAllocs()
	for range b.N {
		if err := ast.Validate(root); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTmpRunFanIn(b *testing.B) {
	root := tmpFanIn()
	b.ReportAllocs()
	out := json.RawMessage(`{"id":"o-1","n":2}`)
	for range b.N {
		tr, err := job.New("a-1-123", root)
		if err != nil {
			b.Fatal(err)
		}
		j := tr.Job
		queue := tr.Actions
		for len(queue) > 0 {
			a := queue[0]
			queue = queue[1:]
			tr, err = job.Restart(j, []job.Result{a.Succeed(out)})
			if err != nil {
				b.Fatal(err)
			}
			j = tr.Job
			queue = append(queue, tr.Actions...)
		}
		if !j.Done() {
			b.Fatal("not done")
		}
	}
}
