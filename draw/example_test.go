package draw_test

import (
	"fmt"
	"strings"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/draw"
	"github.com/batonwf/baton/job"
)

// A job's tree laid out before anything ran: every node is a box, and
// the SVG names each by its path and state.
func ExampleLayout() {
	tr, err := job.New("order-7", ast.Seq(
		ast.Act("charge", map[string]int{"cents": 1250}),
		ast.Par(ast.Act("ship", nil), ast.Act("mail", nil)),
	))
	if err != nil {
		panic(err)
	}
	g, err := draw.Layout(tr.Job, draw.Options{})
	if err != nil {
		panic(err)
	}
	for _, b := range g.Boxes {
		fmt.Printf("%-8s %-4s %-7s %-18s at %d,%d\n", ast.ShowPath(b.Path), b.Kind, b.Status, b.Payload, b.X, b.Y)
	}
	var svg strings.Builder
	if err := g.SVG(&svg); err != nil {
		panic(err)
	}
	fmt.Println(strings.Count(svg.String(), `<g class="node" data-path=`), "nodes in the SVG")
	// Output:
	// root     seq  running                    at 16,56
	// seq[0]   act  running {"cents":1250}     at 48,136
	// seq[1]   par  idle                       at 368,136
	// seq[1].par[0] act  idle                       at 400,216
	// seq[1].par[1] act  idle                       at 400,296
	// 5 nodes in the SVG
}
