package draw

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/batonwf/baton/job"
)

// style is how one state is drawn: the band's fill, the box's outline,
// the band's text colour (chosen for AA contrast on the fill) and the icon
// that, with the state's word, says the state without colour.
type style struct {
	fill, stroke, text, icon string
}

// styles are keyed by the state's word, so a state the reducer adds later
// ("skipped", issue 19) is drawn by adding its word here. Running,
// succeeded and failed are Okabe-Ito colours, distinct under the common
// colour-vision deficiencies.
var styles = map[string]style{
	"idle":      {fill: "#FFFFFF", stroke: "#767676", text: "#1A1A1A", icon: "○"},
	"running":   {fill: "#0072B2", stroke: "#0072B2", text: "#FFFFFF", icon: "▶"},
	"succeeded": {fill: "#009E73", stroke: "#007A59", text: "#000000", icon: "✓"},
	"failed":    {fill: "#D55E00", stroke: "#A84A00", text: "#000000", icon: "✗"},
	"cancelled": {fill: "#8C8C8C", stroke: "#6E6E6E", text: "#000000", icon: "⊘"},
	"skipped":   {fill: "#F0E442", stroke: "#8F8727", text: "#000000", icon: "↷"}, // reserved for issue 19
}

// unknownStyle draws a state this package does not know.
var unknownStyle = style{fill: "#FFFFFF", stroke: "#000000", text: "#000000", icon: "?"}

func styleOf(s job.Status) style {
	if st, ok := styles[s.String()]; ok {
		return st
	}
	return unknownStyle
}

// Clip widths, in characters.
const (
	payloadChars = 40
	labelChars   = 30
	errorChars   = 60
	idChars      = 60
)

// clip returns s on one line (control characters, newlines included, as
// spaces; invalid UTF-8 as U+FFFD), cut to at most max characters, the
// last of which is "…" when it was cut.
func clip(s string, max int) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if n == max-1 && i < len(s) {
			b.WriteString("…")
			return b.String()
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			r = ' '
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }
