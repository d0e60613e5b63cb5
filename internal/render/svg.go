package render

import (
	"strings"

	"github.com/batonwf/baton/draw"
	"github.com/batonwf/baton/job"
)

// SVG renders j as a standalone SVG image: package draw's layout with its
// default options (groups of more than 100 children closed, at most 2,000
// boxes), the drawing `baton inspect --format svg` prints and the server's
// graph route serves.
func SVG(j job.Job) (string, error) {
	g, err := draw.Layout(j, draw.Options{})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := g.SVG(&b); err != nil {
		return "", err
	}
	return b.String(), nil
}
