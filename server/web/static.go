package web

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
)

//go:embed static
var staticFS embed.FS

// staticTypes are the content types of the assets, by extension.
var staticTypes = map[string]string{
	".css": "text/css; charset=utf-8",
	".js":  "text/javascript; charset=utf-8",
	".svg": "image/svg+xml",
}

// Asset returns the embedded asset name (a file of static/, as in
// /static/NAME) and its content type; ok is false when there is none.
func Asset(name string) (body []byte, contentType string, ok bool) {
	if name == "" || !fs.ValidPath(name) {
		return nil, "", false
	}
	ct, known := staticTypes[path.Ext(name)]
	if !known {
		return nil, "", false
	}
	b, err := staticFS.ReadFile("static/" + name)
	if err != nil {
		return nil, "", false
	}
	return b, ct, true
}

// ServeAsset answers GET /static/NAME with the asset, and returns false
// without writing when there is none. Assets are revalidated on each
// load (Cache-Control: no-cache), so a new server's script is never
// mixed with an old page.
func ServeAsset(w http.ResponseWriter, r *http.Request, name string) bool {
	b, ct, ok := Asset(name)
	if !ok {
		return false
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Cache-Control", "no-cache")
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
	return true
}
