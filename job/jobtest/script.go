package jobtest

import (
	"fmt"
	"strings"
)

// Pos is a line in a script file.
type Pos struct {
	File string
	Line int // 1-based
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d", p.File, p.Line) }

// Case is one command of a script with its expected output.
type Case struct {
	Pos   Pos      // where the command line is
	Cmd   string   // the command line, as written
	Input []string // the lines between the command line and "----"
	Want  string   // the expected output: "" or lines each ending in "\n"

	blank bool // a blank line ended the case in the file
}

// Script is a parsed script file: its cases and the comments and blank
// lines around them, kept so that Bytes can write the file back.
type Script struct {
	File   string
	chunks []chunk
}

// chunk is either lines of text kept verbatim or a case.
type chunk struct {
	text []string
	c    *Case
}

// Separator divides a command from its expected output.
const Separator = "----"

// ParseScript reads a script file. The format, in the style of
// cockroachdb/datadriven:
//
//	# comments and blank lines between cases are kept as they are
//	command args...
//	optional input lines
//	----
//	expected output, up to a blank line or the end of the file
//
// Expected output that itself holds blank lines is written between a
// doubled separator: "----" "----" before it and "----" "----" after it.
// Bytes does so on its own when an output needs it.
//
// Errors name the file and line.
func ParseScript(file string, data []byte) (*Script, error) {
	s := &Script{File: file}
	text := string(data)
	if text == "" {
		return s, nil
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var kept []string
	flush := func() {
		if len(kept) > 0 {
			s.chunks = append(s.chunks, chunk{text: kept})
			kept = nil
		}
	}
	for i := 0; i < len(lines); {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			kept = append(kept, l)
			i++
			continue
		}
		flush()
		c := &Case{Pos: Pos{file, i + 1}, Cmd: l}
		if l == Separator {
			return nil, fmt.Errorf("%s: %s with no command before it", c.Pos, Separator)
		}
		for i++; i < len(lines) && lines[i] != Separator; i++ {
			if strings.TrimSpace(lines[i]) == "" {
				return nil, fmt.Errorf("%s: blank line after command %q, before its %s line", Pos{file, i + 1}, l, Separator)
			}
			c.Input = append(c.Input, lines[i])
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s: command %q has no %s line", c.Pos, l, Separator)
		}
		i++ // the separator
		var want []string
		if i < len(lines) && lines[i] == Separator {
			// Doubled separator: output up to "----" "----".
			open := i
			for i++; ; i++ {
				if i+1 >= len(lines) {
					return nil, fmt.Errorf("%s: output opened with a doubled %s is not closed by one", Pos{file, open + 1}, Separator)
				}
				if lines[i] == Separator && lines[i+1] == Separator {
					break
				}
				want = append(want, lines[i])
			}
			i += 2
			if i < len(lines) && strings.TrimSpace(lines[i]) != "" {
				return nil, fmt.Errorf("%s: want a blank line after the closing %s %s", Pos{file, i + 1}, Separator, Separator)
			}
		} else {
			for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
				want = append(want, lines[i])
			}
		}
		if i < len(lines) {
			c.blank = true
			i++
		}
		if len(want) > 0 {
			c.Want = strings.Join(want, "\n") + "\n"
		}
		s.chunks = append(s.chunks, chunk{c: c})
	}
	flush()
	return s, nil
}

// Cases returns the script's cases in order. Setting a case's Want and
// calling Bytes rewrites the expected output.
func (s *Script) Cases() []*Case {
	var cs []*Case
	for _, ch := range s.chunks {
		if ch.c != nil {
			cs = append(cs, ch.c)
		}
	}
	return cs
}

// Bytes writes the script back: for a script as parsed, the bytes it was
// read from (up to a missing final newline); with new Want values, the
// file with its expected output rewritten.
func (s *Script) Bytes() []byte {
	var b strings.Builder
	for k, ch := range s.chunks {
		if ch.c == nil {
			for _, l := range ch.text {
				b.WriteString(l)
				b.WriteByte('\n')
			}
			continue
		}
		c := ch.c
		b.WriteString(c.Cmd)
		b.WriteByte('\n')
		for _, l := range c.Input {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		b.WriteString(Separator + "\n")
		want := c.Want
		if want != "" && !strings.HasSuffix(want, "\n") {
			want += "\n"
		}
		if needsDouble(want) {
			b.WriteString(Separator + "\n")
			b.WriteString(want)
			b.WriteString(Separator + "\n" + Separator + "\n")
		} else {
			b.WriteString(want)
		}
		if c.blank || k < len(s.chunks)-1 {
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}

// needsDouble reports whether output must go between doubled separators:
// it holds a blank line, or starts with a separator line.
func needsDouble(out string) bool {
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.TrimSpace(l) == "" && out != "" {
			return true
		}
	}
	return strings.HasPrefix(out, Separator+"\n")
}
