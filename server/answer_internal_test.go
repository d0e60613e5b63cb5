package server

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
)

// encodeAnswer writes what json.Encoder writes, for the summaries and
// jobs it writes itself and the values it hands to encoding/json.
func TestEncodeAnswer(t *testing.T) {
	at := time.Date(2026, 11, 26, 15, 4, 5, 60, time.UTC)
	n := 2
	sum := api.Summary{ID: "j-1", Status: "failed", Version: 3, Settled: 1, Total: 4, Outstanding: &n, Created: &at, Updated: &at,
		Failure: &api.Failure{Path: "seq[1]", Action: "charge", Message: "card <declined>", Others: 1}, Cancel: &api.Cancel{Reason: "stop", Time: &at}}
	for _, v := range []any{
		sum,
		api.Summary{ID: "j-2", Status: "running"},
		api.Job{Summary: sum},
		api.Job{Summary: sum, Nodes: []api.Node{{Path: "", Kind: "act"}}},
		api.Job{Summary: sum, Timers: []api.Timer{{ID: "@deadline", Due: at}}},
		map[string]int{"a": 1},
	} {
		var want, got bytes.Buffer
		if err := json.NewEncoder(&want).Encode(v); err != nil {
			t.Fatal(err)
		}
		got.WriteString("old answer")
		got.Reset()
		if err := encodeAnswer(&got, v); err != nil || got.String() != want.String() {
			t.Errorf("encodeAnswer(%+v) = %s, %v; want %s", v, got.String(), err, want.String())
		}
	}
}
