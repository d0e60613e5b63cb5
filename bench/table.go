package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// table is rows of cells; the first Left columns are left-aligned, the
// others right-aligned.
type table struct {
	Header []string
	Rows   [][]string
	Left   int
}

func (t *table) add(cells ...string) { t.Rows = append(t.Rows, cells) }

// text writes t as aligned columns separated by two spaces.
func (t *table) text(w io.Writer) {
	widths := make([]int, len(t.Header))
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		var b strings.Builder
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i < t.Left {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// markdown writes t as a GitHub table.
func (t *table) markdown(w io.Writer) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(t.Header, " | "))
	seps := make([]string, len(t.Header))
	for i := range seps {
		seps[i] = "---:"
		if i < t.Left {
			seps[i] = ":---"
		}
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(seps, "|"))
	for _, row := range t.Rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
}

// fmtDur writes d with three significant digits in a fitting unit.
func fmtDur(d time.Duration) string {
	f := float64(d)
	switch {
	case d >= time.Second:
		return sig3(f/1e9) + "s"
	case d >= time.Millisecond:
		return sig3(f/1e6) + "ms"
	case d >= time.Microsecond:
		return sig3(f/1e3) + "µs"
	default:
		return sig3(f) + "ns"
	}
}

func sig3(f float64) string {
	switch {
	case f >= 100:
		return fmt.Sprintf("%.0f", f)
	case f >= 10:
		return fmt.Sprintf("%.1f", f)
	default:
		return fmt.Sprintf("%.2f", f)
	}
}

// fmtCount writes n with thousands separators.
func fmtCount(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + fmtCount(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// fmtFloat writes f with at most three significant digits after small
// numbers' point.
func fmtFloat(f float64) string {
	switch {
	case f >= 1000:
		return fmtCount(int64(f + 0.5))
	case f >= 0.01 || f == 0:
		return sig3(f)
	default:
		return fmt.Sprintf("%.2g", f)
	}
}
