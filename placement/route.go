package placement

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// RouteKind is what a queue entry's route token says about where the
// action should run.
type RouteKind uint8

const (
	// RouteNone ("-"): anywhere; the strategy orders the workers.
	RouteNone RouteKind = iota
	// RouteSoft ("k<16 hex>.<wait>"): a soft key; its holder takes it,
	// others after the wait.
	RouteSoft
	// RoutePin ("p<16 hex>"): a pin; one worker holds it.
	RoutePin
	// RouteGroup ("g<16 hex>"): a replica copy; copies of one group go to
	// distinct workers.
	RouteGroup
)

var routeKindNames = [...]string{"none", "soft", "pin", "group"}

func (k RouteKind) String() string {
	if int(k) < len(routeKindNames) {
		return routeKindNames[k]
	}
	return fmt.Sprintf("RouteKind(%d)", k)
}

// MaxRouteLen is the longest route token: "k", 16 hex digits, "." and six
// base-36 digits.
const MaxRouteLen = 24

// MaxWait is the longest wait a soft route token carries: six base-36
// digits of milliseconds (about 24.8 days).
const MaxWait = (36*36*36*36*36*36 - 1) * time.Millisecond

// ErrRoute is wrapped by every error of ParseRoute and Route.Token.
var ErrRoute = errors.New("placement: bad route token")

// Route is a queue entry's route token, parsed: the part of the entry's
// name that lets a worker decide from the name alone.
type Route struct {
	Kind RouteKind
	// Key is the hash of the key (KeyHash): of the soft key, the pin's
	// key or the replica group. Zero for RouteNone.
	Key uint64
	// Wait is a soft key's wait, to the millisecond. Zero otherwise.
	Wait time.Duration
}

// Token returns r as it stands in a queue entry's name: "-", "k<16
// hex>.<wait in ms, base 36>", "p<16 hex>" or "g<16 hex>", at most
// MaxRouteLen bytes and without "/". A wait is rounded down to the
// millisecond; a negative one or one over MaxWait is an error.
func (r Route) Token() (string, error) {
	switch r.Kind {
	case RouteNone:
		return "-", nil
	case RouteSoft:
		if r.Wait < 0 || r.Wait > MaxWait {
			return "", fmt.Errorf("%w: wait %v outside 0..%v", ErrRoute, r.Wait, MaxWait)
		}
		return fmt.Sprintf("k%016x.%s", r.Key, strconv.FormatInt(r.Wait.Milliseconds(), 36)), nil
	case RoutePin:
		return fmt.Sprintf("p%016x", r.Key), nil
	case RouteGroup:
		return fmt.Sprintf("g%016x", r.Key), nil
	}
	return "", fmt.Errorf("%w: kind %v", ErrRoute, r.Kind)
}

// ParseRoute parses a route token made by Route.Token. It accepts exactly
// the tokens Token makes (lower-case hex, 16 digits, a wait without
// leading zeros), so a token and its Route convert both ways.
func ParseRoute(tok string) (Route, error) {
	bad := func(why string) (Route, error) {
		return Route{}, fmt.Errorf("%w %q: %s", ErrRoute, tok, why)
	}
	if tok == "-" {
		return Route{}, nil
	}
	if len(tok) < 17 {
		return bad("too short")
	}
	if len(tok) > MaxRouteLen {
		return bad("too long")
	}
	var kind RouteKind
	switch tok[0] {
	case 'k':
		kind = RouteSoft
	case 'p':
		kind = RoutePin
	case 'g':
		kind = RouteGroup
	default:
		return bad("unknown kind " + strconv.QuoteRune(rune(tok[0])))
	}
	var key uint64
	for _, c := range []byte(tok[1:17]) {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		default:
			return bad("key is not 16 lower-case hex digits")
		}
		key = key<<4 | uint64(d)
	}
	r := Route{Kind: kind, Key: key}
	rest := tok[17:]
	if kind != RouteSoft {
		if rest != "" {
			return bad("trailing bytes")
		}
		return r, nil
	}
	if len(rest) < 2 || rest[0] != '.' {
		return bad("soft key without .<wait>")
	}
	w := rest[1:]
	for _, c := range []byte(w) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z') {
			return bad("wait is not base 36")
		}
	}
	if len(w) > 1 && w[0] == '0' {
		return bad("wait has a leading zero")
	}
	ms, err := strconv.ParseInt(w, 36, 64)
	if err != nil {
		return bad("wait: " + err.Error())
	}
	r.Wait = time.Duration(ms) * time.Millisecond
	return r, nil
}
