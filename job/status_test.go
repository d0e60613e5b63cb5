package job_test

import (
	"strings"
	"testing"

	"github.com/batonwf/baton/job"
)

// TestParseStatus: ParseStatus reads back every status's String, and
// refuses anything else, naming it.
func TestParseStatus(t *testing.T) {
	for s := job.StatusIdle; s <= job.StatusCancelled; s++ {
		got, err := job.ParseStatus(s.String())
		if err != nil || got != s {
			t.Errorf("ParseStatus(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
	}
	for _, bad := range []string{"", "Running", "done", "Status(9)", " failed"} {
		if _, err := job.ParseStatus(bad); err == nil || !strings.Contains(err.Error(), `"`+bad+`"`) {
			t.Errorf("ParseStatus(%q): %v, want an error naming it", bad, err)
		}
	}
}
