package jobtest

import (
	"fmt"
	"strconv"
	"strings"
)

// splitArgs splits a command line into words. Words are separated by white
// space; ';' is a word of its own; a word that starts with '"' is a Go
// quoted string, and is never read as a key=value option; key= followed by
// a Go quoted string is the key, '=' and the unquoted string; '#' at the
// start of a word begins a comment that runs to the end of the line. Other
// quotes inside a word are kept as they are, so out={"n":"a b"} is one word.
func splitArgs(line string) ([]word, error) {
	var words []word
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '#':
			return words, nil
		case c == ';':
			words = append(words, word{s: ";"})
			i++
			continue
		case c == '"':
			w, n, err := unquote(line[i:])
			if err != nil {
				return nil, err
			}
			words = append(words, word{s: w, quoted: true})
			i += n
			if i < len(line) && line[i] != ' ' && line[i] != '\t' && line[i] != ';' {
				return nil, fmt.Errorf("quoted string %s is followed by %q; put a space after it", line[i-n:i], line[i])
			}
			continue
		}
		start := i
		for i < len(line) && line[i] != ' ' && line[i] != '\t' && line[i] != ';' {
			if line[i] == '=' && i+1 < len(line) && line[i+1] == '"' && !strings.ContainsAny(line[start:i], `"{[`) {
				w, n, err := unquote(line[i+1:])
				if err != nil {
					return nil, err
				}
				words = append(words, word{s: line[start:i+1] + w})
				i += 1 + n
				if i < len(line) && line[i] != ' ' && line[i] != '\t' && line[i] != ';' {
					return nil, fmt.Errorf("quoted string %s is followed by %q; put a space after it", line[i-n:i], line[i])
				}
				start = -1
				break
			}
			if line[i] == '"' {
				// A quote inside a word: skip the quoted part so that spaces
				// inside it do not split the word.
				q, err := strconv.QuotedPrefix(line[i:])
				if err == nil {
					i += len(q)
					continue
				}
			}
			i++
		}
		if start >= 0 {
			words = append(words, word{s: line[start:i]})
		}
	}
	return words, nil
}

func unquote(s string) (w string, n int, err error) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", 0, fmt.Errorf("bad quoted string at %q", s)
	}
	w, err = strconv.Unquote(q)
	if err != nil {
		return "", 0, fmt.Errorf("bad quoted string %s", q)
	}
	return w, len(q), nil
}

// word is one word of a command line.
type word struct {
	s      string
	quoted bool // written as a Go quoted string
}

// option splits a "key=value" word. Quoted words are never options.
func (w word) option() (key, value string, ok bool) {
	if w.quoted {
		return "", "", false
	}
	i := strings.IndexByte(w.s, '=')
	if i <= 0 || strings.ContainsAny(w.s[:i], `"{[`) {
		return "", "", false
	}
	return w.s[:i], w.s[i+1:], true
}

// quoteArg writes s as a plain word (a message) that splitArgs reads back
// as s and not as an option.
func quoteArg(s string) string {
	if ws, err := splitArgs(s); err == nil && len(ws) == 1 && ws[0].s == s {
		if _, _, opt := ws[0].option(); !opt {
			return s
		}
	}
	return strconv.Quote(s)
}

// quoteValue writes key=value so that splitArgs reads it back as one
// option with that value.
func quoteValue(key, value string) string {
	w := key + "=" + value
	if ws, err := splitArgs(w); err == nil && len(ws) == 1 && ws[0].s == w {
		return w
	}
	return key + "=" + strconv.Quote(value)
}
