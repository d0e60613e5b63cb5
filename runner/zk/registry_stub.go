package zk

// A stand-in for zkreg's registry (registry.go), until its branch is
// merged: it reads the ephemeral worker announcements of today's layout.
// Deleted at that merge.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
)

type registry struct {
	c       *conn
	clock   runner.Clock
	log     *slog.Logger
	mu      sync.Mutex
	workers map[string]placement.Worker
	changes chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
}

func newRegistry(c *conn, clock runner.Clock, log *slog.Logger, watch bool) *registry {
	return &registry{c: c, clock: clock, log: log, workers: map[string]placement.Worker{}, changes: make(chan struct{}, 1), done: make(chan struct{})}
}

func (g *registry) start(ctx context.Context) error {
	ctx, g.cancel = context.WithCancel(context.WithoutCancel(ctx))
	ch, err := g.refresh(ctx)
	if err != nil {
		return err
	}
	go func() {
		defer close(g.done)
		for {
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-ch:
			case <-t.C:
			}
			t.Stop()
			if c2, err := g.refresh(ctx); err == nil {
				ch = c2
			}
		}
	}()
	return nil
}

func (g *registry) stop() {
	if g.cancel != nil {
		g.cancel()
		<-g.done
	}
}

func (g *registry) refresh(ctx context.Context) (<-chan zk.Event, error) {
	var names []string
	var ch <-chan zk.Event
	err := g.c.do(ctx, "list workers", func() (err error) {
		names, _, ch, err = g.c.c.ChildrenW(g.c.l.workers())
		return err
	})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, n := range names {
		if w, ok := g.workers[n]; ok && w.Live {
			continue
		}
		data, _, err := g.c.get(ctx, g.c.l.worker(n))
		if err != nil {
			continue
		}
		var a announcement
		if json.Unmarshal(data, &a) != nil {
			continue
		}
		acts := slices.Clone(a.Actions)
		slices.Sort(acts)
		g.workers[n] = placement.Worker{Name: n, State: placement.StateAvailable, Live: true, Capacity: a.Capacity, Actions: acts}
	}
	for n, w := range g.workers {
		if w.Live && !slices.Contains(names, n) {
			w.Live, w.DownSince = false, now
			g.workers[n] = w
		}
	}
	select {
	case g.changes <- struct{}{}:
	default:
	}
	return ch, nil
}

func (g *registry) view(self string, now time.Time) placement.View {
	g.mu.Lock()
	defer g.mu.Unlock()
	v := placement.View{Self: self, Settings: placement.Settings{Wait: time.Second}}
	for _, w := range g.workers {
		v.Workers = append(v.Workers, w)
	}
	return v
}

func (g *registry) changed() <-chan struct{} { return g.changes }

func (g *registry) live() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for n, w := range g.workers {
		if w.Live {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// zkreg's layout additions.
func (l layout) pins(name string) string    { return l.worker(name) + "/pins" }
func (l layout) pin(name, id string) string { return l.pins(name) + "/" + id }
func (l layout) allocs() string             { return l.root + "/alloc" }
func (l layout) alloc(id string) string     { return l.allocs() + "/" + id[:2] + "/" + id }
func pinID(hash uint64) string              { return fmt.Sprintf("%016x", hash) }
