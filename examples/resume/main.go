// Command resume shows that a job on a bolt store survives a crash. It
// runs a workflow of slow steps; with -crash-after N it exits abruptly
// (os.Exit, no cleanup) right after the Nth step's result is saved. Run it
// again without the flag and it resumes the job: only the steps not yet
// done run, as its output shows.
//
//	go run ./examples/resume -crash-after 2   # runs 2 steps, then dies
//	go run ./examples/resume                  # runs the other 3
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

const jobID job.ID = "resume-demo"

// crashStatus is the exit status of a simulated crash.
const crashStatus = 3

func main() {
	fs := flag.NewFlagSet("resume", flag.ExitOnError)
	path := fs.String("store", filepath.Join(os.TempDir(), "baton-resume-example.db"), "the bolt store `file`")
	crashAfter := fs.Int("crash-after", 0, "exit abruptly once `N` steps are saved (0: never)")
	stepTime := fs.Duration("step", 300*time.Millisecond, "how long each step takes")
	fs.Parse(os.Args[1:])
	if err := demo(*path, *crashAfter, *stepTime); err != nil {
		log.Fatal(err)
	}
}

func demo(path string, crashAfter int, stepTime time.Duration) error {
	ctx := context.Background()
	st, err := bolt.Open(path, nil)
	if err != nil {
		return err
	}
	defer st.Close()

	submit := false
	switch j, err := st.Load(ctx, jobID); {
	case errors.Is(err, store.ErrNotFound):
		fmt.Printf("starting job %s in %s\n", jobID, path)
		submit = true
	case err != nil:
		return err
	case j.Done():
		fmt.Printf("job %s finished in an earlier run; starting it again\n", jobID)
		if err := st.Delete(ctx, jobID); err != nil {
			return err
		}
		submit = true
	default:
		settled, total := j.Progress()
		fmt.Printf("resuming job %s from %s: %d of %d steps already done\n", jobID, path, settled, total)
	}

	reg := runner.NewRegistry()
	err = runner.Handle(reg, "step", func(ctx context.Context, name string) (string, error) {
		select {
		case <-time.After(stepTime):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		fmt.Printf("ran: %s (pid %d)\n", name, os.Getpid())
		return name + " done", nil
	})
	if err != nil {
		return err
	}
	hooks := &runner.Hooks{Step: func(j job.Job, _ int) {
		// Called once a step is saved, before the next actions go out.
		if settled, _ := j.Progress(); crashAfter > 0 && settled >= crashAfter {
			fmt.Printf("crash! exiting after %d saved steps\n", settled)
			os.Exit(crashStatus)
		}
	}}
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Hooks: hooks}, Store: st})
	if err != nil {
		return err
	}
	defer r.Close()
	go r.Run(ctx) // resumes the unfinished job, if there is one

	if submit {
		workflow := ast.Seq(ast.Act("step", "fetch"), ast.Act("step", "transform"),
			ast.Act("step", "load"), ast.Act("step", "verify"), ast.Act("step", "notify"))
		if err := r.Submit(ctx, jobID, workflow); err != nil {
			return err
		}
	}
	j, err := r.Wait(ctx, jobID)
	if err != nil {
		return err
	}
	fmt.Print(job.Describe(j))
	return nil
}
