package main

import (
	"context"
	"fmt"
	"io"
)

func helpCommand() command {
	return command{
		name:    "help",
		summary: "show help for baton or for one command",
		usage:   "baton help [COMMAND]",
		about:   "Shows the list of commands, or the usage and flags of COMMAND.",
		run:     (*cli).help,
	}
}

func (c *cli) help(_ context.Context, args []string) error {
	cmd := helpCommand()
	fs := flagSet(cmd)
	pos, code, ok := c.parse(cmd, fs, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) == 0:
		c.mainUsage(c.stdout)
		return nil
	case len(pos) > 1:
		return c.usageError(cmd, "want at most one command name, got %d arguments", len(pos))
	}
	target, found := lookup(pos[0])
	if !found {
		return fmt.Errorf("help: unknown command %q (run 'baton help' for the list)", pos[0])
	}
	// Asking the command itself for --help prints its flags too.
	return target.run(c, context.Background(), []string{"--help"})
}

// mainUsage prints the list of commands.
func (c *cli) mainUsage(w io.Writer) {
	fmt.Fprint(w, `baton runs workflows: trees of actions in sequence, in parallel and in
try/rescue/finally blocks. Jobs are kept in a store file, so an interrupted
job can be finished later with 'baton resume'.

With --zk HOST:PORT[,...], jobs are kept in ZooKeeper instead: 'baton submit'
queues them, 'baton worker' processes (any number, on any machines) run
them, and status, history, inspect, resume, cancel and delete take --zk
(with --root and --auth) in place of --store.

With --kafka HOST:PORT[,...], jobs are kept in Kafka topics named under
--prefix: 'baton submit' hands them to the restarters, 'baton worker'
processes (each a restarter and a worker) run them, and status, history,
inspect and cancel take --kafka in place of --store (resume and delete do
not: the restarters resume jobs by themselves, and only they delete).
TLS and SASL: --tls, --tls-ca, --tls-cert, --tls-key, --sasl, --sasl-user.

While 'baton serve' holds the jobs, status, history, inspect, cancel,
signal, delete and submit reach them through it with --server URL (or
$BATON_SERVER), the token in $BATON_TOKEN or --token-file; --json on
status, history, inspect and submit prints the HTTP API's JSON.

usage: baton COMMAND [flags] [arguments]

Commands:
`)
	width := 0
	for _, cmd := range commands() {
		width = max(width, len(cmd.name))
	}
	for _, cmd := range commands() {
		fmt.Fprintf(w, "  %-*s %s\n", width, cmd.name, cmd.summary)
	}
	fmt.Fprint(w, `
Run 'baton COMMAND --help' for the usage and flags of a command.

Built-in actions: log, sleep, fail, value, http.get (see 'baton run --help').
Exit status: 0 success, 1 a job failed, 2 bad usage, bad input or an error,
3 the store is damaged, full, failing or in use (or ZooKeeper, Kafka or
the --server cannot be reached), or the server holds its most unfinished
jobs, 130 interrupted (the job stays in the store; finish it with
'baton resume').
`)
}
