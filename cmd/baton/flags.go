package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// flagSet returns an empty flag set for cmd. It prints nothing itself:
// parse reports errors and help.
func flagSet(cmd command) *flag.FlagSet {
	fs := flag.NewFlagSet("baton "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args for cmd, allowing flags after positional arguments
// (baton run FILE --store PATH), and returns the positional arguments.
// Everything after "--" is positional. When ok is false the command must
// return code: help was printed (0), or a usage error (2).
func (c *cli) parse(cmd command, fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			c.commandUsage(c.stdout, cmd, fs)
			return nil, exitOK, false
		}
		if err != nil {
			c.usageError(cmd, "%v", err)
			return nil, exitError, false
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), 0, true
		}
		if len(rest) == 0 {
			return pos, 0, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// usageError prints a usage error for cmd on stderr, and returns the
// error that ends the command with exitError.
func (c *cli) usageError(cmd command, format string, args ...any) error {
	c.errorf("%s: %s", cmd.name, fmt.Sprintf(format, args...))
	fmt.Fprintf(c.stderr, "usage: %s\nRun 'baton %s --help' for details.\n", cmd.usage, cmd.name)
	return exitWith(exitError)
}

// commandUsage prints cmd's help: usage line, description, flags.
func (c *cli) commandUsage(w io.Writer, cmd command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", cmd.usage, strings.TrimSpace(cmd.about))
	var hasFlags bool
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintf(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// storeFlag adds the --store flag shared by every command that reads or
// writes jobs.
func storeFlag(fs *flag.FlagSet) *string {
	return fs.String("store", "", "the store file `PATH`, in a directory that exists (default $BATON_STORE, the same; else $XDG_STATE_HOME/baton/baton.db or ~/.local/state/baton/baton.db, whose directory is made)")
}

// hostPorts splits the value of flag --name, a list of addresses separated
// by commas, each HOST:PORT or HOST (defaultPort), into HOST:PORT
// addresses. what names an address in messages: "server", "broker".
func hostPorts(name, what, value, defaultPort string) ([]string, error) {
	var out []string
	for s := range strings.SplitSeq(value, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, fmt.Errorf("--%s %q has an empty %s address", name, value, what)
		}
		host, port := s, defaultPort
		if h, p, err := net.SplitHostPort(s); err == nil {
			host, port = h, p
		} else if strings.Contains(s, ":") && !strings.HasPrefix(s, "[") {
			return nil, fmt.Errorf("--%s: bad %s address %q: want HOST:PORT", name, what, s)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("--%s: bad port in %q: want a number from 1 to 65535", name, s)
		}
		if host == "" {
			return nil, fmt.Errorf("--%s: no host in %q", name, s)
		}
		out = append(out, net.JoinHostPort(host, port))
	}
	return out, nil
}
