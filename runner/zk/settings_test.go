package zk_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/placement"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// TestSettings: the settings node is read with defaults for what it does
// not set, written by compare-and-swap (concurrent updates all apply), a
// garbled one is an error on read and is overwritten by an update, and an
// unknown strategy is refused listing the valid ones.
func TestSettings(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
	ctx := context.Background()
	s, err := st.Settings(ctx)
	if err != nil || s != zkrunner.DefaultSettings() || s.Strategy != placement.Spread || s.Wait != 2*time.Second {
		t.Fatalf("Settings of a new root = %+v, %v; want the defaults", s, err)
	}
	// Two updates at once, of different fields: both apply.
	var wg sync.WaitGroup
	for _, f := range []func(*placement.Settings) error{
		func(s *placement.Settings) error { s.Strategy = placement.Pack; return nil },
		func(s *placement.Settings) error { s.Quarantine.After = 7; return nil },
	} {
		wg.Go(func() {
			if _, err := st.UpdateSettings(ctx, f); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if _, err := st.UpdateSettings(ctx, func(s *placement.Settings) error { s.Wait = 0; return nil }); err != nil {
		t.Fatal(err)
	}
	s, err = st.Settings(ctx)
	if err != nil || s.Strategy != placement.Pack || s.Quarantine.After != 7 || s.Wait != 0 || s.Quarantine.SharePercent != 20 {
		t.Fatalf("Settings after the updates = %+v, %v", s, err)
	}
	if _, err := st.UpdateSettings(ctx, func(s *placement.Settings) error { s.Strategy = placement.Strategy(9); return nil }); err == nil ||
		!strings.Contains(err.Error(), "valid: spread, pack") {
		t.Fatalf("an unknown strategy: %v, want an error listing the valid ones", err)
	}
	boom := errors.New("boom")
	if _, err := st.UpdateSettings(ctx, func(*placement.Settings) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("f's error: %v", err)
	}
	// Garbled by hand: an error to read, overwritten by an update.
	if _, err := c.Set(st.Root()+"/placement", []byte(`{"strategy":`), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Settings(ctx); err == nil || !strings.Contains(err.Error(), "placement") {
		t.Fatalf("garbled settings read as %v", err)
	}
	if _, err := st.UpdateSettings(ctx, func(s *placement.Settings) error { s.Strategy = placement.Pack; return nil }); err != nil {
		t.Fatal(err)
	}
	if s, err := st.Settings(ctx); err != nil || s.Strategy != placement.Pack || s.Wait != zkrunner.DefaultWait {
		t.Fatalf("Settings after overwriting the garbled node = %+v, %v", s, err)
	}
}
