package server_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/batonwf/baton/server"
)

// gatedFile is a file whose writes wait for a gate, and that counts them.
type gatedFile struct {
	mu      sync.Mutex
	b       bytes.Buffer
	writes  int
	entered chan struct{}
	gate    chan struct{}
}

func (f *gatedFile) Write(p []byte) (int, error) {
	f.entered <- struct{}{}
	<-f.gate
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	return f.b.Write(p)
}

// A LogWriter returns from Write before the file is written, writes the
// lines logged while a write runs in one write, in order, and writes
// every line by Close: 100 lines, logged while the first one's write is
// held up, are two writes.
func TestLogWriterSharesWrites(t *testing.T) {
	f := &gatedFile{entered: make(chan struct{}, 100), gate: make(chan struct{})}
	l := server.NewLogWriter(f)
	want := make([]string, 100)
	for i := range want {
		want[i] = fmt.Sprintf("line %d", i)
		if _, err := l.Write([]byte(want[i] + "\n")); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			<-f.entered // the first line's write has begun, and waits
		}
	}
	close(f.gate)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Write([]byte("after close\n")); err != nil {
		t.Fatal(err)
	}
	want = append(want, "after close")
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := strings.Split(strings.TrimSuffix(f.b.String(), "\n"), "\n"); !slices.Equal(got, want) {
		t.Errorf("lines written: %q, want %q", got, want)
	}
	if f.writes != 3 {
		t.Errorf("%d writes of 100 lines and one after Close, want 3", f.writes)
	}
}

// Lines logged at once from many goroutines are each written whole, and
// all of them by Close.
func TestLogWriterConcurrent(t *testing.T) {
	var mu sync.Mutex
	var b bytes.Buffer
	l := server.NewLogWriter(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return b.Write(p)
	}))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				fmt.Fprintf(l, "g%d %04d %s\n", g, i, strings.Repeat("x", i%300))
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, 8)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for _, line := range lines {
		var g, i int
		if _, err := fmt.Sscanf(line, "g%d %d", &g, &i); err != nil || g < 0 || g >= 8 || i != next[g] ||
			line != fmt.Sprintf("g%d %04d %s", g, i, strings.Repeat("x", i%300)) {
			t.Fatalf("line %q: not whole, or out of order", line)
		}
		next[g]++
	}
	if len(lines) != 8000 {
		t.Errorf("%d lines, want 8000", len(lines))
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A LogWriter reuses its two buffers: once they have grown to the lines
// that pile up, lines cost no allocation. (A buffer was dropped whenever
// the goroutine woke to find the lines taken already.) Counted over
// 40,000 lines to a file from 4 goroutines, all the process allocates.
func TestLogWriterReusesBuffers(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector; scripts/test.sh runs this test without it")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "requests.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := server.NewLogWriter(f)
	defer l.Close()
	line := []byte(`{"time":"2026-11-26T15:30:00Z","level":"INFO","msg":"http request","method":"GET"}` + "\n")
	burst := func(lines int) {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range lines / 4 {
					l.Write(line)
					runtime.Gosched() // the lines come apart, as requests' do
				}
			})
		}
		wg.Wait()
	}
	burst(40000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	burst(40000)
	runtime.ReadMemStats(&after)
	// What remains is the goroutines' and the buffers' growth to a
	// larger pile of lines: 20 to 100 here, against 350 to 700 when a
	// buffer was dropped.
	if n := after.Mallocs - before.Mallocs; n > 200 {
		t.Errorf("%d allocations for 40,000 lines, want at most 200", n)
	}
}
