package zk

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batonwf/baton/placement"
)

// The data of the registry's nodes (see the package doc, Placement): a
// worker's registration, its live node, and a quarantine. Each is JSON
// that zkCli shows as it is; each decoder refuses what a worker could not
// act on, wrapping errGarbled, and the registry then shows the worker as
// unreadable.

// errGarbled is wrapped by the error of a registry node that does not
// decode.
var errGarbled = errors.New("zk: garbled registry node")

// registration is the data of /<root>/workers/NAME: the worker's admin
// state and what it declared when it last registered.
type registration struct {
	State    string         `json:"state"` // "available" or "draining"
	Capacity int            `json:"capacity"`
	Limits   map[string]int `json:"limits,omitempty"`
	GraceMs  int64          `json:"grace_ms"`
	Actions  []string       `json:"actions"`
	Baton    string         `json:"baton,omitempty"` // the version of baton that registered it
	// DrainTimeoutMs, set by a drain with a timeout, is how long the
	// worker may drain before its pins are released: measured by the
	// worker from when it sees itself draining, on its own clock (no
	// time is compared across machines).
	DrainTimeoutMs int64 `json:"drain_timeout_ms,omitempty"`
}

// decodeRegistration reads a registration.
func decodeRegistration(data []byte) (registration, placement.State, error) {
	var g registration
	if err := json.Unmarshal(data, &g); err != nil {
		return g, placement.StateNone, fmt.Errorf("%w: %w", errGarbled, err)
	}
	st, err := placement.ParseState(g.State)
	switch {
	case err != nil:
		return g, placement.StateNone, fmt.Errorf("%w: %w", errGarbled, err)
	case g.Capacity <= 0:
		return g, placement.StateNone, fmt.Errorf("%w: capacity %d", errGarbled, g.Capacity)
	case g.GraceMs < 0 || g.DrainTimeoutMs < 0:
		return g, placement.StateNone, fmt.Errorf("%w: a negative grace or drain timeout", errGarbled)
	}
	for name, n := range g.Limits {
		if n <= 0 {
			return g, placement.StateNone, fmt.Errorf("%w: limit %s=%d", errGarbled, name, n)
		}
	}
	return g, st, nil
}

// worker returns the placement.Worker the registration describes (not
// live, no load): new maps and slices, never shared with g.
func (g registration) worker(name string, st placement.State) placement.Worker {
	acts := slices.Clone(g.Actions)
	slices.Sort(acts)
	return placement.Worker{Name: name, State: st, Capacity: g.Capacity, Limits: maps.Clone(g.Limits),
		Grace: ms(g.GraceMs), Actions: acts}
}

// liveNode is the data of /<root>/workers/NAME/live: which process runs
// the worker, and its published load.
type liveNode struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Load    liveLoad  `json:"load"`
}

// liveLoad is a worker's published load (placement.Load).
type liveLoad struct {
	Running int                 `json:"running"`
	Names   map[string]nameLoad `json:"names,omitempty"`
}

type nameLoad struct {
	Running   int    `json:"running"`
	Succeeded uint64 `json:"succeeded"`
	Failed    uint64 `json:"failed"`
}

// decodeLive reads a live node. An empty one (a process that had not
// written its load yet) is a live worker with no load.
func decodeLive(data []byte) (liveNode, error) {
	var n liveNode
	if len(data) == 0 {
		return n, nil
	}
	if err := json.Unmarshal(data, &n); err != nil {
		return n, fmt.Errorf("%w: %w", errGarbled, err)
	}
	return n, nil
}

// load converts a published load (new maps).
func (l liveLoad) load() placement.Load {
	out := placement.Load{Running: l.Running}
	if len(l.Names) > 0 {
		out.Names = make(map[string]placement.NameLoad, len(l.Names))
		for name, n := range l.Names {
			out.Names[name] = placement.NameLoad{Running: n.Running, Succeeded: n.Succeeded, Failed: n.Failed}
		}
	}
	return out
}

// publishedLoad converts a load to what a live node holds.
func publishedLoad(l placement.Load) liveLoad {
	out := liveLoad{Running: l.Running}
	if len(l.Names) > 0 {
		out.Names = make(map[string]nameLoad, len(l.Names))
		for name, n := range l.Names {
			out.Names[name] = nameLoad{Running: n.Running, Succeeded: n.Succeeded, Failed: n.Failed}
		}
	}
	return out
}

// quarantineData is the data of /<root>/quarantine/ACTION/NAME: how long
// the quarantine had left when it was written, and the strikes it is.
type quarantineData struct {
	UntilMsLeft int64 `json:"until_ms_left"`
	Strikes     int   `json:"strikes"`
}

func decodeQuarantine(data []byte) (quarantineData, error) {
	var q quarantineData
	if err := json.Unmarshal(data, &q); err != nil {
		return q, fmt.Errorf("%w: %w", errGarbled, err)
	}
	if q.UntilMsLeft < 0 {
		return q, fmt.Errorf("%w: until_ms_left %d", errGarbled, q.UntilMsLeft)
	}
	return q, nil
}

// allocData is the data of /<root>/alloc/XX/ID: a pin's allocation.
type allocData struct {
	Key    string    `json:"key"`
	Worker string    `json:"worker"`
	Job    string    `json:"job,omitempty"`
	Since  time.Time `json:"since"`
}

// decodeAlloc reads an allocation; a garbled one counts as absent.
func decodeAlloc(data []byte) (allocData, error) {
	var a allocData
	if err := json.Unmarshal(data, &a); err != nil {
		return a, fmt.Errorf("%w: %w", errGarbled, err)
	}
	if a.Worker == "" {
		return a, fmt.Errorf("%w: an allocation without a worker", errGarbled)
	}
	return a, nil
}

func jsonMarshal(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("zk: encode %T: %w", v, err)
	}
	return data, nil
}

// parseCount reads a quarantine count node's data: a decimal number.
func parseCount(data []byte) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	return n, err == nil
}
