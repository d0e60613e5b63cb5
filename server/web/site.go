package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"time"
)

// CSP is the Content-Security-Policy of every page: scripts, styles and
// everything else from the server itself, no inline script or style, no
// framing.
const CSP = "default-src 'self'; frame-ancestors 'none'"

//go:embed templates/*.html
var templateFS embed.FS

// Page is what every page's template reads besides its own view.
type Page struct {
	// Name is the page ("list", "job", "signals", "new", "workers",
	// "login", "error"); it is the body's data-page.
	Name  string
	Title string
	// Write says the visitor may submit and cancel (a write scope, or a
	// server without tokens).
	Write bool
	// Session says the visitor came with the session cookie: the page
	// offers to log out.
	Session bool
}

// Site renders the pages. Make it with NewSite; it is safe for
// concurrent use.
type Site struct {
	pages map[string]*template.Template
}

// pageNames are the pages, each a template file that defines "main" and
// is parsed with layout.html and kept.html (the kept signals' list, which
// two pages share).
var pageNames = []string{"list", "job", "signals", "new", "workers", "login", "error"}

// NewSite parses the embedded templates. It fails only if they are
// broken, which the package's tests rule out.
func NewSite() (*Site, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/kept.html")
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	s := &Site{pages: map[string]*template.Template{}}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web: page %s: %w", name, err)
		}
		s.pages[name] = t
	}
	return s, nil
}

// render executes page's template with v into a buffer, then writes it
// to w in one write: a template error leaves w untouched.
func (s *Site) render(w io.Writer, page string, v any) error {
	var b bytes.Buffer
	if err := s.pages[page].ExecuteTemplate(&b, "layout.html", v); err != nil {
		return fmt.Errorf("web: page %s: %w", page, err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// List writes the job list.
func (s *Site) List(w io.Writer, v ListView) error { v.Name = "list"; return s.render(w, "list", v) }

// Job writes a job's page.
func (s *Site) Job(w io.Writer, v JobView) error { v.Name = "job"; return s.render(w, "job", v) }

// Signals writes the page of a job's kept signals.
func (s *Site) Signals(w io.Writer, v SignalsView) error {
	v.Name = "signals"
	return s.render(w, "signals", v)
}

// New writes the page that validates and submits a workflow.
func (s *Site) New(w io.Writer, v NewView) error { v.Name = "new"; return s.render(w, "new", v) }

// Workers writes the workers' page.
func (s *Site) Workers(w io.Writer, v WorkersView) error {
	v.Name = "workers"
	return s.render(w, "workers", v)
}

// Login writes the login page.
func (s *Site) Login(w io.Writer, v LoginView) error {
	v.Name = "login"
	return s.render(w, "login", v)
}

// Error writes an error page.
func (s *Site) Error(w io.Writer, v ErrorView) error {
	v.Name = "error"
	return s.render(w, "error", v)
}

// icons say a state without colour, as the tree's bands do.
var icons = map[string]string{
	"idle": "○", "running": "▶", "succeeded": "✓", "failed": "✗", "cancelled": "⊘", "skipped": "↷", "damaged": "⚠", "signal": "✉",
}

var funcs = template.FuncMap{
	"icon": func(status string) string {
		if i, ok := icons[status]; ok {
			return i
		}
		return "?"
	},
	"rfc3339": func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	},
	"when": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"pct": func(n, of int) int {
		if of <= 0 {
			return 0
		}
		return n * 100 / of
	},
	"itoa": strconv.Itoa,
	"utoa": func(v uint64) string { return strconv.FormatUint(v, 10) },
	"add":  func(a, b int) int { return a + b },
}

// Duration writes d as a page shows it: 850ms, 12.3s, 4m05s, 2h03m.
func Duration(d time.Duration) string {
	switch {
	case d < 0:
		return "—"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
