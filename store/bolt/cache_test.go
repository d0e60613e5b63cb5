package bolt

import (
	"fmt"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestCacheBounds: the cache holds at most max jobs and about maxLeaves
// actions, dropping the least recently used first, but always the job
// put last.
func TestCacheBounds(t *testing.T) {
	mk := func(id string, n int) job.Job {
		kids := make([]ast.Node, n)
		for i := range kids {
			kids[i] = ast.Act("log", i)
		}
		tr, err := job.New(job.ID(id), ast.Par(kids...))
		if err != nil {
			t.Fatal(err)
		}
		return tr.Job
	}
	c := newCache(3)
	c.maxLeaves = 100
	for i := range 4 {
		c.put(1, mk(fmt.Sprint("j", i), 10))
	}
	if _, ok := c.get("j0", 1, 1); ok {
		t.Error("the cache holds 4 jobs; max is 3")
	}
	for i := 1; i < 4; i++ {
		if _, ok := c.get(job.ID(fmt.Sprint("j", i)), 1, 1); !ok {
			t.Errorf("j%d was dropped", i)
		}
	}
	c.put(1, mk("big", 95)) // 30 + 95 > 100: the oldest go, until it fits
	if c.leaves > 100 || c.order.Len() != 1 {
		t.Errorf("after a big job: %d jobs, %d leaves", c.order.Len(), c.leaves)
	}
	c.put(1, mk("huge", 500)) // over the bound alone: kept, alone
	if _, ok := c.get("huge", 1, 1); !ok || c.order.Len() != 1 || c.leaves != 500 {
		t.Errorf("after a huge job: %d jobs, %d leaves", c.order.Len(), c.leaves)
	}
	c.drop("huge")
	if c.order.Len() != 0 || c.leaves != 0 {
		t.Errorf("after drop: %d jobs, %d leaves", c.order.Len(), c.leaves)
	}
}
