package runner

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Backoff is a capped, jittered exponential back-off: the n-th wait (from
// 1) is drawn uniformly from [d/2, d], where d is Base doubled n-1 times
// and at most Max. Half the wait is jitter, so processes that failed
// together do not retry together ("equal jitter"). The zero value waits
// 10 ms doubling to 1 s.
type Backoff struct {
	Base time.Duration // the first wait's upper bound; default 10ms
	Max  time.Duration // the cap; default 1s
}

// Wait returns the n-th wait (n from 1; n < 1 is taken as 1).
func (b Backoff) Wait(n int) time.Duration {
	base, ceil := b.Base, b.Max
	if base <= 0 {
		base = 10 * time.Millisecond
	}
	if ceil <= 0 {
		ceil = time.Second
	}
	d := base
	for i := 1; i < n && d < ceil; i++ {
		d *= 2
	}
	d = min(d, ceil)
	half := d / 2
	return half + rand.N(d-half+1)
}

// Sleep waits the n-th wait, or until ctx ends; it returns ctx's error
// then.
func (b Backoff) Sleep(ctx context.Context, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(b.Wait(n))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Retry calls f until it returns nil, a permanent error (one for which
// retryable returns false; nil retryable retries every error), or ctx
// ends, sleeping b.Wait(n) after the n-th failure. It returns f's last
// error, or ctx's error joined to it when ctx ended first.
func (b Backoff) Retry(ctx context.Context, retryable func(error) bool, f func() error) error {
	for n := 1; ; n++ {
		err := f()
		if err == nil || retryable != nil && !retryable(err) {
			return err
		}
		if serr := b.Sleep(ctx, n); serr != nil {
			return errors.Join(serr, err)
		}
	}
}
