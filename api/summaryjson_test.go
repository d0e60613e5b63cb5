package api_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/batonwf/baton/api"
)

// AppendJSON writes what encoding/json writes, byte for byte, for every
// summary: plain ones by itself, the others through encoding/json.
func TestSummaryAppendJSON(t *testing.T) {
	text := rapid.OneOf(rapid.SampledFrom([]string{"", "j-1", "running", "seq[0].par[2]", "a<b>&c", `q"uote\`, "tab\there", "\u2028", "é", "\xff", "nul\x00"}),
		rapid.StringMatching(`[ -~]{0,12}`), rapid.String())
	zones := []*time.Location{time.UTC, time.FixedZone("x", 3600), time.FixedZone("s", 30), time.Local}
	tm := rapid.Custom(func(t *rapid.T) *time.Time {
		if rapid.Bool().Draw(t, "nil") {
			return nil
		}
		at := time.Unix(rapid.Int64Range(-70000000000, 300000000000).Draw(t, "s"), rapid.Int64Range(0, 999999999).Draw(t, "ns"))
		at = at.In(rapid.SampledFrom(zones).Draw(t, "zone"))
		return &at
	})
	rapid.Check(t, func(t *rapid.T) {
		s := api.Summary{ID: text.Draw(t, "id"), Status: text.Draw(t, "status"), Version: rapid.Uint64().Draw(t, "version"),
			Settled: rapid.Int().Draw(t, "settled"), Total: rapid.Int().Draw(t, "total"),
			Created: tm.Draw(t, "created"), Updated: tm.Draw(t, "updated"), Damaged: text.Draw(t, "damaged")}
		if rapid.Bool().Draw(t, "outstanding") {
			n := rapid.Int().Draw(t, "n")
			s.Outstanding = &n
		}
		if rapid.Bool().Draw(t, "failure") {
			s.Failure = &api.Failure{Path: text.Draw(t, "path"), Action: text.Draw(t, "action"), Kind: text.Draw(t, "kind"),
				Message: text.Draw(t, "message"), Clipped: rapid.Bool().Draw(t, "clipped"), Others: rapid.Int().Draw(t, "others")}
		}
		if rapid.Bool().Draw(t, "cancel") {
			s.Cancel = &api.Cancel{Reason: text.Draw(t, "reason"), Time: tm.Draw(t, "at")}
		}
		want, wantErr := json.Marshal(s)
		got, err := s.AppendJSON([]byte("x"))
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("AppendJSON: %v; json.Marshal: %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("AppendJSON:\n%s\njson.Marshal:\n%s", got[1:], want)
		}
	})
}
