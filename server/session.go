package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The pages' session: /login takes a token once and answers with a
// cookie that stands for it until it expires. The cookie is not the
// token: it holds the scope, the expiry and a fingerprint of the token
// (a digest of its digest), signed with HMAC-SHA256 under the server's
// session key. It is HttpOnly, SameSite=Strict, Secure when the login
// came over TLS, and its scope is never more than the token's now: a
// token removed from the token file (SIGHUP) ends its sessions.

// SessionCookie is the name of the pages' session cookie.
const SessionCookie = "baton_session"

// DefaultSessionTTL is how long a session lasts when Options.SessionTTL
// is 0.
const DefaultSessionTTL = 12 * time.Hour

// sessions signs and checks session cookies.
type sessions struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

func newSessions(key []byte, ttl time.Duration, now func() time.Time) (*sessions, error) {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("server: a session key: %w", err)
		}
	} else if len(key) < 16 {
		return nil, fmt.Errorf("server: Options.SessionKey is %d bytes; at least 16 are needed", len(key))
	}
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	return &sessions{key: append([]byte(nil), key...), ttl: ttl, now: now}, nil
}

// fingerprint names a token in a cookie without giving it away: a
// digest of the token's SHA-256 digest, cut to 8 bytes.
func fingerprint(sum [sha256.Size]byte) string {
	f := sha256.Sum256(append([]byte("baton session\x00"), sum[:]...))
	return hex.EncodeToString(f[:8])
}

// issue returns the cookie of a session of scope for the token whose
// digest is sum; secure sets its Secure attribute.
func (ss *sessions) issue(scope Scope, sum [sha256.Size]byte, secure bool) *http.Cookie {
	exp := ss.now().Add(ss.ttl)
	payload := "v1." + scope.String() + "." + strconv.FormatInt(exp.Unix(), 10) + "." + fingerprint(sum)
	return &http.Cookie{
		Name: SessionCookie, Value: payload + "." + ss.sign(payload), Path: "/",
		Expires: exp, MaxAge: int(ss.ttl / time.Second),
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode,
	}
}

func (ss *sessions) sign(payload string) string {
	m := hmac.New(sha256.New, ss.key)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// session is what a valid cookie says.
type session struct {
	scope       Scope
	fingerprint string
	expires     time.Time
}

// check reads a cookie's value: its signature, then its expiry. The
// error says which failed, in words for the client (never the value).
func (ss *sessions) check(value string) (session, error) {
	i := strings.LastIndexByte(value, '.')
	if i < 0 {
		return session{}, fmt.Errorf("the session cookie is malformed")
	}
	payload, mac := value[:i], value[i+1:]
	if !hmac.Equal([]byte(ss.sign(payload)), []byte(mac)) {
		return session{}, fmt.Errorf("the session cookie's signature is not this server's (a changed cookie, or a session of another server or run)")
	}
	f := strings.Split(payload, ".")
	if len(f) != 4 || f[0] != "v1" {
		return session{}, fmt.Errorf("the session cookie is malformed")
	}
	var sc session
	switch f[1] {
	case "read":
		sc.scope = ScopeRead
	case "write":
		sc.scope = ScopeWrite
	default:
		return session{}, fmt.Errorf("the session cookie is malformed")
	}
	exp, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return session{}, fmt.Errorf("the session cookie is malformed")
	}
	sc.expires, sc.fingerprint = time.Unix(exp, 0), f[3]
	if !ss.now().Before(sc.expires) {
		return session{}, fmt.Errorf("the session expired at %s: log in again", sc.expires.UTC().Format(time.RFC3339))
	}
	return sc, nil
}

// clear is the cookie that ends a session.
func clearSession(secure bool) *http.Cookie {
	return &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode}
}
