package job_test

import (
	"strings"
	"testing"

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
