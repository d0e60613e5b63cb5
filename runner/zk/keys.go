package zk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// Pin is a stored pin: a strict key's allocation (/<root>/alloc/XX/ID).
type Pin struct {
	// ID is the node's name: the key's hash, 16 hex digits.
	ID     string
	Key    string
	Worker string // its holder
	Job    string // the job that pinned it, for a job's pin
	Since  time.Time
	// Garbled says the node does not parse: it counts as absent (the next
	// claim of its key overwrites it), and Err says why.
	Garbled bool
	Err     string
}

// Pins lists the stored pins on the store's root, sorted by key, then ID.
// It reads every allocation: one request per pin (their number is bounded
// by the running jobs' pins, see the package doc).
func (s *Store) Pins(ctx context.Context) ([]Pin, error) {
	if err := s.usable("pins"); err != nil {
		return nil, err
	}
	buckets, err := s.c.children(ctx, s.c.l.allocs())
	if errors.Is(err, zk.ErrNoNode) {
		return []Pin{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list pins: %w", err)
	}
	out := []Pin{}
	for _, b := range buckets {
		ids, err := s.c.children(ctx, s.c.l.allocs()+"/"+b)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list pins: %w", err)
		}
		for _, id := range ids {
			p, ok, err := s.pin(ctx, id)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, p)
			}
		}
	}
	slices.SortFunc(out, func(a, b Pin) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// PinOf returns the stored pin of a key, if there is one.
func (s *Store) PinOf(ctx context.Context, hash uint64) (Pin, bool, error) {
	if err := s.usable("pins"); err != nil {
		return Pin{}, false, err
	}
	return s.pin(ctx, pinID(hash))
}

func (s *Store) pin(ctx context.Context, id string) (Pin, bool, error) {
	data, _, err := s.c.get(ctx, s.c.l.alloc(id))
	if errors.Is(err, zk.ErrNoNode) {
		return Pin{}, false, nil
	}
	if err != nil {
		return Pin{}, false, fmt.Errorf("read pin %s: %w", id, err)
	}
	a, err := decodeAlloc(data)
	if err != nil {
		return Pin{ID: id, Garbled: true, Err: err.Error()}, true, nil
	}
	return Pin{ID: id, Key: a.Key, Worker: a.Worker, Job: a.Job, Since: a.Since}, true, nil
}
