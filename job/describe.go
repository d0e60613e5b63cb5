package job

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/batonwf/baton/ast"
)

// Describe renders j as stable text: a header line, then one line per node
// in pre-order, indented by depth. The same job always renders the same
// way, so the text serves golden tests, logs, errors and the command line.
//
//	job order-7 v3: running, 2 outstanding, 1/5 actions settled
//	par: running
//	  act check.stock {"sku":"A1"} par[0]: succeeded #1 -> {"ok":true}
//	  seq par[1]: running
//	    act charge {"cents":500} par[1].seq[0]: failed #1: card declined
//
// Payloads, outputs and errors are cut to 60 bytes.
func Describe(j Job) string {
	if j.t == nil {
		return "job <zero>\n"
	}
	var b strings.Builder
	settled, total := j.Progress()
	fmt.Fprintf(&b, "job %s v%d: %s", j.id, j.version, j.Status())
	if j.cancel != "" {
		fmt.Fprintf(&b, " (cancel: %s)", Clip(j.cancel))
	}
	if j.ended != "" {
		fmt.Fprintf(&b, " (end: %s)", Clip(j.ended))
	}
	if f, ok := j.Failure(); ok {
		fmt.Fprintf(&b, " at %s", f)
	}
	if j.running > 0 {
		fmt.Fprintf(&b, ", %d outstanding", j.running)
	}
	fmt.Fprintf(&b, ", %d/%d actions settled\n", settled, total)
	j.Walk(func(n NodeInfo) bool {
		describeNode(&b, n)
		if j.t.waitsOrSleeps {
			describeWait(&b, &j, n)
		}
		return true
	})
	// A retry's due time is on its leaf's line; deadlines come last.
	for _, t := range j.Timers() {
		if path, ok := strings.CutSuffix(t.ID, "@deadline"); ok {
			fmt.Fprintf(&b, "deadline of %s due %s\n", path, t.Due.UTC().Format(time.RFC3339Nano))
		}
	}
	describeKept(&b, &j)
	return b.String()
}

func describeNode(b *strings.Builder, n NodeInfo) {
	b.WriteString(strings.Repeat("  ", n.Depth))
	b.WriteString(n.Kind.String())
	if n.Kind == ast.KindAct {
		b.WriteString(" ")
		b.WriteString(n.Action)
		if len(n.Payload) > 0 {
			b.WriteString(" ")
			b.WriteString(Clip(string(n.Payload)))
		}
	}
	if n.Path != "" {
		b.WriteString(" ")
		b.WriteString(n.Path)
	}
	if n.Name != "" {
		b.WriteString(" @")
		b.WriteString(n.Name)
	}
	b.WriteString(": ")
	b.WriteString(n.Status.String())
	if n.Kind == ast.KindAct && n.Attempt > 0 {
		fmt.Fprintf(b, " #%d", n.Attempt)
	}
	switch {
	case n.Kind == ast.KindAct && !n.Retry.IsZero():
		fmt.Fprintf(b, ": %s; #%d due %s", Clip(n.Error), n.Attempt+1, n.Retry.Format(time.RFC3339Nano))
	case n.Kind == ast.KindAct && n.Status == StatusFailed:
		b.WriteString(": ")
		msg := n.Error
		if n.Failure != nil {
			if n.Failure.Kind != "" {
				b.WriteString("[" + n.Failure.Kind + "] ")
			}
			if msg == "" {
				msg = n.Failure.Message // a leaf whose own deadline ran out
			}
		}
		b.WriteString(Clip(msg))
	case n.Kind == ast.KindAct && len(n.Output) > 0:
		b.WriteString(" -> ")
		b.WriteString(Clip(string(n.Output)))
	case n.Winner != "" && n.Failure == nil:
		fmt.Fprintf(b, ", won by %s", n.Winner)
		if len(n.Output) > 0 {
			b.WriteString(" -> ")
			b.WriteString(Clip(string(n.Output)))
		}
	case n.Failure != nil:
		fmt.Fprintf(b, " (%s", ast.ShowPath(n.Failure.Path))
		if n.Failure.Others > 0 {
			fmt.Fprintf(b, " +%d more", n.Failure.Others)
		}
		b.WriteString(")")
	}
	b.WriteByte('\n')
}

// Clip cuts s to 60 bytes, marks the cut, and quotes control characters,
// so that it prints on one line. Describe clips payloads, outputs and
// errors with it; tools that print job data beside Describe use it too.
func Clip(s string) string { return clip(s, 60) }

// clip cuts s to at most max bytes, at a rune boundary, marks the cut and
// quotes control characters.
func clip(s string, max int) string {
	cut := len(s) > max
	if cut {
		n := max
		for n > 0 && n > max-utf8.UTFMax && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	s = oneLine(s)
	if cut {
		s += "..."
	}
	return s
}

// oneLine quotes s if it holds control characters (line breaks above all),
// so that it prints on one line.
func oneLine(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f || r == 0x2028 || r == 0x2029 }) {
		return fmt.Sprintf("%q", s)
	}
	return s
}
