package inmem

import (
	"testing"

	"github.com/batonwf/baton/job"
	"github.com/google/go-cmp/cmp"
)

func acts(ids ...string) []job.Action {
	out := make([]job.Action, len(ids))
	for i, id := range ids {
		out[i] = job.Action{JobID: "j", ID: id, Name: "n"}
	}
	return out
}

func popAll(t *testing.T, q *queue) []string {
	t.Helper()
	stop := make(chan struct{})
	close(stop)
	var got []string
	for len(q.segs) > 0 {
		a, ok := q.pop(stop)
		if !ok {
			t.Fatal("pop found nothing though segments are queued")
		}
		got = append(got, a.ID)
	}
	return got
}

// TestQueueOrderAndGaps pushes steps whose actions are partly live already
// (a redelivery in the middle of a step, a kept action first): the queue
// hands out exactly the new ones, oldest push first, in order, and never
// writes into the slices it was given.
func TestQueueOrderAndGaps(t *testing.T) {
	q := newQueue(func(job.ID) {})
	q.push(acts("1", "3"), nil, false) // 1 and 3 live from now on
	step := acts("0", "1", "2", "3", "4")
	before := append([]job.Action(nil), step...)
	q.push(step, nil, false)
	var keep slot
	q.push(acts("5", "6"), &keep, false) // others wait: 5 takes its turn
	if keep.full {
		t.Errorf("the slot took %s while other actions waited", keep.next.ID)
	}
	got := popAll(t, q)
	want := []string{"1", "3", "0", "2", "4", "5", "6"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("popped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, step); diff != "" {
		t.Errorf("push changed its caller's slice (-before +after):\n%s", diff)
	}

	// Nothing waits now: the first new action goes to the slot, the rest
	// to the queue.
	q.push(acts("7", "8", "9"), &keep, false)
	if !keep.full || keep.next.ID != "7" {
		t.Errorf("slot = %+v, want action 7", keep)
	}
	if diff := cmp.Diff([]string{"8", "9"}, popAll(t, q)); diff != "" {
		t.Errorf("popped after the slot (-want +got):\n%s", diff)
	}

	// Again: a live at-most-once action is skipped, one not live is lost.
	q.push([]job.Action{{JobID: "j", ID: "10", AtMostOnce: true}}, nil, false)
	lost := q.push([]job.Action{{JobID: "j", ID: "10", AtMostOnce: true}, {JobID: "j", ID: "11", AtMostOnce: true}, {JobID: "j", ID: "12"}}, nil, true)
	if len(lost) != 1 || lost[0].ID != "11" {
		t.Errorf("lost = %v, want action 11 only", lost)
	}
	if diff := cmp.Diff([]string{"10", "12"}, popAll(t, q)); diff != "" {
		t.Errorf("popped after a redispatch (-want +got):\n%s", diff)
	}
}
