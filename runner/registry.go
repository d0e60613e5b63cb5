package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// Handler performs one action. It returns the action's output (any bytes;
// JSON by convention) or an error, which fails the action with the error's
// message. The context ends when the action's timeout passes or the
// worker is stopped for good; a handler should return promptly then.
//
// Handlers must be idempotent: delivery is at least once.
type Handler func(ctx context.Context, a job.Action) (output []byte, err error)

// Registry maps action names to handlers. It is safe for concurrent use.
// The zero Registry is not usable; call NewRegistry.
type Registry struct {
	mu sync.RWMutex
	h  map[string]Handler
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{h: map[string]Handler{}}
}

// Register adds h under name. It fails if name is not a valid action name
// or already has a handler.
func (r *Registry) Register(name string, h Handler) error {
	if h == nil {
		return fmt.Errorf("runner: nil handler for action %q", name)
	}
	if err := ast.Validate(ast.Act(name, nil)); err != nil {
		return fmt.Errorf("runner: cannot register %q: %w", name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.h[name]; ok {
		return fmt.Errorf("runner: action %q already has a handler", name)
	}
	r.h[name] = h
	return nil
}

// Handle registers a typed handler: the action's JSON payload is decoded
// into In (an absent payload leaves In's zero value) and Out is encoded as
// the action's JSON output. A payload that does not decode fails the
// action with a message naming the action and the type.
func Handle[In, Out any](r *Registry, name string, f func(ctx context.Context, in In) (Out, error)) error {
	if f == nil {
		return fmt.Errorf("runner: nil handler for action %q", name)
	}
	// The payload is decoded into a value of In kept from one action to
	// the next (zeroed between them), then copied out for f: decoding
	// needs an In of its own behind a pointer, which would otherwise be
	// allocated for every action.
	var ins sync.Pool
	return r.Register(name, func(ctx context.Context, a job.Action) ([]byte, error) {
		var in In
		if len(a.Payload) > 0 {
			p, _ := ins.Get().(*In)
			if p == nil {
				p = new(In)
			}
			err := json.Unmarshal(a.Payload, p)
			in = *p
			var zero In
			*p = zero // keeps nothing of this payload alive
			ins.Put(p)
			if err != nil {
				return nil, fmt.Errorf("payload of action %q does not decode into %s: %v", a.Name, typeName[In](), err)
			}
		}
		out, err := f(ctx, in)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("output of action %q does not encode as JSON: %v", a.Name, err)
		}
		return b, nil
	})
}

func typeName[T any]() string {
	return reflect.TypeFor[T]().String()
}

// Lookup returns the handler for name.
func (r *Registry) Lookup(name string) (Handler, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	h, ok := r.h[name]
	return h, ok
}

// Names returns the registered action names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.h))
	for n := range r.h {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Missing returns the action names used in the tree at root that have no
// handler, sorted and without repeats. Runners call it before starting a
// job so that a typo is reported up front rather than as a failed action.
func (r *Registry) Missing(root ast.Node) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.all(&root) {
		return nil // the common case, without building a set
	}
	seen := map[string]bool{}
	r.missing(&root, seen)
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// all reports whether every action under n has a handler. r.mu is held.
func (r *Registry) all(n *ast.Node) bool {
	if n == nil {
		return true
	}
	if n.Kind == ast.KindAct {
		if _, ok := r.h[n.Action]; !ok {
			return false
		}
	}
	for i := range n.Children {
		if !r.all(&n.Children[i]) {
			return false
		}
	}
	return r.all(n.Body) && r.all(n.Rescue) && r.all(n.Finally)
}

// missing adds to seen the unregistered action names under n. It walks
// without building paths: Submit calls it for every job. r.mu is held.
func (r *Registry) missing(n *ast.Node, seen map[string]bool) {
	if n == nil {
		return
	}
	if n.Kind == ast.KindAct {
		if _, ok := r.h[n.Action]; !ok {
			seen[n.Action] = true
		}
	}
	for i := range n.Children {
		r.missing(&n.Children[i], seen)
	}
	r.missing(n.Body, seen)
	r.missing(n.Rescue, seen)
	r.missing(n.Finally, seen)
}
