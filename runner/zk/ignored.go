package zk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

var _ store.IgnoreJournal = (*Store)(nil)

// ignored is the parent of the journal of ignored results of one
// incarnation of job id: its children are sequential nodes "r-SEQ", one
// store.EncodeIgnored record each. Under the incarnation, so that deleting
// the job (or retention) deletes them, and a job made again under the ID
// starts with none.
func (l layout) ignored(id job.ID, inc uint64) string { return l.incarnation(id, inc) + "/ignored" }

// JournalIgnored implements store.IgnoreJournal: one sequential node per
// record under the incarnation's ignored node (created with the first),
// then, past store.MaxIgnored, the oldest deleted. Two writers at once
// may each leave the journal a little past the bound until the next
// write trims it.
func (s *Store) JournalIgnored(ctx context.Context, id job.ID, ig []store.Ignored) error {
	if err := s.usable(id); err != nil {
		return err
	}
	if len(ig) == 0 {
		return nil
	}
	data, _, err := s.c.get(ctx, s.c.l.job(id))
	if errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("job %s: journal ignored results: %w", id, err)
	}
	m, err := decodeMeta(id, data)
	if err != nil {
		return err
	}
	inc, _ := m.incarnation()
	parent := s.c.l.ignored(id, inc)
	if err := s.c.ensure(ctx, parent); err != nil {
		if errors.Is(err, zk.ErrNoNode) { // the incarnation is gone: deleted meanwhile
			return fmt.Errorf("job %s: %w", id, store.ErrNotFound)
		}
		return fmt.Errorf("job %s: journal ignored results: %w", id, err)
	}
	ops := make([]any, len(ig))
	for i, x := range ig {
		ops[i] = s.c.createOp(parent+"/r-", store.EncodeIgnored(x), zk.FlagSequence)
	}
	if _, _, err := s.c.multi(ctx, "journal ignored results of job "+string(id), ops); err != nil {
		if errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("job %s: %w", id, store.ErrNotFound)
		}
		return fmt.Errorf("job %s: journal ignored results: %w", id, err)
	}
	names, err := s.c.children(ctx, parent)
	if err != nil || len(names) <= store.MaxIgnored {
		return nil // trimmed by a later write
	}
	slices.Sort(names) // the sequence is zero-padded: names sort in order
	for _, n := range names[:len(names)-store.MaxIgnored] {
		if err := s.c.delete(ctx, parent+"/"+n, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("job %s: trim the ignored results: %w", id, err)
		}
	}
	return nil
}

// ignoredOf reads the journal of ignored results of one incarnation of
// job id, oldest first: the newest store.MaxIgnored.
func (s *Store) ignoredOf(ctx context.Context, id job.ID, inc uint64) ([]store.Ignored, error) {
	parent := s.c.l.ignored(id, inc)
	names, err := s.c.children(ctx, parent)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("job %s: list ignored results: %w", id, err)
	}
	slices.Sort(names)
	names = names[max(0, len(names)-store.MaxIgnored):]
	out := make([]store.Ignored, len(names))
	errs := make([]error, len(names))
	ok := make([]bool, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, n := range names {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			rec, _, err := s.c.get(ctx, parent+"/"+n)
			switch {
			case errors.Is(err, zk.ErrNoNode): // trimmed meanwhile
			case err != nil:
				errs[i] = fmt.Errorf("job %s: read ignored result %s: %w", id, n, err)
			default:
				out[i], errs[i] = store.DecodeIgnored(rec)
				ok[i] = errs[i] == nil
				if errs[i] != nil {
					errs[i] = fmt.Errorf("job %s: ignored/%s: %w", id, n, errs[i])
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	kept := out[:0]
	for i, x := range out {
		if ok[i] {
			kept = append(kept, x)
		}
	}
	return kept, nil
}
