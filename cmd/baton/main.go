// Command baton runs baton workflows on this machine and shows what they
// did. Jobs are kept in a bolt store file, so a run that is interrupted
// (Ctrl-C, a crash) can be finished later with baton resume.
//
//	baton run examples/hello.json       run a workflow and wait for it
//	baton resume                        finish every unfinished job
//	baton status [JOB]                  list jobs, or show one
//	baton history JOB                   the results each step applied
//	baton inspect --format dot JOB      the tree as text, JSON, dot, mermaid or SVG
//	baton serve                         the jobs over HTTP (docs/api.md), run here
//
// With --zk HOST:PORT, jobs are kept in ZooKeeper instead, and run by any
// number of worker processes on any machines:
//
//	baton worker --zk HOST:PORT         run the built-in actions until stopped
//	baton submit --zk HOST:PORT FILE    submit a workflow, print its job ID
//	baton status --zk HOST:PORT         the jobs, the workers, the queue
//	baton drain --zk HOST:PORT NAME     take a worker out of service for good
//	baton placement --zk HOST:PORT      show or set the placement settings
//
// With --kafka HOST:PORT, jobs are kept in Kafka topics (named under
// --prefix), and run by any number of worker processes, each a restarter
// (it makes the transitions of the jobs of its partitions) and a worker
// (it runs actions):
//
//	baton worker --kafka HOST:PORT      run the built-in actions until stopped
//	baton submit --kafka HOST:PORT FILE submit a workflow, print its job ID
//	baton status --kafka HOST:PORT      the jobs, the restarters, the action
//	                                    topics, and those no worker consumes
//
// history, inspect, cancel and delete take --kafka too; resume does not
// (restarters resume jobs by themselves).
//
// While baton serve holds the jobs, status, history, inspect, cancel,
// delete and submit reach them through it, printing the same text:
//
//	baton status --server http://127.0.0.1:8080 [--json] JOB
//
// Run baton help for the details. Exit status: 0 success, 1 a job failed,
// 2 bad usage, bad input or an error, 3 the store is damaged, full,
// failing or in use (or ZooKeeper or Kafka cannot be reached), 130
// interrupted.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1   // a job failed
	exitError       = 2   // usage, bad input or other errors
	exitStore       = 3   // the store cannot be used: damaged, full, failing, in use
	exitInterrupted = 130 // SIGINT or SIGTERM
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole command, testable in-process: it reads args (without
// the program name), writes to stdout and stderr, and returns the exit
// status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{
		stdin:  stdin,
		stdout: stdout,
		stderr: stderr,
		getenv: os.Getenv,
		now:    time.Now,
	}
	return c.main(context.Background(), args)
}

// cli is one invocation of the command: its streams, environment and
// clock. Tests fill it in directly to control the context and the clock.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	now            func() time.Time
	// noSignals leaves SIGINT and SIGTERM alone; the context alone
	// interrupts. For tests.
	noSignals bool
}

// command is one subcommand.
type command struct {
	name    string
	summary string // one line, for baton help
	usage   string // the usage line, after "usage: "
	about   string // a paragraph for baton CMD --help
	// run runs the command. Its error carries the exit status (a
	// codeError; exitError for any other error) and, unless the command
	// printed its messages itself, the message main prints.
	run func(c *cli, ctx context.Context, args []string) error
}

// commands returns every subcommand, in the order baton help lists them.
// It is a function, not a variable, because help refers back to it.
func commands() []command {
	return []command{runCommand(), submitCommand(), workerCommand(), drainCommand(), undrainCommand(), keysCommand(), placementCommand(), resumeCommand(), serveCommand(), statusCommand(), historyCommand(), inspectCommand(), cancelCommand(), signalCommand(), deleteCommand(), helpCommand()}
}

func lookup(name string) (command, bool) {
	for _, cmd := range commands() {
		if cmd.name == name {
			return cmd, true
		}
	}
	return command{}, false
}

func (c *cli) main(ctx context.Context, args []string) int {
	if len(args) == 0 {
		c.errorf("no command given")
		c.mainUsage(c.stderr)
		return exitError
	}
	switch args[0] {
	case "-h", "-help", "--help":
		c.mainUsage(c.stdout)
		return exitOK
	}
	cmd, ok := lookup(args[0])
	if !ok {
		c.errorf("unknown command %q (run 'baton help' for the list)", args[0])
		return exitError
	}
	return c.exit(cmd.run(c, ctx, args[1:]))
}

// exit prints the message of err, a command's, and returns the exit
// status it carries: the one place a command's outcome becomes a status.
func (c *cli) exit(err error) int {
	if err != nil && err.Error() != "" {
		c.errorf("%v", err)
	}
	return exitCode(err)
}

// errorf prints an error line, "baton: ...", on stderr.
func (c *cli) errorf(format string, args ...any) {
	fmt.Fprintf(c.stderr, "baton: "+format+"\n", args...)
}
