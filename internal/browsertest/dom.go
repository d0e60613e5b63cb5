package browsertest

import (
	"fmt"
	"sort"
	"strings"
)

// Statuses returns the data-status of every element under scope (a CSS
// selector; "" for the whole document) that carries both data-path and
// data-status, keyed by data-path. Two elements with the same path and
// different statuses fail the test: a page shows one state per node.
func (p *Page) Statuses(scope string) map[string]string {
	p.t.Helper()
	type found struct {
		Status map[string]string `json:"status"`
		Clash  []string          `json:"clash"`
	}
	f := Eval[found](p, `(() => {
		const root = `+scopeJS(scope)+`;
		const status = {}, clash = [];
		if (root) for (const e of root.querySelectorAll('[data-path][data-status]')) {
			const path = e.getAttribute('data-path'), s = e.getAttribute('data-status');
			if (path in status && status[path] !== s) clash.push(path + ': ' + status[path] + ' and ' + s);
			status[path] = s;
		}
		return {status, clash};
	})()`)
	if len(f.Clash) > 0 {
		p.t.Errorf("browsertest: one path, two states under %q: %s", scope, strings.Join(f.Clash, "; "))
	}
	if f.Status == nil {
		f.Status = map[string]string{}
	}
	return f.Status
}

func scopeJS(scope string) string {
	if scope == "" {
		return "document"
	}
	return "document.querySelector(" + jsString(scope) + ")"
}

// Rect is an element's box in the page (CSS pixels, from
// getBoundingClientRect, relative to the viewport) with the data-path of
// the element or of its nearest ancestor that has one.
type Rect struct {
	Path string  `json:"path"`
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	W    float64 `json:"w"`
	H    float64 `json:"h"`
}

func (r Rect) String() string {
	return fmt.Sprintf("%q at (%.1f,%.1f) %.1fx%.1f", r.Path, r.X, r.Y, r.W, r.H)
}

// Overlaps reports whether r and o share more than a sliver (eps CSS
// pixels each way: anti-aliased strokes may touch).
func (r Rect) Overlaps(o Rect, eps float64) bool {
	return r.X+eps < o.X+o.W && o.X+eps < r.X+r.W && r.Y+eps < o.Y+o.H && o.Y+eps < r.Y+r.H
}

// Inside reports whether r lies within o, give or take eps CSS pixels.
func (r Rect) Inside(o Rect, eps float64) bool {
	return r.X >= o.X-eps && r.Y >= o.Y-eps && r.X+r.W <= o.X+o.W+eps && r.Y+r.H <= o.Y+o.H+eps
}

// Rects returns the bounding box of every element matching selector, in
// document order.
func (p *Page) Rects(selector string) []Rect {
	p.t.Helper()
	return Eval[[]Rect](p, `Array.from(document.querySelectorAll(`+jsString(selector)+`), e => {
		const r = e.getBoundingClientRect(), owner = e.closest('[data-path]');
		return {path: owner ? owner.getAttribute('data-path') : '', x: r.x, y: r.y, w: r.width, h: r.height};
	})`)
}

// RectsTogether returns Rects of each selector, all measured in one
// evaluation, so that no layout change (a line the page adds above them)
// falls between the measures of one selector and the next.
func (p *Page) RectsTogether(selectors ...string) [][]Rect {
	p.t.Helper()
	list := make([]string, len(selectors))
	for i, sel := range selectors {
		list[i] = jsString(sel)
	}
	return Eval[[][]Rect](p, `[`+strings.Join(list, ",")+`].map(sel => Array.from(document.querySelectorAll(sel), e => {
		const r = e.getBoundingClientRect(), owner = e.closest('[data-path]');
		return {path: owner ? owner.getAttribute('data-path') : '', x: r.x, y: r.y, w: r.width, h: r.height};
	}))`)
}

// Overlapping returns the pairs of rs that overlap (see Rect.Overlaps),
// each as "a and b", sorted.
func Overlapping(rs []Rect, eps float64) []string {
	var out []string
	for i := range rs {
		for j := i + 1; j < len(rs); j++ {
			if rs[i].Overlaps(rs[j], eps) {
				out = append(out, rs[i].String()+" and "+rs[j].String())
			}
		}
	}
	sort.Strings(out)
	return out
}
