package kafka

import (
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// testBrokers are those of the cluster the tests use: KAFKA_BROKERS (comma
// separated) when set, else an in-process kfake cluster started for the
// package. Every test works under a prefix of its own (testPrefix), so
// tests never see each other's topics.
var testBrokers []string

func TestMain(m *testing.M) {
	if env := os.Getenv("KAFKA_BROKERS"); env != "" {
		testBrokers = strings.Split(env, ",")
		os.Exit(m.Run())
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake:", err)
		os.Exit(1)
	}
	testBrokers = c.ListenAddrs()
	code := m.Run()
	c.Close()
	os.Exit(code)
}

var prefixes atomic.Int64

// testPrefix returns a topic prefix no other test uses.
func testPrefix(t testing.TB) string {
	h := fnv.New32a()
	h.Write([]byte(t.Name()))
	return fmt.Sprintf("t%08x-%d-%d", h.Sum32(), os.Getpid()%100000, prefixes.Add(1))
}
