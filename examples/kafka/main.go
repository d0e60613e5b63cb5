// Command kafka runs a workflow on two baton runners that share a Kafka
// cluster: each is a restarter (it owns some of the jobs' partitions and
// makes their transitions) and a worker (it runs actions), with a store
// of its own, as it would be in its own process on its own machine.
//
//	seq(
//	  greet "world",
//	  par(resize a.png, resize b.png, resize c.png),
//	  upload "album"   (fails once: retried after 100ms)
//	)
//
// Point it at any Kafka cluster (it makes its topics under -prefix):
//
//	go run ./examples/kafka -brokers 127.0.0.1:9092
//
// -brokers defaults to $KAFKA_BROKERS (comma separated), else
// 127.0.0.1:9092.
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
	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

func main() {
	brokers := os.Getenv("KAFKA_BROKERS")
	if brokers == "" {
		brokers = "127.0.0.1:9092"
	}
	flag.StringVar(&brokers, "brokers", brokers, "the Kafka brokers, `HOST:PORT[,HOST:PORT...]` (default $KAFKA_BROKERS)")
	prefix := flag.String("prefix", "baton-example", "the `NAME` the example's topics and consumer groups are named under")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := example(ctx, strings.Split(brokers, ","), *prefix, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// example starts two runners on the brokers, submits the workflow, waits
// for it and prints it.
func example(ctx context.Context, brokers []string, prefix string, out io.Writer) error {
	var mu sync.Mutex // one line at a time from the runners
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
	}
	var uploads atomic.Int32 // across the runners: the first upload fails

	var wg sync.WaitGroup
	runCtx, stop := context.WithCancel(ctx)
	defer wg.Wait() // the runners have drained, left their groups and closed their stores
	defer stop()
	var submitter *kafkarunner.Runner
	for _, name := range []string{"r1", "r2"} {
		// Small partition counts, for a quick start: these apply only
		// when the topics are made.
		st, err := kafkarunner.Open(ctx, kafkarunner.Config{Brokers: brokers, Prefix: prefix, Partitions: 4, ActionPartitions: 2})
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
		r, err := kafkarunner.New(kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Name: name, Registry: reg, Workers: 2}, Store: st})
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
	// Submit returns once the restarter that owns the job's partition has
	// stored it; Wait, once whichever restarter finishes it has saved it.
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
