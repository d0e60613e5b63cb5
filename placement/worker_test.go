package placement_test

import (
	"testing"
	"time"

	"github.com/batonwf/baton/placement"
)

// Status is what `baton status` shows: down whatever the admin state,
// then draining, then quarantined while a quarantine lasts.
func TestWorkerStatus(t *testing.T) {
	w := idle("w1", 2)
	for _, c := range []struct {
		name string
		f    func(*placement.Worker)
		now  time.Time
		want placement.State
	}{
		{"idle", func(*placement.Worker) {}, t0, placement.StateAvailable},
		{"quarantined", func(w *placement.Worker) { w.Quarantined = map[string]time.Time{"a": t0.Add(time.Minute)} }, t0, placement.StateQuarantined},
		{"quarantine over", func(w *placement.Worker) { w.Quarantined = map[string]time.Time{"a": t0} }, t0, placement.StateAvailable},
		{"draining and quarantined", func(w *placement.Worker) {
			w.State = placement.StateDraining
			w.Quarantined = map[string]time.Time{"a": t0.Add(time.Minute)}
		}, t0, placement.StateDraining},
		{"down and draining", func(w *placement.Worker) { w.State, w.Live = placement.StateDraining, false }, t0, placement.StateDown},
	} {
		w := w
		c.f(&w)
		if got := w.Status(c.now); got != c.want {
			t.Errorf("%s: Status = %v, want %v", c.name, got, c.want)
		}
	}
	down := idle("w2", 2)
	down.Live, down.DownSince = false, t0
	for _, c := range []struct {
		at   time.Duration
		want time.Duration
	}{{0, 30 * time.Second}, {10 * time.Second, 20 * time.Second}, {30 * time.Second, 0}, {time.Hour, 0}} {
		if got := down.GraceLeft(t0.Add(c.at)); got != c.want {
			t.Errorf("GraceLeft at +%v = %v, want %v", c.at, got, c.want)
		}
	}
	if got := idle("w3", 2).GraceLeft(t0); got != 0 {
		t.Errorf("a live worker's GraceLeft = %v", got)
	}
}

// Free is the least of free capacity and the action's free limit, never
// negative.
func TestWorkerFree(t *testing.T) {
	w := busy(idle("w", 4), 1)
	if got := w.Free("a"); got != 3 {
		t.Errorf("Free = %d, want 3", got)
	}
	w.Limits = map[string]int{"a": 2}
	if got := w.Free("a"); got != 1 {
		t.Errorf("with limit 2 and 1 running: Free = %d, want 1", got)
	}
	if got := w.Free("b"); got != 3 {
		t.Errorf("another name: Free = %d, want 3", got)
	}
	w.Load.Running = 6 // published before a capacity was lowered
	if got := w.Free("b"); got != 0 {
		t.Errorf("over capacity: Free = %d, want 0", got)
	}
}

func TestParseStrategy(t *testing.T) {
	for _, s := range []placement.Strategy{placement.Spread, placement.Pack} {
		if got, err := placement.ParseStrategy(s.String()); err != nil || got != s {
			t.Errorf("ParseStrategy(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := placement.ParseStrategy("fill"); err == nil || err.Error() != `placement: unknown strategy "fill" (valid: spread, pack)` {
		t.Errorf("ParseStrategy(fill): %v", err)
	}
}
