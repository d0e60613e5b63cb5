package placement_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/batonwf/baton/placement"
)

func TestRouteTokens(t *testing.T) {
	for _, c := range []struct {
		r   placement.Route
		tok string
	}{
		{placement.Route{}, "-"},
		{placement.Route{Kind: placement.RouteSoft, Key: 0x788e249964a544f0, Wait: 3200 * time.Millisecond}, "k788e249964a544f0.2gw"},
		{placement.Route{Kind: placement.RouteSoft, Key: 1}, "k0000000000000001.0"},
		{placement.Route{Kind: placement.RouteSoft, Key: ^uint64(0), Wait: placement.MaxWait}, "kffffffffffffffff.zzzzzz"},
		{placement.Route{Kind: placement.RoutePin, Key: 0xabc}, "p0000000000000abc"},
		{placement.Route{Kind: placement.RouteGroup, Key: 0xf31b9c756f07d057}, "gf31b9c756f07d057"},
	} {
		tok, err := c.r.Token()
		if err != nil || tok != c.tok {
			t.Errorf("%+v.Token() = %q, %v; want %q", c.r, tok, err, c.tok)
		}
		r, err := placement.ParseRoute(c.tok)
		if err != nil || r != c.r {
			t.Errorf("ParseRoute(%q) = %+v, %v; want %+v", c.tok, r, err, c.r)
		}
	}
}

func TestRouteTokenBadInput(t *testing.T) {
	for _, tok := range []string{
		"", "--", "x", "k", "p123", "qffffffffffffffff", "pFFFFFFFFFFFFFFFF", "p000000000000000g",
		"p0000000000000000x", "g0000000000000000.1", "k0000000000000000", "k0000000000000000.",
		"k0000000000000000x1", "k0000000000000000.01", "k0000000000000000.A", "k0000000000000000.1000000",
		"k0000000000000000.-1", "k0000000000000000.1/", "p0000000000000000/",
	} {
		if r, err := placement.ParseRoute(tok); !errors.Is(err, placement.ErrRoute) {
			t.Errorf("ParseRoute(%q) = %+v, %v; want an error wrapping ErrRoute", tok, r, err)
		} else if !strings.Contains(err.Error(), "route token") {
			t.Errorf("ParseRoute(%q): error %q does not say what it was parsing", tok, err)
		}
	}
	for _, r := range []placement.Route{
		{Kind: placement.RouteSoft, Wait: -time.Millisecond},
		{Kind: placement.RouteSoft, Wait: placement.MaxWait + time.Millisecond},
		{Kind: 9},
	} {
		if tok, err := r.Token(); !errors.Is(err, placement.ErrRoute) {
			t.Errorf("%+v.Token() = %q, %v; want an error wrapping ErrRoute", r, tok, err)
		}
	}
}

// Every route converts to a token of at most MaxRouteLen bytes, without
// "/", and back to itself (a wait to the millisecond).
func TestRouteRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := placement.Route{Kind: rapid.SampledFrom([]placement.RouteKind{placement.RouteNone, placement.RouteSoft, placement.RoutePin, placement.RouteGroup}).Draw(t, "kind")}
		if r.Kind != placement.RouteNone {
			r.Key = rapid.Uint64().Draw(t, "key")
		}
		if r.Kind == placement.RouteSoft {
			r.Wait = time.Duration(rapid.Int64Range(0, int64(placement.MaxWait)).Draw(t, "wait"))
		}
		tok, err := r.Token()
		if err != nil {
			t.Fatal(err)
		}
		if len(tok) > placement.MaxRouteLen || strings.Contains(tok, "/") {
			t.Fatalf("token %q: %d bytes (at most %d) or a slash", tok, len(tok), placement.MaxRouteLen)
		}
		back, err := placement.ParseRoute(tok)
		if err != nil {
			t.Fatalf("ParseRoute(%q): %v", tok, err)
		}
		r.Wait = r.Wait.Truncate(time.Millisecond)
		if back != r {
			t.Fatalf("%q parses as %+v, want %+v", tok, back, r)
		}
	})
}

// ParseRoute never panics, and whatever it accepts is exactly what Token
// makes of the result.
func TestParseRouteAcceptsOnlyCanonicalTokens(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tok := rapid.OneOf(
			rapid.StringMatching(`[kpg-][0-9a-fA-F]{14,17}(\.[0-9a-z]{0,7})?`),
			rapid.String(),
		).Draw(t, "token")
		r, err := placement.ParseRoute(tok)
		if err != nil {
			return
		}
		again, err := r.Token()
		if err != nil || again != tok {
			t.Fatalf("ParseRoute(%q) = %+v, whose token is %q, %v", tok, r, again, err)
		}
	})
}
