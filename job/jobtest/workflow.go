package jobtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/batonwf/baton/ast"
)

// SyntaxError is a mistake in the compact workflow syntax, at a line and
// column of the text given to ParseWorkflow (both 1-based).
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("workflow syntax: line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// ParseWorkflow reads the compact workflow syntax used by scripts:
//
//	node  = act | "seq(" list ")" | "par(" list ")" | "try(" node {"," part} ")"
//	list  = node {"," node}
//	part  = "rescue:" node | "finally:" node
//	act   = NAME [PAYLOAD]
//
// NAME is a run of letters, digits, '.', '_' and '-'. PAYLOAD is the rest of
// the act up to the next ',' or ')' that is not inside brackets or a JSON
// string, with surrounding white space removed: valid JSON is taken as it is
// (log 3, log {"n":1}, log "a b"), anything else is a JSON string, so
// "log a" is ast.Act("log", "a"). White space, newlines included, only
// separates tokens. The tree is not validated: job.New does that.
//
// A mistake is a *SyntaxError with its line and column.
func ParseWorkflow(text string) (ast.Node, error) {
	p := &wfParser{s: text}
	n, err := p.node()
	if err != nil {
		return ast.Node{}, err
	}
	p.space()
	if p.i < len(p.s) {
		return ast.Node{}, p.errorf("unexpected %q after the workflow", p.rest())
	}
	return n, nil
}

type wfParser struct {
	s string
	i int
}

func (p *wfParser) errorf(format string, args ...any) error {
	line, col := 1, 1
	for _, c := range p.s[:p.i] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// rest returns a short excerpt of the text at the current position.
func (p *wfParser) rest() string {
	r := p.s[p.i:]
	if i := strings.IndexByte(r, '\n'); i >= 0 {
		r = r[:i]
	}
	if len(r) > 20 {
		r = r[:20] + "..."
	}
	return r
}

func (p *wfParser) space() {
	for p.i < len(p.s) && isSpace(p.s[p.i]) {
		p.i++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// peek returns the next byte after white space, or 0 at the end.
func (p *wfParser) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *wfParser) name() string {
	p.space()
	start := p.i
	for p.i < len(p.s) && isNameByte(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *wfParser) node() (ast.Node, error) {
	start := p.i
	name := p.name()
	if name == "" {
		if p.i >= len(p.s) {
			return ast.Node{}, p.errorf("want a node (an action, seq(, par( or try(), found the end")
		}
		return ast.Node{}, p.errorf("want a node (an action, seq(, par( or try(), found %q", p.rest())
	}
	if p.peek() == '(' {
		p.i++
		switch name {
		case "seq", "par":
			kids, err := p.list()
			if err != nil {
				return ast.Node{}, err
			}
			if name == "seq" {
				return ast.Seq(kids...), nil
			}
			return ast.Par(kids...), nil
		case "try":
			return p.try()
		}
		p.i = start
		p.space()
		return ast.Node{}, p.errorf("unknown node %q (want seq(, par( or try()", name+"(")
	}
	payload, err := p.payload()
	if err != nil {
		return ast.Node{}, err
	}
	switch {
	case payload == "":
		return ast.Act(name, nil), nil
	case json.Valid([]byte(payload)):
		return ast.Act(name, json.RawMessage(payload)), nil
	default:
		return ast.Act(name, payload), nil
	}
}

// list reads node {"," node} ")".
func (p *wfParser) list() ([]ast.Node, error) {
	var kids []ast.Node
	for {
		n, err := p.node()
		if err != nil {
			return nil, err
		}
		kids = append(kids, n)
		switch p.peek() {
		case ',':
			p.i++
		case ')':
			p.i++
			return kids, nil
		case 0:
			return nil, p.errorf("want ',' or ')', found the end")
		default:
			return nil, p.errorf("want ',' or ')', found %q", p.rest())
		}
	}
}

// try reads the rest of a try after "try(".
func (p *wfParser) try() (ast.Node, error) {
	body, err := p.node()
	if err != nil {
		return ast.Node{}, err
	}
	var rescue, finally *ast.Node
	for {
		switch p.peek() {
		case ')':
			p.i++
			var opts []ast.TryOption
			if rescue != nil {
				opts = append(opts, ast.Rescue(*rescue))
			}
			if finally != nil {
				opts = append(opts, ast.Finally(*finally))
			}
			return ast.Try(body, opts...), nil
		case ',':
			p.i++
		case 0:
			return ast.Node{}, p.errorf("want ',' or ')' in try, found the end")
		default:
			return ast.Node{}, p.errorf("want ',' or ')' in try, found %q", p.rest())
		}
		p.space()
		at := p.i
		part := p.name()
		if p.i >= len(p.s) || p.s[p.i] != ':' || (part != ast.PartRescue && part != ast.PartFinally) {
			p.i = at
			return ast.Node{}, p.errorf("want rescue: or finally: in try, found %q", p.rest())
		}
		p.i++
		n, err := p.node()
		if err != nil {
			return ast.Node{}, err
		}
		dst := &rescue
		if part == ast.PartFinally {
			dst = &finally
		}
		if *dst != nil {
			p.i = at
			return ast.Node{}, p.errorf("try has a second %s", part)
		}
		*dst = &n
	}
}

// payload reads the text of an act's payload, up to the next ',' or ')'
// outside brackets and JSON strings.
func (p *wfParser) payload() (string, error) {
	p.space()
	start := p.i
	depth, inString := 0, false
	for ; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		if inString {
			switch c {
			case '\\':
				p.i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return "", p.errorf("unbalanced %q in payload", c)
			}
		case '(':
			if depth == 0 {
				return "", p.errorf("unexpected '(' in a payload")
			}
		case ',', ')':
			if depth == 0 {
				return strings.TrimSpace(p.s[start:p.i]), nil
			}
		}
	}
	if inString || depth > 0 {
		p.i = start
		return "", p.errorf("payload %q is not closed", p.rest())
	}
	return strings.TrimSpace(p.s[start:]), nil
}

// FormatWorkflow writes n in the compact syntax that ParseWorkflow reads:
// for a valid tree, ParseWorkflow(FormatWorkflow(n)) equals n. A string
// payload is written bare when that reads back the same (log a), and as
// JSON otherwise (log "a,b", log "1").
func FormatWorkflow(n ast.Node) string {
	var b strings.Builder
	formatNode(&b, &n)
	return b.String()
}

func formatNode(b *strings.Builder, n *ast.Node) {
	switch n.Kind {
	case ast.KindAct:
		b.WriteString(n.Action)
		if len(n.Payload) > 0 {
			b.WriteByte(' ')
			b.WriteString(formatPayload(n.Payload))
		}
	case ast.KindSeq, ast.KindPar:
		b.WriteString(n.Kind.String())
		b.WriteByte('(')
		for i := range n.Children {
			if i > 0 {
				b.WriteString(", ")
			}
			formatNode(b, &n.Children[i])
		}
		b.WriteByte(')')
	case ast.KindTry:
		b.WriteString("try(")
		if n.Body != nil {
			formatNode(b, n.Body)
		}
		if n.Rescue != nil {
			b.WriteString(", rescue: ")
			formatNode(b, n.Rescue)
		}
		if n.Finally != nil {
			b.WriteString(", finally: ")
			formatNode(b, n.Finally)
		}
		b.WriteByte(')')
	default:
		fmt.Fprintf(b, "<%s>", n.Kind)
	}
}

// formatPayload writes a JSON string payload bare when it reads back as
// the same bytes, and the JSON text otherwise.
func formatPayload(p json.RawMessage) string {
	var s string
	if p[0] != '"' || json.Unmarshal(p, &s) != nil {
		return string(p)
	}
	if s == "" || s != strings.TrimSpace(s) || strings.ContainsAny(s, ",()\"[]{}\\") || json.Valid([]byte(s)) {
		return string(p)
	}
	for _, r := range s {
		if r < ' ' || r == 0x7f {
			return string(p)
		}
	}
	if back, err := json.Marshal(s); err != nil || !bytes.Equal(back, p) {
		return string(p)
	}
	return s
}
