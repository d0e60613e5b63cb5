package server

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MinTokenBytes is the shortest token a token file may hold.
const MinTokenBytes = 16

// Tokens are the bearer tokens a server takes, each with its scope, kept
// as SHA-256 digests only. It is safe for concurrent use; Replace swaps
// its tokens for a new set (a token file read again).
type Tokens struct {
	keys atomic.Pointer[[]tokenKey]
}

// Replace makes t take u's tokens from the next request on.
func (t *Tokens) Replace(u *Tokens) { t.keys.Store(u.keys.Load()) }

type tokenKey struct {
	sum   [sha256.Size]byte
	scope Scope
}

// TokenLine is one line of a token file: a token and its scope.
type TokenLine struct {
	Scope Scope
	Token string
}

// ParseTokenLines reads a token file's content: one "read TOKEN" or
// "write TOKEN" per line; blank lines and lines starting with '#' are
// skipped. A token shorter than MinTokenBytes, or any other line, is an
// error naming its line (never the token). The lines come in the file's
// order; a client picks its token from them ('baton status --server').
func ParseTokenLines(data []byte) ([]TokenLine, error) {
	var lines []TokenLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || (f[0] != "read" && f[0] != "write") {
			return nil, fmt.Errorf("line %d: want 'read TOKEN' or 'write TOKEN'", n)
		}
		if len(f[1]) < MinTokenBytes {
			return nil, fmt.Errorf("line %d: the token is %d bytes; at least %d are needed", n, len(f[1]), MinTokenBytes)
		}
		scope := ScopeRead
		if f[0] == "write" {
			scope = ScopeWrite
		}
		lines = append(lines, TokenLine{scope, f[1]})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("no token (want lines 'read TOKEN' or 'write TOKEN')")
	}
	return lines, nil
}

// ParseTokens reads a token file's content (ParseTokenLines) into the
// tokens a server takes.
func ParseTokens(data []byte) (*Tokens, error) {
	lines, err := ParseTokenLines(data)
	if err != nil {
		return nil, err
	}
	return tokensOf(lines), nil
}

// LoadTokens reads a token file (ReadTokenFile) into the tokens a server
// takes.
func LoadTokens(path string) (*Tokens, error) {
	lines, err := ReadTokenFile(path)
	if err != nil {
		return nil, err
	}
	return tokensOf(lines), nil
}

func tokensOf(lines []TokenLine) *Tokens {
	keys := make([]tokenKey, len(lines))
	for i, l := range lines {
		keys[i] = tokenKey{sha256.Sum256([]byte(l.Token)), l.Scope}
	}
	t := &Tokens{}
	t.keys.Store(&keys)
	return t
}

// ReadTokenFile reads the lines of a token file (ParseTokenLines). It
// refuses a file that its group or others may read or write.
func ReadTokenFile(path string) ([]TokenLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("token file %s has mode %04o: its group or others may read it (chmod 600 %s)", path, perm, path)
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	lines, err := ParseTokenLines(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	return lines, nil
}

// scopeOf returns the scope of token, or ScopeNone if it is not one of
// t's. It compares the token's digest with every configured one, in
// constant time each, so the time taken tells neither length nor prefix.
func (t *Tokens) scopeOf(token string) Scope {
	sum := sha256.Sum256([]byte(token))
	found := ScopeNone
	for _, k := range *t.keys.Load() {
		if subtle.ConstantTimeCompare(sum[:], k.sum[:]) == 1 && k.scope > found {
			found = k.scope
		}
	}
	return found
}

// scopeOfFingerprint returns the scope of the token a session cookie
// names (fingerprint), or ScopeNone if it is no longer one of t's.
func (t *Tokens) scopeOfFingerprint(fp string) Scope {
	found := ScopeNone
	for _, k := range *t.keys.Load() {
		if subtle.ConstantTimeCompare([]byte(fingerprint(k.sum)), []byte(fp)) == 1 && k.scope > found {
			found = k.scope
		}
	}
	return found
}

// authorize checks the request's token or session cookie for scope.
func (s *srv) authorize(r *http.Request, scope Scope) error {
	got, _, err := s.credential(r)
	if err != nil {
		return err
	}
	if got < scope {
		return newProblem(CodeForbidden, fmt.Sprintf("%s %s needs a %s token; this one is %s", r.Method, r.URL.Path, scope, got))
	}
	return nil
}

// credential returns the scope the request's credential gives: its
// bearer token, or without an Authorization header its session cookie
// (session true), whose scope is never more than its token's now.
// Without tokens every request may write. A missing, unknown, tampered
// or expired credential is a failed authentication.
func (s *srv) credential(r *http.Request) (scope Scope, session bool, err error) {
	if s.tokens == nil {
		return ScopeWrite, false, nil
	}
	client := clientAddr(r)
	if s.fails.blocked(client) {
		p := newProblem(CodeTooManyAuthFailures, fmt.Sprintf("too many failed authentications from %s: wait a minute", client))
		p.retryAfter = int(AuthWindow / time.Second)
		return ScopeNone, false, p
	}
	if queryHasToken(r.URL.RawQuery) {
		s.fail(client)
		return ScopeNone, false, newProblem(CodeUnauthorized, "tokens in the query string are refused: send Authorization: Bearer TOKEN")
	}
	h := r.Header.Get("Authorization")
	if c, cerr := r.Cookie(SessionCookie); h == "" && cerr == nil {
		sc, err := s.sessions.check(c.Value)
		if err != nil {
			s.fail(client)
			return ScopeNone, false, newProblem(CodeUnauthorized, err.Error()+" (log in at /login, or send Authorization: Bearer TOKEN)")
		}
		got := min(sc.scope, s.tokens.scopeOfFingerprint(sc.fingerprint))
		if got == ScopeNone {
			s.fail(client)
			return ScopeNone, false, newProblem(CodeUnauthorized, "the session's token is no longer one of the server's: log in again at /login")
		}
		return got, true, nil
	}
	scheme, token, _ := strings.Cut(h, " ")
	if h == "" || !strings.EqualFold(scheme, "Bearer") || token == "" {
		s.fail(client)
		return ScopeNone, false, newProblem(CodeUnauthorized, fmt.Sprintf("%s %s needs Authorization: Bearer TOKEN", r.Method, r.URL.Path))
	}
	got := s.tokens.scopeOf(strings.TrimSpace(token))
	if got == ScopeNone {
		s.fail(client)
		return ScopeNone, false, newProblem(CodeUnauthorized, fmt.Sprintf("the token given for %s %s is not a known one", r.Method, r.URL.Path))
	}
	return got, false, nil
}

// queryHasToken reports whether the query string raw has a parameter
// token or access_token. Only a query that could name one (it has
// "token" or a percent-escape) is parsed.
func queryHasToken(raw string) bool {
	if !strings.Contains(raw, "token") && !strings.Contains(raw, "%") {
		return false
	}
	q, _ := url.ParseQuery(raw)
	return q.Has("access_token") || q.Has("token")
}

// fail counts a failed authentication (Options.AuthFailures too), logging the one that blocks the
// client.
func (s *srv) fail(client string) {
	if s.authFailures != nil {
		s.authFailures.Inc()
	}
	if s.fails.add(client) {
		s.log.Warn("http client blocked for failed authentications", "remote", client, "failures", AuthFailures, "window", AuthWindow)
	}
}

// clientAddr is the host of the request's remote address.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// failures counts failed authentications per client address in fixed
// windows of AuthWindow.
type failures struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*window
}

type window struct {
	start time.Time
	n     int
}

func newFailures(now func() time.Time) *failures {
	return &failures{now: now, m: map[string]*window{}}
}

// blocked reports whether client has used up its failures in its window.
func (f *failures) blocked(client string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.m[client]
	return w != nil && f.now().Sub(w.start) < AuthWindow && w.n >= AuthFailures
}

// add counts a failure of client and reports whether it is the one that
// blocks it. Windows past their minute are dropped as they are met, so
// the map holds only clients that failed in the last minute or so.
func (f *failures) add(client string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if len(f.m) > 10000 {
		for k, w := range f.m {
			if now.Sub(w.start) >= AuthWindow {
				delete(f.m, k)
			}
		}
	}
	w := f.m[client]
	if w == nil || now.Sub(w.start) >= AuthWindow {
		w = &window{start: now}
		f.m[client] = w
	}
	w.n++
	return w.n == AuthFailures
}
