package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/store"
)

func resumeCommand() command {
	return command{
		name:    "resume",
		summary: "finish every unfinished job in the store",
		usage:   "baton resume [--store PATH] [--workers N]",
		about: `
Runs every unfinished job in the store to its end: jobs interrupted by
Ctrl-C or a crash continue where they stopped, without repeating actions
whose results were saved. Prints a summary line per job. Exit status: 0 if
all succeeded, 1 if any failed, 2 for an error, 130 when interrupted.`,
		run: (*cli).resume,
	}
}

func (c *cli) resume(ctx context.Context, args []string) int {
	cmd := resumeCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	workers := fset.Int("workers", 4, "run at most `N` actions at once")
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return code
	case len(pos) != 0:
		return c.usageError(cmd, "takes no arguments, got %q", pos)
	case *workers < 1:
		return c.usageError(cmd, "--workers must be at least 1, got %d", *workers)
	}
	st, path, err := c.openStore(*storeArg, false)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	defer st.Close()
	infos, err := st.List(ctx, store.Query{Unfinished: true})
	if err != nil {
		c.errorf("list jobs in %s: %v", path, err)
		return exitError
	}
	var ids []job.ID
	for _, in := range infos {
		if !in.Status.Settled() {
			ids = append(ids, in.ID)
		}
	}
	if len(ids) == 0 {
		fmt.Fprintf(c.stdout, "no unfinished jobs in %s\n", path)
		return exitOK
	}

	ctx, stopSignals := c.interruptible(ctx)
	defer stopSignals()
	con := newConsole(c.stdout, c.stderr)
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	r, err := inmem.New(inmem.Options{
		Store:        st,
		NoResume:     true,
		Registry:     builtins(con.Stdout(), client),
		Workers:      *workers,
		DrainTimeout: drainTimeout,
		Logger:       runnerLogger(con.Stderr()),
	})
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	fmt.Fprintf(con.Stdout(), "resuming %d unfinished job%s in %s\n", len(ids), plural(len(ids)), path)
	start := c.now()
	if err := r.Resume(ctx, ids...); err != nil {
		c.errorf("resume jobs in %s: %v", path, err)
	}
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()

	status := exitOK
	var waitErr error
	for _, id := range ids {
		j, err := r.Wait(ctx, id)
		if err != nil {
			waitErr = fmt.Errorf("job %s in %s: %w", id, path, err)
			break
		}
		fmt.Fprintln(con.Stdout(), summaryLine(j, c.now().Sub(start)))
		if j.Status() != job.StatusSucceeded {
			status = exitFailed
		}
	}
	r.Close()
	if err := <-ran; err != nil {
		c.errorf("resume jobs in %s: runner: %v", path, err)
		return exitError
	}
	if ctx.Err() != nil {
		fmt.Fprintf(con.Stderr(), "interrupted: the unfinished jobs are saved in %s; finish them with: baton resume --store %s\n", path, path)
		return exitInterrupted
	}
	if waitErr != nil {
		c.errorf("%v", waitErr)
		return exitError
	}
	return status
}
