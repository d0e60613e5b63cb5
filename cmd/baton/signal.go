package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

func signalCommand() command {
	return command{
		name:    "signal",
		summary: "send a signal to a job's wait",
		usage:   "baton signal [--store PATH | --zk HOST:PORT[,...] [--root PATH] | --kafka HOST:PORT[,...] [--prefix NAME] | --server URL [--token-file FILE]] [--id ID] [--data JSON|@FILE] JOB NAME",
		about: `
Sends the signal NAME to JOB: a wait node of that name ({"wait": NAME})
that runs takes it and succeeds with the payload as its output; with none
running, the job keeps the signal (at most 100) for the first wait of
that name to start. The payload is JSON (--data '{"ok": true}'), read
from a file with @FILE (@- reads standard input), null without
--data; at most 65536 bytes. The ID makes the signal idempotent: a
signal of the same name and ID sent again changes nothing, for the job's
whole life. Without --id, a random one is made and printed: send again
with it to retry safely.

With --store, the signal is applied here: the actions that the wait it
completes lets start wait for 'baton resume'. With --zk, it is saved in
ZooKeeper at once and applied (or by the workers, if this process stops
first). With --kafka, it goes to the restarter that owns the job (with no
restarter running, it waits in the topic for one). With --server URL, it
goes to 'baton serve' (the token: a write one, from $BATON_TOKEN or
--token-file).

Prints a line: whether a wait took the signal, or the job keeps it.
Exit status: 0 once the signal is sent (a signal sent before included,
even after the job finished: the line says what it did), 2 if the job
was not found or has finished (for a new signal), for a bad name, ID or payload,
or bad usage, 3 if the store is damaged, fails, or is in use.`,
		run: (*cli).signal,
	}
}

func (c *cli) signal(ctx context.Context, args []string) error {
	cmd := signalCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	z := c.addZKFlags(fset, true)
	k := c.addKafkaFlags(fset, z, true)
	srv := c.addServerFlags(fset)
	sigID := fset.String("id", "", "the signal's `ID`, which makes it idempotent (default: a random one, printed)")
	payloadArg := fset.String("data", "", "the signal's payload: `JSON`, or @FILE to read it from FILE (@- standard input); null if not given")
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) != 2:
		return c.usageError(cmd, "want a job ID and a signal name, got %d arguments", len(pos))
	}
	if err := checkBackendFlags(srv, z, k); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	id, name := job.ID(pos[0]), pos[1]
	if err := checkID(id); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	if msg := ast.CheckSignalName(name); msg != "" {
		return c.usageError(cmd, "signal %s", msg)
	}
	if given(fset, "data") && *payloadArg == "" {
		return c.usageError(cmd, "--data is empty: give a JSON value (null for none)")
	}
	payload, err := c.readPayload(*payloadArg)
	if err != nil {
		return c.usageError(cmd, "--data: %v", err)
	}
	if *sigID == "" {
		*sigID = randomSignalID()
	}
	if err := (job.Signal{Name: name, ID: *sigID, Payload: payload}).Check(); err != nil {
		return c.usageError(cmd, "%s", strings.TrimPrefix(err.Error(), "job: "))
	}
	b, err := c.openBackend(ctx, *storeArg, z, k, openOptions{mode: readWrite, server: srv})
	switch se, inUse := storeInUse(err); {
	case inUse:
		// 'baton run' (or resume) holds the file while the job runs, and
		// a wait is what keeps it running: say how to reach it.
		path, _ := c.storePath(*storeArg)
		se.msg += "; to signal a job while it runs, run it under 'baton serve --store " + path + "' and send it with 'baton signal --server URL'"
		return err
	case err != nil:
		return err
	}
	defer b.Close()
	cr, err := b.canceller(ctx)
	if err != nil {
		return withCode(exitError, err)
	}
	defer cr.close()
	path := b.where()
	s, err := view(b).viewSummary(ctx, id)
	if err != nil {
		c.errorf("%v", err)
		return exitWith(max(storeExit(err), exitCode(err)))
	}
	if s.Status != job.StatusRunning.String() {
		// The same name and ID again is a retry: say what the first did.
		if line, ok := sentBefore(ctx, view(b), id, name, *sigID, s.Status); ok {
			fmt.Fprintln(c.stdout, line)
			return nil
		}
		c.errorf("job %s in %s has finished (%s): no wait takes a signal", id, path, s.Status)
		return exitWith(exitError)
	}
	line, err := cr.signal(ctx, id, name, *sigID, payload)
	switch {
	case errors.Is(err, runner.ErrFinished):
		// It finished since: a retry still says what the first did.
		if s, err := view(b).viewSummary(ctx, id); err == nil {
			if line, ok := sentBefore(ctx, view(b), id, name, *sigID, s.Status); ok {
				fmt.Fprintln(c.stdout, line)
				return nil
			}
		}
		c.errorf("job %s in %s has finished: no wait takes a signal", id, path)
		return exitWith(exitError)
	case errors.Is(err, runner.ErrBadSignal):
		// The runner's checks: a name no wait of the job takes, a Kafka
		// message's size.
		c.errorf("signal job %s in %s: %s", id, path, runner.BadSignalReason(err))
		return exitWith(exitError)
	case err != nil:
		if strings.Contains(err.Error(), "job "+string(id)) {
			c.errorf("signal: %v", err) // it names the job (and the place) already
		} else {
			c.errorf("signal job %s in %s: %v", id, path, err)
		}
		return exitWith(max(storeExit(err), exitCode(err)))
	}
	fmt.Fprintln(c.stdout, line)
	return nil
}

// readPayload reads --data: "" is null (nil), @FILE the file's
// content (@- standard input), anything else the JSON itself. It must be
// JSON of at most job.MaxSignalPayload bytes.
func (c *cli) readPayload(arg string) (json.RawMessage, error) {
	if arg == "" {
		return nil, nil
	}
	data, where := []byte(arg), "the value"
	if file, ok := strings.CutPrefix(arg, "@"); ok {
		var r io.Reader
		switch file {
		case "":
			return nil, errors.New("@ names no file (@FILE, or @- for standard input)")
		case "-":
			r, where = c.stdin, "standard input"
		default:
			f, err := os.Open(file)
			if err != nil {
				return nil, fmt.Errorf("cannot read %s: %v", file, pathErr(err))
			}
			defer f.Close()
			r, where = f, file
		}
		var err error
		if data, err = io.ReadAll(io.LimitReader(r, job.MaxSignalPayload+1)); err != nil {
			return nil, fmt.Errorf("cannot read %s: %v", where, pathErr(err))
		}
		if len(data) > job.MaxSignalPayload {
			return nil, fmt.Errorf("%s holds more than %d bytes, a signal's payload limit", where, job.MaxSignalPayload)
		}
	}
	if len(data) > job.MaxSignalPayload {
		return nil, fmt.Errorf("%d bytes is over the limit of %d bytes of a signal's payload", len(data), job.MaxSignalPayload)
	}
	if bytes.HasPrefix(data, byteOrderMark) {
		return nil, fmt.Errorf("%s starts with a byte-order mark (EF BB BF): save it without one", where)
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, fmt.Errorf("%s is not JSON: %v", where, err)
	}
	return data, nil
}

// sentBefore returns the line of a signal of this name and ID that the
// finished job id took or kept before it finished, and true; a retry of
// a signal sent before is no error, whenever it comes.
func sentBefore(ctx context.Context, v viewer, id job.ID, name, sigID, status string) (string, bool) {
	j, err := v.viewJob(ctx, id, 0)
	if err != nil || j.Signals == nil {
		return "", false
	}
	what := fmt.Sprintf("signal %s (id %s)", name, sigID)
	for _, t := range j.Signals.Taken {
		if t.Name == name && t.ID == sigID {
			return fmt.Sprintf("%s was taken by the wait at %s before job %s finished (%s)", what, ast.ShowPath(t.Path), id, status), true
		}
	}
	for _, k := range j.Signals.Kept {
		if k.Name == name && k.ID == sigID {
			return fmt.Sprintf("%s was kept by job %s, which finished (%s) before a wait took it", what, id, status), true
		}
	}
	return "", false
}

// randomSignalID is the ID of a signal sent without --id.
func randomSignalID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "cli-" + hex.EncodeToString(b[:])
}

// signalLine says what became of signal name/sigID sent to job j (as
// stored after it was sent): taken by a wait, kept, or sent (not applied
// yet, or ignored).
func signalLine(j job.Job, name, sigID string) string {
	what := fmt.Sprintf("signal %s (id %s)", name, sigID)
	kept, taken := j.Signals()
	for _, t := range taken {
		if t.Name == name && t.ID == sigID {
			return fmt.Sprintf("%s taken by the wait at %s: job %s at v%d", what, t.Path, j.ID(), j.Version())
		}
	}
	for _, k := range kept {
		if k.Name == name && k.ID == sigID {
			return fmt.Sprintf("%s kept by job %s for a wait to come (v%d)", what, j.ID(), j.Version())
		}
	}
	if j.Done() {
		return fmt.Sprintf("%s sent: job %s is %s at v%d", what, j.ID(), j.Status(), j.Version())
	}
	return fmt.Sprintf("%s sent to job %s", what, j.ID())
}
