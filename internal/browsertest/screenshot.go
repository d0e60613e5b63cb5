package browsertest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"

	"github.com/chromedp/chromedp"
)

// Screenshot takes a PNG screenshot, of the whole page when selector is ""
// or of the first element matching it (scrolled into view), saves it as
// name.png in the test's temporary directory and returns the decoded image
// and the file's path. When the test fails, the page keeps the file and
// prints its path (see Close).
func (p *Page) Screenshot(name, selector string) (image.Image, string) {
	p.t.Helper()
	ctx, cancel := p.Bound()
	defer cancel()
	var b []byte
	var err error
	if selector == "" {
		b, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	} else {
		b, err = chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(selector)))
	}
	if err != nil {
		p.t.Fatalf("browsertest: screenshot %s of %q: %v", name, selector, err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		p.t.Fatalf("browsertest: screenshot %s: not a PNG: %v", name, err)
	}
	path, err := p.save(name, b)
	if err != nil {
		p.t.Fatalf("browsertest: screenshot %s: %v", name, err)
	}
	p.mu.Lock()
	p.shots = append(p.shots, path)
	p.mu.Unlock()
	return img, path
}

// save writes a PNG into the test's temporary directory under a name not
// yet used.
func (p *Page) save(name string, b []byte) (string, error) {
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' {
			return '_'
		}
		return r
	}, name)
	path := filepath.Join(p.dir, name+".png")
	for i := 2; ; i++ {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			break
		}
		path = filepath.Join(p.dir, fmt.Sprintf("%s-%d.png", name, i))
	}
	return path, os.WriteFile(path, b, 0o644)
}

// Hex parses "#RRGGBB" (the palette's notation) into an opaque colour. It
// panics on anything else: the colours are constants of the caller.
func Hex(s string) color.RGBA {
	var c color.RGBA
	if n, err := fmt.Sscanf(s, "#%02x%02x%02x", &c.R, &c.G, &c.B); n != 3 || err != nil || len(s) != 7 {
		panic("browsertest: not a #RRGGBB colour: " + s)
	}
	c.A = 0xff
	return c
}

// CountColors counts, for each of colours, the pixels of img within tol of
// it on every channel (red, green and blue, 8 bits each). A pixel near two
// of the colours counts for each.
func CountColors(img image.Image, tol int, colours ...color.RGBA) []int {
	counts := make([]int, len(colours))
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			for i, c := range colours {
				if near(r>>8, c.R, tol) && near(g>>8, c.G, tol) && near(b>>8, c.B, tol) {
					counts[i]++
				}
			}
		}
	}
	return counts
}

// CountSolid is CountColors counting only the pixels whose eight
// neighbours are near the same colour too: the inside of filled shapes,
// without the anti-aliased edges of text and lines (which pass through
// greys and blends that may lie near a colour of the palette).
func CountSolid(img image.Image, tol int, colours ...color.RGBA) []int {
	counts := make([]int, len(colours))
	b := img.Bounds()
	for i, c := range colours {
		match := func(x, y int) bool {
			r, g, bl, _ := img.At(x, y).RGBA()
			return near(r>>8, c.R, tol) && near(g>>8, c.G, tol) && near(bl>>8, c.B, tol)
		}
		for y := b.Min.Y + 1; y < b.Max.Y-1; y++ {
		pixels:
			for x := b.Min.X + 1; x < b.Max.X-1; x++ {
				for dy := -1; dy <= 1; dy++ {
					for dx := -1; dx <= 1; dx++ {
						if !match(x+dx, y+dy) {
							continue pixels
						}
					}
				}
				counts[i]++
			}
		}
	}
	return counts
}

func near(v uint32, want uint8, tol int) bool {
	d := int(v) - int(want)
	return -tol <= d && d <= tol
}
