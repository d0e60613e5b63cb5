package live

import (
	"bytes"
	"sync"

	"github.com/batonwf/baton/job"
)

// FullDiff is the fallback of Options.Changed: it walks both versions
// whole and returns, in pre-order, the nodes of new whose state differs
// from old's (status, attempt, retry time, output, error, failure). Its
// cost grows with the tree, not with the step: give job.Changed instead
// where there is one. Two jobs of different workflows (another
// incarnation) give every node of new.
func FullDiff(old, new job.Job) []job.NodeInfo {
	var before []job.NodeInfo
	if old.ID() == new.ID() && old.Incarnation() == new.Incarnation() {
		old.Walk(func(n job.NodeInfo) bool {
			before = append(before, n)
			return true
		})
	}
	var out []job.NodeInfo
	new.Walk(func(n job.NodeInfo) bool {
		if n.Index >= len(before) || !sameState(before[n.Index], n) {
			out = append(out, n)
		}
		return true
	})
	return out
}

func sameState(a, b job.NodeInfo) bool {
	if a.Path != b.Path || a.Status != b.Status || a.Attempt != b.Attempt || !a.Retry.Equal(b.Retry) ||
		!bytes.Equal(a.Output, b.Output) || a.Error != b.Error || (a.Failure == nil) != (b.Failure == nil) {
		return false
	}
	return a.Failure == nil || *a.Failure == *b.Failure
}

// memo keeps the changed nodes between two versions, so that the streams
// of one job that are at the same version compute them once. It is
// bounded: it forgets everything past memoSize entries.
type memo struct {
	mu sync.Mutex
	m  map[[2]uint64][]job.NodeInfo
}

const memoSize = 64

func (m *memo) get(k [2]uint64) ([]job.NodeInfo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.m[k]
	return c, ok
}

func (m *memo) put(k [2]uint64, c []job.NodeInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= memoSize {
		m.m = map[[2]uint64][]job.NodeInfo{}
	}
	m.m[k] = c
}
