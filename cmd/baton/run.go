package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// drainTimeout is how long actions in flight may finish after Ctrl-C
// before they are handed back to the store, to run again on resume.
const drainTimeout = 2 * time.Second

// maxWorkflowBytes is the size limit of a workflow file or of a workflow
// read from standard input; maxWorkflowSize says it in words (for the help
// and messages; keep the two in step).
const (
	maxWorkflowBytes = 16 << 20
	maxWorkflowSize  = "16 MiB"
)

func runCommand() command {
	return command{
		name:    "run",
		summary: "run a workflow file and wait for it to finish",
		usage:   "baton run FILE [--store PATH] [--id ID] [--workers N] [--timeout D] [--retain D] [--quiet] [--verbose]",
		about: `
Runs the workflow in FILE, a JSON file (the versioned form: {"version":1,"root":...}),
and waits for it. If FILE is -, the workflow is read from standard input and
the job ID defaults to stdin and a timestamp. Workflow files are limited to ` + maxWorkflowSize + `.
Every step is saved in the store before its actions run, so after Ctrl-C or
a crash the job can be finished with 'baton resume'.
Prints the final tree and a summary line. Exit status: 0 if the job
succeeded, 1 if it failed, 2 for bad usage, a bad file or an error, 3 if
the store is damaged, full or failing (the job stays as last saved), 130
when interrupted.

Built-in actions:
  log       prints its payload after the job and action IDs (a string as it is,
            anything else as JSON)
  sleep     waits: "200ms", "1.5s" or a number of milliseconds
  fail      fails with its payload as the message
  value     outputs its payload as it is: a value for a choice's on, a list
            for a map's over, what a loop's until compares
  http.get  GET a URL: "https://..." or {"url":..., "timeout":"5s", "max_bytes":N};
            timeout 10s and 1 MiB by default; a status other than 2xx fails;
            output {"status":200,"bytes":N,"body":"<first 4 KiB>"}`,
		run: (*cli).run,
	}
}

func (c *cli) run(ctx context.Context, args []string) error {
	cmd := runCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	idArg := fset.String("id", "", "the job `ID` (default: the file's base name, or stdin, and a UTC timestamp)")
	workers := fset.Int("workers", 4, "run at most `N` actions at once")
	timeout := fset.Duration("timeout", 0, "time limit `D` for each action, like 30s; an action that overruns fails (0: none)")
	quiet := fset.Bool("quiet", false, "print only what actions print and the summary line: no tree, no progress line")
	verbose := fset.Bool("verbose", false, "log each action's start and end and the job's end (failed actions are logged without it)")
	retain := retainFlag(fset)
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) != 1:
		return c.usageError(cmd, "want one workflow file, got %d arguments", len(pos))
	case *workers < 1:
		return c.usageError(cmd, "--workers must be at least 1, got %d", *workers)
	case *timeout < 0:
		return c.usageError(cmd, "--timeout must not be negative, got %v", *timeout)
	case *retain < 0:
		return c.usageError(cmd, "--retain must not be negative, got %v", *retain)
	}
	file := pos[0]
	source := file // how messages name the input
	if file == "-" {
		source = "standard input"
	}

	// Everything about the input is checked before the store is touched.
	root, err := readWorkflow(file, c.stdin)
	if err != nil {
		return withCode(exitError, err)
	}
	con := newConsole(c.stdout, c.stderr)
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	reg := builtins(con.Stdout(), client)
	if missing := reg.Missing(root); len(missing) > 0 {
		c.errorf("%s: unknown action%s %s (built-in actions: %s); nothing was run",
			source, plural(len(missing)), quoteAll(missing), strings.Join(reg.Names(), ", "))
		return exitWith(exitError)
	}
	id := job.ID(*idArg)
	if id == "" {
		base := file
		if file == "-" {
			base = "stdin"
		}
		id = defaultID(base, c.now())
	}
	if err := checkID(id); err != nil {
		return withCode(exitError, err)
	}

	// Only a store file: this process runs the job.
	b, err := c.openBoltBackend(*storeArg, create, *retain)
	if err != nil {
		return err
	}
	defer b.Close()
	st, path := b.st, b.path

	ctx, stopSignals := c.interruptible(ctx)
	defer stopSignals()
	// The runner would resume every unfinished job in the store; this
	// command runs only its own and leaves the others to 'baton resume'.
	r, err := b.local(workerOptions{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: *workers, ActionTimeout: *timeout, Logger: runnerLoggerAt(con.Stderr(), logLevel(*verbose))}})
	if err != nil {
		return withCode(exitError, err)
	}
	start := c.now()
	if err := r.Submit(ctx, id, root); err != nil {
		if errors.Is(err, store.ErrExists) {
			return fmt.Errorf("job %s already exists in %s; choose another --id", id, path)
		}
		return withCode(storeExit(err), submitFailed(source, id, path, err))
	}
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	stopProgress := func() {}
	if !*quiet {
		stopProgress = c.showProgress(con, summaries(r.Status), id, start)
	}
	stopHint := c.hintSignals(con, r.Status, id, path)
	j, waitErr := r.Wait(ctx, id)
	stopHint()
	stopProgress()
	r.Close() // stops Run; after Ctrl-C it waits for the drain
	if err := <-ran; err != nil {
		// The store failed (a full disk, say): the job is as last saved.
		c.errorf("store %s failed: %v", path, cause(err))
		v := "not saved"
		if j, lerr := st.Load(context.Background(), id); lerr == nil {
			v = fmt.Sprintf("saved as of v%d", j.Version())
		}
		fmt.Fprintf(con.Stderr(), "job %s is %s; once the store can be written, finish it with: baton resume --store %s %s\n", id, v, path, id)
		return exitWith(exitStore)
	}
	took := c.now().Sub(start)

	if ctx.Err() != nil {
		// Interrupted: whatever finished during the drain is saved.
		if j, err := st.Load(context.Background(), id); err == nil && j.Done() {
			c.printResult(con, api.JobOf(j, true), took, *quiet)
			fmt.Fprintf(con.Stderr(), "interrupted: job %s had finished (%s)\n", id, j.Status())
			return exitWith(exitInterrupted)
		}
		fmt.Fprintf(con.Stderr(), "interrupted: job %s is saved in %s; finish it with: baton resume --store %s\n", id, path, path)
		return exitWith(exitInterrupted)
	}
	if waitErr != nil {
		return fmt.Errorf("job %s in %s: %v", id, path, waitErr)
	}
	c.printResult(con, api.JobOf(j, true), took, *quiet)
	if j.Status() != job.StatusSucceeded {
		return exitWith(exitFailed)
	}
	return nil
}

// printResult prints the final tree (unless quiet) and the summary line.
func (c *cli) printResult(con *console, v api.Job, took time.Duration, quiet bool) {
	out := con.Stdout()
	if !quiet {
		fmt.Fprint(out, describeJob(v))
	}
	fmt.Fprintln(out, summaryLine(v.Summary, took))
}

// readWorkflow reads and decodes a workflow file, or standard input when
// file is "-", at most maxWorkflowBytes of it. Errors name the file; a JSON
// syntax error has its line and column.
func readWorkflow(file string, stdin io.Reader) (ast.Node, error) {
	source := file
	var data []byte
	var err error
	if file == "-" {
		source = "standard input"
		data, err = readWorkflowStdin(stdin)
	} else {
		data, err = readWorkflowFile(file)
	}
	if err != nil {
		return ast.Node{}, err
	}
	what := "the file"
	if file == "-" {
		what = "the input"
	}
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return ast.Node{}, fmt.Errorf(`%s: workflow: %s is empty: want a workflow like {"version":1,"root":...}`, source, what)
	case bytes.HasPrefix(data, byteOrderMark):
		return ast.Node{}, fmt.Errorf("%s: workflow: %s starts with a byte-order mark (EF BB BF): save it without one", source, what)
	}
	root, err := ast.Decode(data)
	if err != nil {
		return ast.Node{}, fmt.Errorf("%s: %v", source, err)
	}
	return root, nil
}

// byteOrderMark is UTF-8's, which some editors put first in a file; JSON
// has none, and the decoder would call it an invalid character 'ï'.
var byteOrderMark = []byte("\xef\xbb\xbf")

// readWorkflowStdin reads a workflow from standard input, at most
// maxWorkflowBytes.
func readWorkflowStdin(stdin io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(stdin, maxWorkflowBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("cannot read standard input: %v", err)
	case len(data) > maxWorkflowBytes:
		return nil, fmt.Errorf("standard input holds more than %s; workflows are limited to %s", maxWorkflowSize, maxWorkflowSize)
	}
	return data, nil
}

// readWorkflowFile reads a workflow file: a regular file of at most
// maxWorkflowBytes.
func readWorkflowFile(file string) ([]byte, error) {
	what := "workflow file " + file
	fi, err := os.Stat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s does not exist", what)
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %v", what, pathErr(err))
	case !fi.Mode().IsRegular():
		err := notRegular(what, fi.Mode())
		if fi.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0 {
			// A shell's <(...) or /dev/stdin: '-' reads such a stream.
			err = fmt.Errorf("%v (give - to read the workflow from standard input)", err)
		}
		return nil, err
	case fi.Size() > maxWorkflowBytes:
		return nil, fmt.Errorf("%s is %d bytes; workflow files are limited to %s", what, fi.Size(), maxWorkflowSize)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", what, pathErr(err))
	}
	defer f.Close()
	// The file may have grown since Stat: read no more than the limit.
	data, err := io.ReadAll(io.LimitReader(f, maxWorkflowBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %v", what, pathErr(err))
	case len(data) > maxWorkflowBytes:
		return nil, fmt.Errorf("%s is more than %s; workflow files are limited to %s", what, maxWorkflowSize, maxWorkflowSize)
	}
	return data, nil
}

// defaultID is the file's base name without its extension, then a
// sortable UTC timestamp: hello-20260102T150405.123Z. Characters a job ID
// may not hold become '-'.
func defaultID(file string, now time.Time) job.ID {
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	base = strings.Map(func(r rune) rune {
		if r == '/' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return '-'
		}
		return r
	}, strings.ToValidUTF8(base, "-"))
	for len(base) > 100 {
		_, size := utf8.DecodeLastRuneInString(base)
		base = base[:len(base)-size]
	}
	if base == "" || base == "." {
		base = "job"
	}
	return job.ID(base + "-" + now.UTC().Format("20060102T150405.000Z"))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
