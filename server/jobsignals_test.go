package server_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/client"
)

// choiceWaitFlow chooses on a leaf's output, then waits for go while a
// signal for the wait to come after it is kept.
const choiceWaitFlow = `{"version":3,"root":{"seq":[
 {"act":"echo","payload":"silver","name":"tier"},
 {"choice":{"on":"tier","cases":[{"when":"gold","do":{"act":"log","payload":"gold path"}}],"else":{"act":"log","payload":"other"}}},
 {"wait":"go"},
 {"wait":"later"}]}}`

// TestJobSignalsAndChoice: the job route (checked against the OpenAPI
// document) lists the signals the job keeps and those its waits took,
// names a wait's signal, and says what a choice read and chose.
func TestJobSignalsAndChoice(t *testing.T) {
	e := newPageEnv(t, nil)
	ctx := t.Context()
	e.waitRunning(t, "c", choiceWaitFlow, "seq[2]")
	if _, err := e.client.Signal(ctx, "c", "later", "l1", json.RawMessage(`"early"`)); err != nil {
		t.Fatal(err)
	}
	var j api.Job
	for {
		var err error
		if j, err = e.client.Job(ctx, "c", client.JobQuery{}); err != nil {
			t.Fatal(err)
		}
		if j.Signals != nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the signal never applied: %+v", j)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if k := j.Signals.Kept; len(k) != 1 || k[0].Name != "later" || k[0].ID != "l1" || k[0].Payload != `"early"` || k[0].At == nil || len(j.Signals.Taken) != 0 {
		t.Errorf("kept: %+v", j.Signals)
	}
	byPath := map[string]api.Node{}
	for _, n := range j.Nodes {
		byPath[n.Path] = n
	}
	if c := byPath["seq[1]"].Choice; !reflect.DeepEqual(c, &api.Chosen{On: "tier", Read: `"silver"`, Else: true}) {
		t.Errorf("the choice: %+v", c)
	}
	if byPath["seq[2]"].Signal != "go" || byPath["seq[3]"].Signal != "later" {
		t.Errorf("the waits: %+v, %+v", byPath["seq[2]"], byPath["seq[3]"])
	}
	if _, err := e.client.Signal(ctx, "c", "go", "g1", nil); err != nil {
		t.Fatal(err)
	}
	if s, err := e.client.Wait(ctx, "c"); err != nil || s.Status != "succeeded" {
		t.Fatalf("the job: %+v, %v", s, err)
	}
	j, err := e.client.Job(ctx, "c", client.JobQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := &api.Signals{Taken: []api.TakenSignal{{Name: "go", ID: "g1", Path: "seq[2]"}, {Name: "later", ID: "l1", Path: "seq[3]"}}}
	if !reflect.DeepEqual(j.Signals, want) {
		t.Errorf("signals at the end: %+v, want %+v", j.Signals, want)
	}
}
