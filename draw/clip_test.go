package draw

import (
	"strings"
	"testing"
)

// TestClipShortcut: clip's shortcut for printable ASCII cuts where the
// rune-by-rune clip (clipRunes, its long way) does, and strings with anything else take the long
// way: control characters, DEL, line separators, multi-byte and invalid
// UTF-8.
func TestClipShortcut(t *testing.T) {
	for _, s := range []string{"", "a", "abc", "abcd", "abcde", "{\"fail\":false}", "a\tb", "a\x7fb", "a\nb", "ab\u2028c", "✓ ok", "é", "\xff\xfe", "abc\x00", strings.Repeat("x", 100)} {
		for max := 1; max <= 6; max++ {
			if got, want := clip(s, max), clipRunes(s, max); got != want {
				t.Errorf("clip(%q, %d) = %q, want %q", s, max, got, want)
			}
		}
		if got, want := clip(s, 40), clipRunes(s, 40); got != want {
			t.Errorf("clip(%q, 40) = %q, want %q", s, got, want)
		}
	}
}

// TestClipASCIIAllocs: a short printable ASCII string (most payloads and
// names) is returned as it is, with no allocation.
func TestClipASCIIAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts do not hold under -race")
	}
	if n := testing.AllocsPerRun(100, func() { _ = clip(`{"fail":false,"seq":0}`, 40) }); n != 0 {
		t.Errorf("clip of a short ASCII string allocates %v times; want 0", n)
	}
}
