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
// is drawn by adding its word here. Running, succeeded and failed are
// Okabe-Ito colours, distinct under the common colour-vision deficiencies;
// cancelled and skipped are greys (skipped the lighter: a case a choice
// did not select is no problem), told apart by icon and word.
var styles = map[string]style{
	"idle":      {fill: "#FFFFFF", stroke: "#767676", text: "#1A1A1A", icon: "○"},
	"running":   {fill: "#0072B2", stroke: "#0072B2", text: "#FFFFFF", icon: "▶"},
	"succeeded": {fill: "#009E73", stroke: "#007A59", text: "#000000", icon: "✓"},
	"failed":    {fill: "#D55E00", stroke: "#A84A00", text: "#000000", icon: "✗"},
	"cancelled": {fill: "#8C8C8C", stroke: "#6E6E6E", text: "#000000", icon: "⊘"},
	"skipped":   {fill: "#DDDDDD", stroke: "#8C8C8C", text: "#1A1A1A", icon: "↷"}, // neutral: settled, never run
}

// StyleSheet is the drawing's CSS, which SVG puts in the document's
// <style> element: the palette as custom properties (--baton-WORD), the
// colours of each state's band, outline and words by the node's
// data-status, and the fonts and colours of everything else. A page that
// shows the drawing inline, without its <style> (a Content-Security-Policy
// may refuse inline styles), must style the same classes itself.
var StyleSheet = styleSheet()

func styleSheet() string {
	var b strings.Builder
	b.WriteString(".baton-graph{")
	for _, word := range stateWords {
		b.WriteString("--baton-" + word + ":" + styles[word].fill + ";")
	}
	b.WriteString("}\n")
	for _, r := range [][2]string{
		{".title", "font-size:13px;font-weight:bold;fill:" + textColour},
		{".truncated", "fill:" + mutedColour},
		{".lane rect", "fill:" + laneFill + ";stroke:" + laneStroke + ";stroke-dasharray:4 3"},
		{".lane text", "fill:" + mutedColour},
		{".edges", "fill:none;stroke:" + edgeColour + ";stroke-width:1.5"},
		{".edge", "marker-end:url(#baton-arrow)"},
		{".box", "fill:#FFFFFF;stroke-width:1.5"},
		{".band", "stroke-width:0.5"},
		{".head", "font-size:12px;fill:" + mutedColour},
		{".head tspan", "font-weight:bold;fill:" + textColour},
		{".line", "fill:" + mutedColour},
		{".count", "fill:" + textColour},
		// A state this package does not know; a known one's rule below
		// is more specific.
		{".node .band", "fill:" + unknownStyle.fill + ";stroke:" + unknownStyle.stroke},
		{".node .box", "stroke:" + unknownStyle.stroke},
		{".node .state", "fill:" + unknownStyle.text},
	} {
		b.WriteString(".baton-graph " + r[0] + "{" + r[1] + "}\n")
	}
	for _, word := range stateWords {
		st := styles[word]
		sel := ".baton-graph .node[data-status=" + word + "] "
		b.WriteString(sel + ".band{fill:var(--baton-" + word + ");stroke:" + st.stroke + "}\n")
		b.WriteString(sel + ".box{stroke:" + st.stroke + "}\n")
		b.WriteString(sel + ".state{fill:" + st.text + "}\n")
	}
	return b.String()
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
	// Most strings are printable ASCII: one byte a character, nothing
	// to replace.
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			plain = false
			break
		}
	}
	if plain {
		if len(s) <= max {
			return s
		}
		return s[:max-1] + "…"
	}
	return clipRunes(s, max)
}

// clipRunes is clip rune by rune, with no shortcut for printable ASCII.
func clipRunes(s string, max int) string {
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
