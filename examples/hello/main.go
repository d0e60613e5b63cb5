// Command hello runs baton's seed workflow,
//
//	par(log a, seq(log b, log c), try(log d, rescue log e, finally log f))
//
// on the in-process runner with a bolt store in a temporary directory, and
// prints the final state of the job.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/store/bolt"
)

func main() {
	dir, err := os.MkdirTemp("", "baton-hello-")
	if err != nil {
		log.Fatal(err)
	}
	err = hello(filepath.Join(dir, "baton.db"))
	os.RemoveAll(dir)
	if err != nil {
		log.Fatal(err)
	}
}

func hello(path string) error {
	st, err := bolt.Open(path, nil)
	if err != nil {
		return err
	}
	defer st.Close()

	reg := runner.NewRegistry()
	err = runner.Handle(reg, "log", func(_ context.Context, msg string) (string, error) {
		fmt.Println("log:", msg)
		return msg, nil
	})
	if err != nil {
		return err
	}
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
	if err != nil {
		return err
	}
	defer r.Close()
	go r.Run(context.Background())

	workflow := ast.Par(
		ast.Act("log", "a"),
		ast.Seq(ast.Act("log", "b"), ast.Act("log", "c")),
		ast.Try(ast.Act("log", "d"),
			ast.Rescue(ast.Act("log", "e")),
			ast.Finally(ast.Act("log", "f"))),
	)
	fmt.Println("running the seed workflow on a bolt store in", path)
	ctx := context.Background()
	if err := r.Submit(ctx, "hello", workflow); err != nil {
		return err
	}
	j, err := r.Wait(ctx, "hello")
	if err != nil {
		return err
	}
	fmt.Print(job.Describe(j))
	return nil
}
