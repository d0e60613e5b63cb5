package zk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/placement"
)

// DefaultWait is the cluster's default wait of a soft key (and of a
// replica copy for a worker that runs a copy of its group already) when
// /<root>/placement does not set one.
const DefaultWait = 2 * time.Second

// DefaultSettings returns the placement settings of a root whose
// settings node is missing: spread, DefaultWait, and
// placement.DefaultQuarantine.
func DefaultSettings() placement.Settings {
	return placement.Settings{Strategy: placement.Spread, Wait: DefaultWait, Quarantine: placement.DefaultQuarantine()}
}

// settingsNode is the data of /<root>/placement. A field absent or zero
// means its default.
type settingsNode struct {
	Strategy   string          `json:"strategy,omitempty"`
	WaitMs     *int64          `json:"wait_ms,omitempty"` // absent: DefaultWait; 0: no wait
	Quarantine *quarantineNode `json:"quarantine,omitempty"`
}

// quarantineNode is the quarantine policy in the settings node
// (placement.Quarantine; durations in milliseconds).
type quarantineNode struct {
	After        int   `json:"after,omitempty"`
	PeerWindowMs int64 `json:"peer_window_ms,omitempty"`
	FirstMs      int64 `json:"first_ms,omitempty"`
	MaxMs        int64 `json:"max_ms,omitempty"`
	Reset        int   `json:"reset,omitempty"`
	SharePercent int   `json:"share_percent,omitempty"`
}

// errSettings is wrapped by the errors of a settings node that does not
// decode, and of settings that cannot be stored.
var errSettings = errors.New("zk: bad placement settings")

// decodeSettings reads the settings node's data: the defaults for what it
// does not set. A node that does not parse, or holds an unknown strategy
// or a negative value, is an error wrapping errSettings.
func decodeSettings(data []byte) (placement.Settings, error) {
	s := DefaultSettings()
	if len(data) == 0 {
		return s, nil
	}
	var n settingsNode
	if err := json.Unmarshal(data, &n); err != nil {
		return s, fmt.Errorf("%w: %w", errSettings, err)
	}
	if n.Strategy != "" {
		st, err := placement.ParseStrategy(n.Strategy)
		if err != nil {
			return s, fmt.Errorf("%w: %w", errSettings, err)
		}
		s.Strategy = st
	}
	if n.WaitMs != nil {
		if *n.WaitMs < 0 {
			return s, fmt.Errorf("%w: wait_ms %d is negative", errSettings, *n.WaitMs)
		}
		s.Wait = ms(*n.WaitMs)
	}
	if q := n.Quarantine; q != nil {
		if q.After < 0 || q.PeerWindowMs < 0 || q.FirstMs < 0 || q.MaxMs < 0 || q.Reset < 0 || q.SharePercent < 0 || q.SharePercent > 100 {
			return s, fmt.Errorf("%w: a quarantine setting is negative, or share_percent is over 100", errSettings)
		}
		s.Quarantine = placement.Quarantine{After: q.After, PeerWindow: ms(q.PeerWindowMs), First: ms(q.FirstMs),
			Max: ms(q.MaxMs), Reset: q.Reset, SharePercent: q.SharePercent}.WithDefaults()
	}
	return s, nil
}

// encodeSettings returns the settings node's data for s, every field
// written (zero quarantine fields as their defaults).
func encodeSettings(s placement.Settings) ([]byte, error) {
	if s.Wait < 0 {
		return nil, fmt.Errorf("%w: wait %v is negative", errSettings, s.Wait)
	}
	if _, err := placement.ParseStrategy(s.Strategy.String()); err != nil {
		return nil, fmt.Errorf("%w: %w", errSettings, err)
	}
	q := s.Quarantine.WithDefaults()
	if q.After < 0 || q.Reset < 0 || q.PeerWindow < 0 || q.First < 0 || q.Max < 0 || q.SharePercent < 0 || q.SharePercent > 100 {
		return nil, fmt.Errorf("%w: a quarantine setting is negative, or its share is over 100 percent", errSettings)
	}
	wait := s.Wait.Milliseconds()
	return json.Marshal(settingsNode{Strategy: s.Strategy.String(), WaitMs: &wait, Quarantine: &quarantineNode{
		After: q.After, PeerWindowMs: q.PeerWindow.Milliseconds(), FirstMs: q.First.Milliseconds(),
		MaxMs: q.Max.Milliseconds(), Reset: q.Reset, SharePercent: q.SharePercent}})
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// Settings returns the cluster's placement settings: those of
// /<root>/placement, the defaults where it sets nothing (all of them
// when it is missing). A node that does not parse is an error wrapping
// errSettings (workers keep their last good settings meanwhile).
func (s *Store) Settings(ctx context.Context) (placement.Settings, error) {
	st, _, err := s.c.settings(ctx)
	return st, err
}

// UpdateSettings changes the cluster's placement settings: f is given
// the settings now and changes them; they are written by a
// compare-and-swap on the node's version (created if missing), and f is
// called again after a conflict. An error of f is returned as it is,
// with nothing written. A node that does not parse is overwritten, f
// being given the defaults. It returns the settings written.
func (s *Store) UpdateSettings(ctx context.Context, f func(*placement.Settings) error) (placement.Settings, error) {
	if err := s.usable("placement"); err != nil {
		return placement.Settings{}, err
	}
	for {
		cur, version, err := s.c.settings(ctx)
		if err != nil && !errors.Is(err, errSettings) {
			return placement.Settings{}, err
		}
		if err := f(&cur); err != nil {
			return placement.Settings{}, err
		}
		data, err := encodeSettings(cur)
		if err != nil {
			return placement.Settings{}, err
		}
		if version < 0 {
			_, err = s.c.create(ctx, s.c.l.placement(), data, 0)
		} else {
			err = s.c.do(ctx, "set "+s.c.l.placement(), func() error {
				_, err := s.c.c.Set(s.c.l.placement(), data, version)
				return err
			})
		}
		switch {
		case err == nil:
			return cur, nil
		case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNodeExists), errors.Is(err, zk.ErrNoNode):
			continue // written meanwhile (possibly by our own retried request): read again
		default:
			return placement.Settings{}, fmt.Errorf("zk: write the placement settings: %w", err)
		}
	}
}

// settings reads the settings node: its settings and version (-1: it
// does not exist).
func (c *conn) settings(ctx context.Context) (placement.Settings, int32, error) {
	data, st, err := c.get(ctx, c.l.placement())
	if errors.Is(err, zk.ErrNoNode) {
		return DefaultSettings(), -1, nil
	}
	if err != nil {
		return DefaultSettings(), -1, fmt.Errorf("zk: read the placement settings: %w", err)
	}
	s, err := decodeSettings(data)
	if err != nil {
		return DefaultSettings(), st.Version, fmt.Errorf("zk: %s: %w", c.l.placement(), err)
	}
	return s, st.Version, nil
}
