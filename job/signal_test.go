package job_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestSignalCheck: bad signals are refused by Check, naming what is wrong,
// and ignored as unknown by Restart.
func TestSignalCheck(t *testing.T) {
	for _, tc := range []struct {
		s    job.Signal
		want string
	}{
		{job.Signal{Name: "bad name", ID: "1"}, `signal name "bad name" has ' '`},
		{job.Signal{Name: "", ID: "1"}, "signal name"},
		{job.Signal{Name: "ok", ID: ""}, "ID"},
		{job.Signal{Name: "ok", ID: "a\nb"}, "printable"},
		{job.Signal{Name: "ok", ID: strings.Repeat("x", job.MaxSignalIDLen+1)}, "ID"},
		{job.Signal{Name: "ok", ID: "1", Payload: []byte("{")}, "not JSON"},
		{job.Signal{Name: "ok", ID: "1", Payload: []byte(`"` + strings.Repeat("x", job.MaxSignalPayload) + `"`)}, "over the limit"},
	} {
		err := tc.s.Check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+.40v: Check = %v, want an error with %q", tc.s, err, tc.want)
		}
	}
	if err := (job.Signal{Name: "ok", ID: "1", Payload: []byte(`{"a":1}`)}).Check(); err != nil {
		t.Errorf("a good signal: %v", err)
	}
}

// TestSignalNamesAndSeen: SignalNames lists every wait's signal, those of
// a map's template and of a loop's body included, before and after the
// map starts; SignalSeen tells a signal applied (taken or kept) from one
// that was not, after the job finished too.
func TestSignalNamesAndSeen(t *testing.T) {
	root := ast.Seq(
		ast.Act("list", nil).Named("xs"),
		ast.Map("xs", ast.Wait("each")),
		ast.Loop(ast.Seq(ast.Wait("more"), ast.Act("check", nil).Named("done")), "done", true, 3),
		ast.Race(ast.Wait("approval"), ast.Sleep(time.Hour)),
	)
	tr, err := job.New("names", root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"approval", "each", "more"}
	if got := tr.Job.SignalNames(); !slices.Equal(got, want) {
		t.Fatalf("SignalNames = %q, want %q", got, want)
	}
	if len(tr.Actions) != 1 {
		t.Fatalf("dispatched %d actions, want the list's", len(tr.Actions))
	}
	tr, err = job.Restart(tr.Job, []job.Result{tr.Actions[0].Succeed([]byte(`[1,2]`))})
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.Job.SignalNames(); !slices.Equal(got, want) {
		t.Errorf("SignalNames with the map's copies = %q, want %q", got, want)
	}
	if j := tr.Job; j.SignalSeen("each", "s1") || j.SignalSeen("more", "s1") {
		t.Fatal("a signal seen before any was sent")
	}
	for _, s := range []job.Signal{{Name: "each", ID: "s1"}, {Name: "more", ID: "k1"}} {
		if tr, err = job.Restart(tr.Job, []job.Result{job.SignalResult("names", s)}); err != nil {
			t.Fatal(err)
		}
	}
	j := tr.Job
	if kept, taken := j.Signals(); len(kept) != 1 || len(taken) != 1 {
		t.Fatalf("kept %+v, taken %+v: want more/k1 kept, each/s1 taken", kept, taken)
	}
	for _, c := range []struct {
		name, id string
		want     bool
	}{{"each", "s1", true}, {"more", "k1", true}, {"each", "s2", false}, {"more", "s1", false}, {"approval", "k1", false}} {
		if got := j.SignalSeen(c.name, c.id); got != c.want {
			t.Errorf("SignalSeen(%s, %s) = %v, want %v", c.name, c.id, got, c.want)
		}
	}
	done, err := job.Restart(j, []job.Result{job.CancelResult("names", "enough")})
	if err != nil || !done.Job.Done() {
		t.Fatalf("cancel: %v (done %v)", err, done.Job.Done())
	}
	if !done.Job.SignalSeen("each", "s1") || done.Job.SignalSeen("each", "s2") {
		t.Error("SignalSeen changed as the job finished")
	}
}
