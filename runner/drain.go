package runner

import (
	"log/slog"
	"time"
)

// Drain is the shutdown of a runner's actions in flight, written once:
// it waits until done is closed (they finished), for at most timeout;
// then it calls handBack, which hands back what still runs (cancels the
// handlers' context: their actions are run again elsewhere, or later),
// and waits for done. A timeout of zero or less hands back at once (a
// runner's Options.DrainTimeout is negative for that: zero there means
// its default). handBack is called in every case, once, so it
// also releases what the handlers' context holds. Drain reports whether
// the actions finished within the timeout; a timeout that ran out is
// logged at WARN to log (nil discards).
func Drain(timeout time.Duration, done <-chan struct{}, handBack func(), log *slog.Logger) bool {
	finished := false
	if timeout > 0 {
		t := time.NewTimer(timeout)
		select {
		case <-done:
			finished = true
		case <-t.C:
			if log != nil {
				log.Warn("drain timeout: handing back actions still running", "timeout", timeout)
			}
		}
		t.Stop()
	}
	handBack()
	<-done
	return finished
}
