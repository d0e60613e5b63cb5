package kafka_test

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/runner"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// A restarter and a worker in one process, on an in-process broker (any
// Kafka cluster does: give its brokers).
func Example() {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	reg := runner.NewRegistry()
	_ = runner.Handle(reg, "greet", func(ctx context.Context, name string) (string, error) {
		return "hello, " + name, nil
	})
	st, err := kafkarunner.Open(ctx, kafkarunner.Config{Brokers: cluster.ListenAddrs(), Prefix: "example", Partitions: 2})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	r, err := kafkarunner.New(kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
	if err != nil {
		panic(err)
	}
	go r.Run(ctx)
	defer r.Close()

	if err := r.Submit(ctx, "hello-1", ast.Act("greet", "Kafka").Named("greeting")); err != nil {
		panic(err)
	}
	j, err := r.Wait(ctx, "hello-1")
	if err != nil {
		panic(err)
	}
	out, _ := j.Output("greeting")
	fmt.Println(j.Status(), string(out))
	// Output: succeeded "hello, Kafka"
}
