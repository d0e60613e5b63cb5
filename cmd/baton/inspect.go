package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/job"
)

func inspectCommand() command {
	return command{
		name:    "inspect",
		summary: "show a job as text, JSON, Graphviz dot, mermaid or SVG",
		usage:   "baton inspect [--store PATH | --zk HOST:PORT[,...] [--root PATH] | --kafka HOST:PORT[,...] [--prefix NAME] | --server URL [--token-file FILE]] [--format text|json|dot|mermaid|svg | --json] [--version V] JOB",
		about: `
Shows JOB, now or as it was at version V (see 'baton history'):
  text     the tree with the state of every node (a started map's
           copies counted per state, a loop's iteration, the signal
           a wait waits for and the one it took, what a choice read
           and chose), the signals waits took and those kept for
           waits to come, then the worker each attempt ran on, up to
           V (read from the job's history)
  json     the job's encoding, as stored in snapshots
  dot      a Graphviz digraph, nodes coloured by status:
           baton inspect --format dot JOB | dot -Tsvg > job.svg
  mermaid  a mermaid flowchart, for Markdown
  svg      the job page's drawing, every node a box filled by its state
           (groups of over 100 children or map copies closed, at
           most 2,000 boxes):
           baton inspect --format svg JOB > job.svg
--json prints the API's JSON of the job (GET /api/v1/jobs/JOB?version=V).
With --server URL, through 'baton serve' (see 'baton status'), in every
format but json, the stored encoding, which a server does not give.`,
		run: (*cli).inspect,
	}
}

func (c *cli) inspect(ctx context.Context, args []string) error {
	cmd := inspectCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	z := c.addZKFlags(fset, true)
	k := c.addKafkaFlags(fset, z, true)
	srv := c.addServerFlags(fset)
	format := fset.String("format", "text", "output `FORMAT`: text, json, dot, mermaid or svg")
	asJSON := jsonFlag(fset)
	version := fset.Uint64("version", 0, "show the job as it was at version `V` (default: the newest)")
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) != 1:
		return c.usageError(cmd, "want one job ID, got %d arguments", len(pos))
	case *asJSON && given(fset, "format"):
		return c.usageError(cmd, "--json and --format exclude each other: --json prints the API's JSON of the job, --format json its stored encoding")
	}
	if err := checkBackendFlags(srv, z, k); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	switch *format {
	case "text", "json", "dot", "mermaid", "svg":
	default:
		return c.usageError(cmd, "unknown --format %q (want text, json, dot, mermaid or svg)", *format)
	}
	if *format == "json" && srv.on() {
		return c.usageError(cmd, "--format json is the job's stored encoding, which a server does not give: --json prints the API's JSON of the job")
	}
	id := job.ID(pos[0])
	if err := checkID(id); err != nil {
		return withCode(exitError, err)
	}
	b, err := c.openBackend(ctx, *storeArg, z, k, openOptions{mode: readOnly, server: srv})
	if err != nil {
		return err
	}
	defer b.Close()
	v := view(b)

	var out string
	switch {
	case *asJSON || *format == "text":
		j, err := v.viewJob(ctx, id, *version)
		if err != nil {
			return withCode(max(exitError, exitCode(err), storeExit(err)), err)
		}
		if *asJSON {
			return writeJSON(c.stdout, j)
		}
		out = describeJob(j)
		// Where each attempt ran is in the history, not in the job.
		if h, err := v.viewHistory(ctx, id); err == nil {
			out += workersText(h, j.Version)
		}
	case *format == "json":
		j, err := loadJobAt(ctx, b, id, *version)
		if err != nil {
			return withCode(max(exitError, storeExit(err)), err)
		}
		if out, err = renderJSON(j); err != nil {
			return fmt.Errorf("job %s: %v", id, err)
		}
	default:
		if out, err = v.viewGraph(ctx, id, *version, *format); err != nil {
			return withCode(max(exitError, exitCode(err), storeExit(err)), err)
		}
	}
	fmt.Fprint(c.stdout, out)
	return nil
}

func renderJSON(j job.Job) (string, error) {
	b, err := job.Encode(j)
	if err != nil {
		return "", err
	}
	return string(b) + "\n", nil
}

// workersText is the "ran on:" part of inspect's text: one line per
// attempt whose result names its worker, applied by version upTo at the
// latest, in the order the results were applied; "" when none does.
func workersText(h api.History, upTo uint64) string {
	var b strings.Builder
	for _, st := range h.Steps {
		if st.Version > upTo {
			break
		}
		for _, r := range st.Results {
			if r.Worker == "" {
				continue
			}
			if b.Len() == 0 {
				b.WriteString("ran on:\n")
			}
			fmt.Fprintf(&b, "  %s on %s\n", r.ActionID, r.Worker)
		}
	}
	return b.String()
}
