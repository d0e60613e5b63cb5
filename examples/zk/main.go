// Command zk runs a workflow on three baton workers that share a
// ZooKeeper server: each worker is a zkrunner.Runner with its own
// session, as it would be in its own process on its own machine.
//
//	seq(
//	  greet "world",
//	  par(resize a.png, resize b.png, resize c.png),
//	  upload "album"   (fails once: retried after 100ms)
//	)
//
// Start ZooKeeper, then:
//
//	go run ./examples/zk -zk 127.0.0.1:2181
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

func main() {
	servers := flag.String("zk", "127.0.0.1:2181", "the ZooKeeper servers, `HOST:PORT[,HOST:PORT...]`")
	root := flag.String("root", "/baton-example", "the node `PATH` the example keeps its jobs under")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := example(ctx, strings.Split(*servers, ","), *root, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// example starts three workers on root, submits the workflow, waits for
// it and prints it.
func example(ctx context.Context, servers []string, root string, out io.Writer) error {
	var mu sync.Mutex // one line at a time from the workers
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
	}
	var uploads atomic.Int32 // across the workers: the first upload fails

	var wg sync.WaitGroup
	runCtx, stop := context.WithCancel(ctx)
	defer wg.Wait() // the workers have drained and closed their sessions
	defer stop()
	var submitter *zkrunner.Runner
	for _, name := range []string{"w1", "w2", "w3"} {
		st, err := zkrunner.Open(ctx, zkrunner.Config{Servers: servers, Root: root})
		if err != nil {
			return err
		}
		reg := runner.NewRegistry()
		_ = runner.Handle(reg, "greet", func(_ context.Context, who string) (string, error) {
			say("%s: hello, %s", name, who)
			return "hello, " + who, nil
		})
		_ = runner.Handle(reg, "resize", func(_ context.Context, file string) (string, error) {
			time.Sleep(50 * time.Millisecond)
			say("%s: resized %s", name, file)
			return "small-" + file, nil
		})
		_ = runner.Handle(reg, "upload", func(_ context.Context, album string) (string, error) {
			if uploads.Add(1) == 1 {
				say("%s: upload of %s failed: 503", name, album)
				return "", fmt.Errorf("storage answered 503")
			}
			say("%s: uploaded %s", name, album)
			return "https://example.com/" + album, nil
		})
		r, err := zkrunner.New(zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: name, Registry: reg, Workers: 2}, Store: st})
		if err != nil {
			st.Close()
			return err
		}
		if submitter == nil {
			submitter = r
		}
		wg.Go(func() {
			defer st.Close()
			if err := r.Run(runCtx); err != nil {
				say("%s: %v", name, err)
			}
		})
	}

	workflow := ast.Seq(
		ast.Act("greet", "world"),
		ast.Par(ast.Act("resize", "a.png"), ast.Act("resize", "b.png"), ast.Act("resize", "c.png")),
		ast.Act("upload", "album").WithRetry(ast.Retry{Attempts: 3, Initial: 100 * time.Millisecond}),
	)
	id := job.ID("album-" + time.Now().UTC().Format("20060102T150405.000Z"))
	if err := submitter.Submit(ctx, id, workflow); err != nil {
		return err
	}
	j, err := submitter.Wait(ctx, id)
	if err != nil {
		return err
	}
	say("%s", strings.TrimSuffix(job.Describe(j), "\n"))
	if j.Status() != job.StatusSucceeded {
		return fmt.Errorf("job %s %s", id, j.Status())
	}
	return nil
}
