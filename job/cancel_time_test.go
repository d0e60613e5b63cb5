package job_test

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestCancelTime: the job keeps the time stamped on the cancel that
// applied beside its reason, through Encode and Decode (format 7); a
// second cancel changes neither; a cancel with no time, and a job stored
// before jobs kept it (format 4), have none.
func TestCancelTime(t *testing.T) {
	tr, err := job.New("c-1", ast.Try(ast.Act("pack", 1), ast.Finally(ast.Act("release", 1))))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 7, 30, 0, 123, time.UTC)
	res := job.CancelResult("c-1", "the parcel was lost")
	res.At = at
	c, err := job.Restart(tr.Job, []job.Result{res})
	if err != nil || !c.Changed() {
		t.Fatalf("cancel: %+v, %v", c, err)
	}
	if got, ok := c.Job.CancelTime(); !ok || !got.Equal(at) || got.Location() != time.UTC {
		t.Fatalf("CancelTime() = %v, %v; want %v", got, ok, at)
	}
	enc, err := job.Encode(c.Job)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(enc, []byte(`{"format":7,`)) || !bytes.Contains(enc, []byte(`"cancel_at":`)) {
		t.Errorf("encoded: %s", enc)
	}
	back, err := job.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := back.CancelTime(); !ok || !got.Equal(at) {
		t.Errorf("decoded CancelTime() = %v, %v; want %v", got, ok, at)
	}
	again := job.CancelResult("c-1", "twice")
	again.At = at.Add(time.Hour)
	tr2, err := job.Restart(back, []job.Result{again})
	if err != nil || tr2.Changed() {
		t.Fatalf("second cancel: changed %v, %v", tr2.Changed(), err)
	}
	if got, _ := tr2.Job.CancelTime(); !got.Equal(at) {
		t.Errorf("after a second cancel: %v, want %v", got, at)
	}

	plain, err := job.Cancel(tr.Job, "no time")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := plain.Job.CancelTime(); ok {
		t.Errorf("a cancel with no time: CancelTime() = %v", got)
	}
	if enc, _ := job.Encode(plain.Job); !bytes.HasPrefix(enc, []byte(`{"format":4,`)) {
		t.Errorf("a cancel with no time encodes as %.20s, want format 4", enc)
	}
	old, err := os.ReadFile("testdata/golden/f4-cancelled.json")
	if err != nil {
		t.Fatal(err)
	}
	oj, err := job.Decode(old)
	if err != nil {
		t.Fatal(err)
	}
	if why, ok := oj.Cancelled(); !ok || why == "" {
		t.Fatalf("f4-cancelled: not cancelled")
	}
	if got, ok := oj.CancelTime(); ok {
		t.Errorf("f4-cancelled: CancelTime() = %v, want none", got)
	}
	for _, bad := range []string{
		`{"format":6,"id":"x","version":2,"cancel":"r","cancel_at":5,"workflow":{"act":"a"},"nodes":[],"results":[]}`,
		`{"format":7,"id":"x","version":2,"cancel_at":5,"workflow":{"act":"a"},"nodes":[],"results":[]}`,
	} {
		if _, err := job.Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s) = nil error", bad)
		}
	}
}
