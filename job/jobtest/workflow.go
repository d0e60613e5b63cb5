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
//	node  = ["@" NAME [after]] ["*" DIGITS] bare
//	after = "[" {NAME} "]"
//	bare  = act | "seq(" list ")" | "par(" list ")" | "dag(" list ")"
//	      | "race(" list ")" | "try(" node {"," part} ")"
//	list  = node {"," node}
//	part  = "rescue:" node | "finally:" node
//	act   = NAME [inputs] [PAYLOAD]
//	inputs = "<" {NAME} ">"
//
// NAME is a run of letters, digits, '.', '_' and '-'. PAYLOAD is the rest of
// the act up to the next ',' or ')' that is not inside brackets or a JSON
// string, with surrounding white space removed: valid JSON is taken as it is
// (log 3, log {"n":1}, log "a b"), anything else is a JSON string, so
// "log a" is ast.Act("log", "a"). White space, newlines included, only
// separates tokens, except around names, inputs and afters, below.
//
// Names, inputs and dags. "@NAME " before a node names it (ast.Node.Named):
// "@total sum 3". Right after the name, with no space, "[a b]" lists the
// siblings a dag child is after (ast.Node.WithAfter), and right after an
// action's name, with no space, "<a b>" lists the inputs it takes
// (ast.Node.WithInputs); the names inside are separated by white space.
// So
//
//	dag(@a fetch 1, @b fetch 2, @c[a b] merge<a b>)
//
// is a dag whose child c, a merge taking the outputs of a and b, starts
// once a and b have succeeded. A '<' after a space belongs to the payload:
// "log <b>" logs the string "<b>". The tree is not validated (job.New does
// that), so a name or an after where ast.Validate refuses it parses.
//
// Replicas. "*N " before a node (after its name, if any) runs it as a
// race of N copies (ast.Node.WithReplicas): "race(*3 fetch 1, cache 1)".
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
	if p.peek() != '@' {
		return p.replicas()
	}
	p.i++
	name := p.word()
	if name == "" {
		return ast.Node{}, p.errorf("want a name right after '@', found %q", p.rest())
	}
	var after []string
	if p.i < len(p.s) && p.s[p.i] == '[' {
		var err error
		if after, err = p.names('[', ']', "after"); err != nil {
			return ast.Node{}, err
		}
	}
	if p.peek() == '@' {
		return ast.Node{}, p.errorf("a node has one name: %q already names it", name)
	}
	n, err := p.replicas()
	if err != nil {
		return ast.Node{}, err
	}
	n.Name = name
	if len(after) > 0 {
		n.After = after
	}
	return n, nil
}

// word reads a NAME at the current position, without skipping white space.
func (p *wfParser) word() string {
	start := p.i
	for p.i < len(p.s) && isNameByte(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// names reads a list of names between open, at the current position, and
// close, separated by white space: an after or inputs list.
func (p *wfParser) names(open, close byte, what string) ([]string, error) {
	p.i++ // open
	list := []string{}
	for {
		p.space()
		switch {
		case p.i >= len(p.s):
			return nil, p.errorf("%s list opened with %q is not closed by %q", what, open, close)
		case p.s[p.i] == close:
			p.i++
			return list, nil
		}
		w := p.word()
		if w == "" {
			return nil, p.errorf("want a name or %q in the %s list, found %q", close, what, p.rest())
		}
		list = append(list, w)
	}
}

// replicas reads a node without its name: "*N " and the bare node.
func (p *wfParser) replicas() (ast.Node, error) {
	if p.peek() != '*' {
		return p.bare()
	}
	p.i++
	start := p.i
	k := 0
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' && k < 1e6 {
		k = k*10 + int(p.s[p.i]-'0')
		p.i++
	}
	if p.i == start {
		return ast.Node{}, p.errorf("want a number of replicas right after '*', found %q", p.rest())
	}
	n, err := p.bare()
	if err != nil {
		return ast.Node{}, err
	}
	n.Replicas = k
	return n, nil
}

// bare reads a node without its name.
func (p *wfParser) bare() (ast.Node, error) {
	start := p.i
	name := p.name()
	if name == "" {
		if p.i >= len(p.s) {
			return ast.Node{}, p.errorf("want a node (an action, seq(, par(, dag( or try(), found the end")
		}
		return ast.Node{}, p.errorf("want a node (an action, seq(, par(, dag( or try(), found %q", p.rest())
	}
	var inputs []string
	if p.i < len(p.s) && p.s[p.i] == '<' {
		var err error
		if inputs, err = p.names('<', '>', "inputs"); err != nil {
			return ast.Node{}, err
		}
	}
	if p.peek() == '(' {
		if inputs != nil {
			return ast.Node{}, p.errorf("inputs on %s( (only an action takes inputs)", name)
		}
		p.i++
		switch name {
		case "seq", "par", "dag", "race":
			kids, err := p.list()
			if err != nil {
				return ast.Node{}, err
			}
			switch name {
			case "seq":
				return ast.Seq(kids...), nil
			case "par":
				return ast.Par(kids...), nil
			case "race":
				return ast.Race(kids...), nil
			}
			return ast.Dag(kids...), nil
		case "try":
			return p.try()
		}
		p.i = start
		p.space()
		return ast.Node{}, p.errorf("unknown node %q (want seq(, par(, dag(, race( or try()", name+"(")
	}
	payload, err := p.payload()
	if err != nil {
		return ast.Node{}, err
	}
	var n ast.Node
	switch {
	case payload == "":
		n = ast.Act(name, nil)
	case json.Valid([]byte(payload)):
		n = ast.Act(name, json.RawMessage(payload))
	default:
		n = ast.Act(name, payload)
	}
	if len(inputs) > 0 {
		n.Inputs = inputs
	}
	return n, nil
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
// JSON otherwise (log "a,b", log "1"). Names, afters and inputs are
// written as ParseWorkflow reads them: @c[a b] merge<a b>.
func FormatWorkflow(n ast.Node) string {
	var b strings.Builder
	formatNode(&b, &n)
	return b.String()
}

func formatNode(b *strings.Builder, n *ast.Node) {
	if n.Name != "" {
		b.WriteByte('@')
		b.WriteString(n.Name)
		if len(n.After) > 0 {
			formatNames(b, '[', n.After, ']')
		}
		b.WriteByte(' ')
	}
	if n.Replicas != 0 {
		fmt.Fprintf(b, "*%d ", n.Replicas)
	}
	switch n.Kind {
	case ast.KindAct:
		b.WriteString(n.Action)
		if len(n.Inputs) > 0 {
			formatNames(b, '<', n.Inputs, '>')
		}
		if len(n.Payload) > 0 {
			b.WriteByte(' ')
			b.WriteString(formatPayload(n.Payload))
		}
	case ast.KindSeq, ast.KindPar, ast.KindDag, ast.KindRace:
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

func formatNames(b *strings.Builder, open byte, names []string, close byte) {
	b.WriteByte(open)
	b.WriteString(strings.Join(names, " "))
	b.WriteByte(close)
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
