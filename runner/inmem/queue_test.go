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
	var got []string
	for len(q.segs) > 0 {
		a, _, ok := q.tryPop()
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

// TestQueueIncarnations: an action of a job made again under the same ID
// is not the action of the job before it, though its ID is the same. The
// old one may still be live (its result on its way to being applied) when
// the new job dispatches: the new one must be queued all the same, and
// the old one's result must let go of the old one only.
func TestQueueIncarnations(t *testing.T) {
	q := newQueue(func(job.ID) {})
	old := job.Action{JobID: "order-7", Incarnation: 1, ID: "seq[0]#1"}
	again := job.Action{JobID: "order-7", Incarnation: 2, ID: "seq[0]#1"}
	q.push([]job.Action{old}, nil, false)
	popAll(t, q)
	q.push([]job.Action{again}, nil, false) // old is still live
	if diff := cmp.Diff([]string{"seq[0]#1"}, popAll(t, q)); diff != "" {
		t.Fatalf("the job made again lost its first action (-want +got):\n%s", diff)
	}
	q.forgetResults([]inHand{{res: job.Result{JobID: "order-7", ActionID: "seq[0]#1"}, inc: 1}}, 0)
	if _, ok := q.live[keyOf(again)]; !ok {
		t.Error("the old job's result let go of the new job's action")
	}
	if _, ok := q.live[keyOf(old)]; ok {
		t.Error("the old job's action is still live after its result")
	}
	// A result that names no incarnation (Deliver) lets go of the action
	// of the job's incarnation it was applied to.
	q.forgetResults([]inHand{{res: job.Result{JobID: "order-7", ActionID: "seq[0]#1"}}}, 2)
	if q.holds("order-7") {
		t.Error("order-7 still held after the results of both incarnations")
	}
}
