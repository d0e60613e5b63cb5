package main

import (
	"context"
	"fmt"

	"github.com/batonwf/baton/internal/render"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

func inspectCommand() command {
	return command{
		name:    "inspect",
		summary: "show a job as text, JSON, Graphviz dot, mermaid or SVG",
		usage:   "baton inspect [--store PATH | --zk HOST:PORT[,...] [--root PATH] | --kafka HOST:PORT[,...] [--prefix NAME]] [--format text|json|dot|mermaid|svg] [--version V] JOB",
		about: `
Shows JOB, now or as it was at version V (see 'baton history'):
  text     the tree with the state of every node
  json     the job's encoding, as stored in snapshots
  dot      a Graphviz digraph, nodes coloured by status:
           baton inspect --format dot JOB | dot -Tsvg > job.svg
  mermaid  a mermaid flowchart, for Markdown
  svg      the job page's drawing, every node a box filled by its state
           (groups of over 100 children closed, at most 2,000 boxes):
           baton inspect --format svg JOB > job.svg`,
		run: (*cli).inspect,
	}
}

func (c *cli) inspect(ctx context.Context, args []string) error {
	cmd := inspectCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	z := c.addZKFlags(fset, true)
	k := c.addKafkaFlags(fset, z, true)
	format := fset.String("format", "text", "output `FORMAT`: text, json, dot, mermaid or svg")
	version := fset.Uint64("version", 0, "show the job as it was at version `V` (default: the newest)")
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) != 1:
		return c.usageError(cmd, "want one job ID, got %d arguments", len(pos))
	}
	if err := checkEngines(z, k, false); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	draw, ok := map[string]func(job.Job) (string, error){
		"text":    func(j job.Job) (string, error) { return job.Describe(j), nil },
		"json":    renderJSON,
		"dot":     func(j job.Job) (string, error) { return render.Dot(j), nil },
		"mermaid": func(j job.Job) (string, error) { return render.Mermaid(j), nil },
		"svg":     render.SVG,
	}[*format]
	if !ok {
		return c.usageError(cmd, "unknown --format %q (want text, json, dot, mermaid or svg)", *format)
	}
	id := job.ID(pos[0])
	if err := checkID(id); err != nil {
		return withCode(exitError, err)
	}
	b, err := c.openBackend(ctx, *storeArg, z, k, openOptions{mode: readOnly})
	if err != nil {
		return err
	}
	defer b.Close()

	var j job.Job
	if *version == 0 {
		j, err = loadJob(ctx, b, id)
	} else {
		var h store.History
		if h, err = loadHistory(ctx, b, id); err == nil {
			first, last := h.Origin.Version(), h.Origin.Version()+uint64(len(h.Steps))
			if *version < first || *version > last {
				return fmt.Errorf("job %s in %s has versions %d to %d, not %d", id, b.where(), first, last, *version)
			}
			j, err = h.At(*version)
			err = jobError(b, err, id)
		}
	}
	if err != nil {
		return withCode(exitError, err)
	}
	out, err := draw(j)
	if err != nil {
		return fmt.Errorf("job %s: %v", id, err)
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
