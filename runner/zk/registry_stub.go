package zk

// TEMPORARY (zklease): a stand-in for zkreg's registry (runner/zk/registry.go)
// until branch zkreg has it; deleted when zklease merges zkreg. It lists
// today's ephemeral worker announcements as the live workers.

import (
	"context"
	"slices"
	"time"

	"github.com/batonwf/baton/placement"
)

type registry struct{ r *Runner }

func (g *registry) view(self string, now time.Time) placement.View {
	return placement.View{Self: self}
}

func (g *registry) changed() <-chan struct{} { return nil }

func (g *registry) live() []string {
	names, err := g.r.c.children(context.Background(), g.r.c.l.workers())
	if err != nil {
		return nil
	}
	slices.Sort(names)
	return names
}
