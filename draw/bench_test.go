package draw_test

import (
	"io"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/draw"
)

// BenchmarkLayout100000 draws a par of 100,000 actions, closed and with
// its root asked open (which the bound on boxes refuses), and reports the
// boxes drawn beside ns/op.
func BenchmarkLayout100000(b *testing.B) {
	j := fresh(b, "big", ast.Par(wide(100000)...))
	for _, c := range []struct {
		name string
		o    draw.Options
	}{
		{"closed", draw.Options{}},
		{"expanded", draw.Options{Expand: map[string]bool{"": true}}},
		{"groupOver100000", draw.Options{GroupOver: 100000}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			boxes := 0
			for b.Loop() {
				g, err := draw.Layout(j, c.o)
				if err != nil {
					b.Fatal(err)
				}
				if err := g.SVG(io.Discard); err != nil {
					b.Fatal(err)
				}
				boxes = len(g.Boxes)
			}
			b.ReportMetric(float64(boxes), "boxes")
		})
	}
}

// BenchmarkLayoutWide draws 1,000 actions as a par of 10 seqs of 100: all
// drawn.
func BenchmarkLayoutWide(b *testing.B) {
	seqs := make([]ast.Node, 10)
	for i := range seqs {
		seqs[i] = ast.Seq(wide(100)...)
	}
	j := play(b, "wide", ast.Par(seqs...))
	b.ReportAllocs()
	boxes := 0
	for b.Loop() {
		g, err := draw.Layout(j, draw.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := g.SVG(io.Discard); err != nil {
			b.Fatal(err)
		}
		boxes = len(g.Boxes)
	}
	b.ReportMetric(float64(boxes), "boxes")
}
