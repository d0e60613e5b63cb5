package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// interruptible returns a context that ends on SIGINT or SIGTERM (Ctrl-C).
// After the first signal the default handling is back, so a second Ctrl-C
// during the drain kills the process at once; the store loses nothing
// either way. Call stop to release the signals.
func (c *cli) interruptible(ctx context.Context) (_ context.Context, stop context.CancelFunc) {
	if c.noSignals {
		return context.WithCancel(ctx)
	}
	ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
