package draw_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batonwf/baton/draw"
	"github.com/batonwf/baton/internal/browsertest"
	"github.com/batonwf/baton/internal/render"
)

// TestMain closes the browser the tests share when they are done.
func TestMain(m *testing.M) { browsertest.Main(m) }

// TestSVGInBrowser opens the drawing of every golden job (a job of every
// kind, hostile strings, groups, 100,000 actions) in chromium, served as
// image/svg+xml, the way `baton inspect --format svg > f.svg` is opened:
// every node's box is where the layout put it, inside the drawing and
// apart from the others, with the node's state; no script runs and nothing
// is fetched.
func TestSVGInBrowser(t *testing.T) {
	drawings := map[string][]byte{}
	layouts := map[string]*draw.Graph{}
	for _, c := range goldens {
		j := c.job(t)
		g, err := draw.Layout(j, c.o)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if c.o.Expand == nil {
			// Default options: exactly what baton inspect --format svg prints.
			s, err := render.SVG(j)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString(s)
		} else if err := g.SVG(&b); err != nil {
			t.Fatal(err)
		}
		drawings[c.name], layouts[c.name] = b.Bytes(), g
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := drawings[strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), ".svg")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)

	for _, c := range goldens {
		t.Run(c.name, func(t *testing.T) {
			g := layouts[c.name]
			p := browsertest.NewPage(t)
			url := srv.URL + "/" + c.name + ".svg"
			p.Navigate(url)
			p.Wait(`document.readyState === 'complete' && document.documentElement.localName === 'svg'`)

			drawing := p.Rects(":root")[0]
			if drawing.W != float64(g.Width) || drawing.H != float64(g.Height) {
				t.Errorf("the drawing is %.1fx%.1f in the browser; the layout's %dx%d", drawing.W, drawing.H, g.Width, g.Height)
			}
			boxes := p.Rects("g.node > rect.box")
			if len(boxes) != len(g.Boxes) {
				t.Fatalf("%d node boxes in the browser; the layout has %d", len(boxes), len(g.Boxes))
			}
			for i, r := range boxes {
				b := g.Boxes[i]
				if r.Path != b.Path || r.X-drawing.X != float64(b.X) || r.Y-drawing.Y != float64(b.Y) || r.W != float64(b.W) || r.H != float64(b.H) {
					t.Errorf("box %d in the browser: %v; the layout's %q at (%d,%d) %dx%d", i, r, b.Path, b.X, b.Y, b.W, b.H)
				}
				if !r.Inside(drawing, 0) {
					t.Errorf("box %v is outside the drawing %v", r, drawing)
				}
			}
			if o := browsertest.Overlapping(boxes, 0); len(o) > 0 {
				t.Errorf("%d pairs of boxes overlap, first %s", len(o), o[0])
			}
			statuses := p.Statuses("")
			for _, b := range g.Boxes {
				if got := statuses[b.Path]; got != b.Status.String() {
					t.Errorf("box %q shows data-status %q; the layout's %s", b.Path, got, b.Status)
				}
			}
			for _, u := range p.Requests() {
				if u != url && u != srv.URL+"/favicon.ico" { // the browser asks for the icon of a new origin itself
					t.Errorf("the drawing requested %s (it must be self-contained)", u)
				}
			}
			if c.name == "hostile" {
				title := browsertest.Eval[string](p, `document.querySelector('text.title').textContent`)
				if !strings.Contains(title, `<script>"&'`) {
					t.Errorf("the title shows %q; want the job ID as text", title)
				}
				if n := browsertest.Eval[int](p, `document.querySelectorAll('script, img, foreignObject').length`); n != 0 {
					t.Errorf("%d script, img or foreignObject elements in the drawing; want none", n)
				}
			}
			if t.Failed() {
				p.Screenshot(c.name, "")
			}
		})
	}
}
