package draw_test

import (
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/draw"
	"github.com/batonwf/baton/job"
)

// TestDrawErrors: a zero job and negative options are errors that say
// what is wrong, never a drawing or a panic.
func TestDrawErrors(t *testing.T) {
	j := fresh(t, "e", ast.Act("log", nil))
	for _, c := range []struct {
		j    job.Job
		o    draw.Options
		want string
	}{
		{job.Job{}, draw.Options{}, "draw: a zero job"},
		{j, draw.Options{GroupOver: -1}, "draw: negative options: GroupOver -1"},
		{j, draw.Options{MaxBoxes: -5}, "MaxBoxes -5"},
	} {
		g, err := draw.Layout(c.j, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) || g != nil {
			t.Errorf("Layout(%v, %+v) = %v, %v; want an error with %q", c.j, c.o, g, err, c.want)
		}
	}
}
