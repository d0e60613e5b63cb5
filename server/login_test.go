package server_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/store"

	"golang.org/x/net/html"
)

// clock is a settable clock for Options.Now.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *clock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }
func pageTokens(t *testing.T) *server.Tokens {
	t.Helper()
	tokens, err := server.ParseTokens([]byte("write " + pageWriteToken + "\nread " + pageReadToken + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return tokens
}

// login posts token to /login and returns the session cookie.
func (e *pageEnv) login(t *testing.T, token, next string) *http.Cookie {
	t.Helper()
	resp, body := e.postForm(t, "/login", url.Values{"token": {token}, "next": {next}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != next {
		t.Fatalf("login: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == server.SessionCookie {
			return c
		}
	}
	t.Fatalf("login set no session cookie: %v", resp.Header)
	return nil
}

func withCookie(c *http.Cookie) map[string]string {
	return map[string]string{"Cookie": c.Name + "=" + c.Value}
}

// TestLogin: /login takes a token once and sets a session cookie that is
// signed, expiring, HttpOnly, SameSite=Strict and not the token; pages
// and the API take it; a tampered, expired or revoked one is refused; a
// browser without one is sent to /login and back, and does not count as
// a failed authentication.
func TestLogin(t *testing.T) {
	clk := newClock()
	tokens := pageTokens(t)
	e := newPageEnv(t, func(o *server.Options) {
		o.Tokens, o.Now, o.SessionTTL = tokens, clk.now, time.Hour
	})
	if _, _, err := e.client.Submit(t.Context(), "j", []byte(`{"version":1,"root":{"act":"block"}}`)); err != nil {
		t.Fatal(err)
	}
	// No credential: to /login, and back; never blocked for it.
	for range server.AuthFailures + 5 {
		resp, _ := e.get(t, "/jobs/j?version=1", nil)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=%2Fjobs%2Fj%3Fversion%3D1" {
			t.Fatalf("a page without a credential: %d %v", resp.StatusCode, resp.Header)
		}
	}
	resp, body := e.get(t, "/login?next=%2Fjobs%2Fj", nil)
	d := parseHTML(t, body)
	if resp.StatusCode != 200 || len(d.all(func(n *html.Node) bool {
		return n.Data == "input" && attrOf(n, "name") == "next" && attrOf(n, "value") == "/jobs/j"
	})) != 1 {
		t.Errorf("the login page: %d %s", resp.StatusCode, body)
	}
	// A wrong token: the form again, 401, counted.
	resp, body = e.postForm(t, "/login", url.Values{"token": {"not-a-token-0123456789"}, "next": {"/"}}, nil)
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 || parseHTML(t, body).byID("login-error") == nil {
		t.Errorf("a wrong token: %d %v", resp.StatusCode, resp.Cookies())
	}

	read := e.login(t, pageReadToken, "/jobs/j")
	if !read.HttpOnly || read.SameSite != http.SameSiteStrictMode || read.Secure || read.Path != "/" || read.MaxAge != 3600 {
		t.Errorf("the cookie's attributes: %+v", read)
	}
	sum := sha256.Sum256([]byte(pageReadToken))
	for _, secret := range []string{pageReadToken, hex.EncodeToString(sum[:]), base64.RawURLEncoding.EncodeToString(sum[:]), base64.StdEncoding.EncodeToString(sum[:])} {
		if strings.Contains(read.Value, secret) || strings.Contains(read.Value, secret[:16]) {
			t.Errorf("the cookie %q holds the token or its digest", read.Value)
		}
	}
	// The cookie reads: pages (no cancel form for read), and the API.
	resp, body = e.get(t, "/jobs/j", withCookie(read))
	d = parseHTML(t, body)
	if resp.StatusCode != 200 || d.byID("job") == nil {
		t.Fatalf("the job page with the read cookie: %d", resp.StatusCode)
	}
	if d.byID("cancel-form") != nil || d.byID("cancel") != nil {
		t.Errorf("a read session is offered the cancel form")
	}
	if resp, _ := e.get(t, "/api/v1/jobs/j", withCookie(read)); resp.StatusCode != 200 {
		t.Errorf("the API with the read cookie: %d", resp.StatusCode)
	}
	if resp, _ := e.postForm(t, "/jobs/j/cancel", url.Values{"reason": {"no"}}, withCookie(read)); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the cancel form with a read cookie: %d", resp.StatusCode)
	}
	// Tampered: another scope with the old signature, or another
	// signature. Refused by the API (401) and the pages (to /login, the
	// cookie cleared).
	for _, v := range []string{strings.Replace(read.Value, "read", "write", 1), read.Value[:len(read.Value)-2] + "AA", "garbage", ""} {
		bad := &http.Cookie{Name: read.Name, Value: v}
		if resp, _ := e.get(t, "/api/v1/jobs", withCookie(bad)); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the API with cookie %q: %d", v, resp.StatusCode)
		}
		resp, _ := e.get(t, "/", withCookie(bad))
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login") {
			t.Errorf("a page with cookie %q: %d %v", v, resp.StatusCode, resp.Header)
		}
	}

	// A write session: the cancel form, which works from the page's
	// origin and is refused from another.
	write := e.login(t, pageWriteToken, "/")
	resp, body = e.get(t, "/jobs/j", withCookie(write))
	if d := parseHTML(t, body); d.byID("cancel-form") == nil || d.byID("cancel") == nil {
		t.Errorf("a write session has no cancel form: %d", resp.StatusCode)
	}
	cross := withCookie(write)
	cross["Sec-Fetch-Site"] = "cross-site"
	cross["Origin"] = "http://evil.example"
	if resp, _ := e.postForm(t, "/jobs/j/cancel", url.Values{"reason": {"from elsewhere"}}, cross); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-origin cancel form: %d", resp.StatusCode)
	}
	if resp, _ := e.do(t, jsonPost(t, e.url+"/api/v1/jobs/j/cancel", `{"reason":"x"}`, cross)); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-origin API cancel: %d", resp.StatusCode)
	}
	if j, _ := e.st.Load(t.Context(), "j"); j.Done() {
		t.Fatalf("a cross-origin request cancelled the job")
	}
	same := withCookie(write)
	same["Sec-Fetch-Site"] = "same-origin"
	if resp, body := e.postForm(t, "/jobs/j/cancel", url.Values{"reason": {"from the page"}}, same); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/jobs/j" {
		t.Errorf("the cancel form: %d %s", resp.StatusCode, body)
	}

	// Revoked: a token file without the write token ends its sessions.
	fewer, err := server.ParseTokens([]byte("read " + pageReadToken + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	tokens.Replace(fewer)
	if resp, _ := e.get(t, "/api/v1/jobs", withCookie(write)); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a session of a removed token: %d", resp.StatusCode)
	}
	// Expired: an hour later the read session is over.
	if resp, _ := e.get(t, "/api/v1/jobs", withCookie(read)); resp.StatusCode != 200 {
		t.Errorf("the read session before it expires: %d", resp.StatusCode)
	}
	clk.add(time.Hour)
	resp, body = e.get(t, "/api/v1/jobs", withCookie(read))
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "expired") {
		t.Errorf("an expired session: %d %s", resp.StatusCode, body)
	}
	// Log out: the cookie is cleared.
	resp, _ = e.postForm(t, "/logout", nil, withCookie(read))
	if c := resp.Cookies(); resp.StatusCode != http.StatusSeeOther || len(c) != 1 || c[0].MaxAge >= 0 {
		t.Errorf("logout: %d %v", resp.StatusCode, c)
	}
	// A login never sends the browser elsewhere.
	clk.add(2 * time.Minute) // past the failures' window
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"} {
		resp, _ := e.postForm(t, "/login", url.Values{"token": {pageReadToken}, "next": {next}}, nil)
		if resp.Header.Get("Location") != "/" {
			t.Errorf("login with next=%q goes to %q", next, resp.Header.Get("Location"))
		}
	}
}

func jsonPost(t *testing.T, u, body string, headers map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequest("POST", u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req
}

// TestLoginTLS: under TLS the session cookie is Secure.
func TestLoginTLS(t *testing.T) {
	st := store.NewMemory()
	t.Cleanup(func() { st.Close() })
	h, err := server.New(server.Options{Store: st, Tokens: pageTokens(t)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(h)
	t.Cleanup(ts.Close)
	c := ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.PostForm(ts.URL+"/login", url.Values{"token": {pageReadToken}, "next": {"/"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var got *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == server.SessionCookie {
			got = ck
		}
	}
	if got == nil || !got.Secure || !got.HttpOnly || got.SameSite != http.SameSiteStrictMode {
		t.Errorf("the session cookie under TLS: %+v", got)
	}
}
