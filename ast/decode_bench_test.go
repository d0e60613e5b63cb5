package ast_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
)

// BenchmarkDecode decodes documents of the shapes the runners store: a
// wide par of plain leaves with small payloads, leaves carrying every
// optional key (names, inputs, retry, timeout), and a deep nesting.
func BenchmarkDecode(b *testing.B) {
	for _, bc := range []struct {
		name string
		n    ast.Node
	}{
		{"seq5", ast.Seq(ast.Act("log", "a"), benchRich(3), ast.Act("log", "b"))},
		{"par10k", benchWidePayloads(10_000)},
		{"rich1k", benchRich(1_000)},
		{"deep128", benchDeep(ast.MaxDepth)},
	} {
		doc, err := ast.Encode(bc.n)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if _, err := ast.Decode(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchWidePayloads returns a par of k leaves, each with an object payload.
func benchWidePayloads(k int) ast.Node {
	kids := make([]ast.Node, k)
	for i := range kids {
		kids[i] = ast.Act("email.send", map[string]any{"to": fmt.Sprintf("u%d@example.org", i), "n": i})
	}
	return ast.Par(kids...)
}

// benchRich returns seq(par(k named leaves with retry and timeout), merge),
// merge taking every leaf's output.
func benchRich(k int) ast.Node {
	kids := make([]ast.Node, k)
	names := make([]string, k)
	for i := range kids {
		names[i] = fmt.Sprintf("n%d", i)
		kids[i] = ast.Act("card.charge", map[string]any{"order": i, "lines": []string{"a", "b"}}).
			Named(names[i]).
			WithRetry(ast.Retry{Attempts: 5, Initial: time.Second, Multiplier: 2, Max: time.Minute, Jitter: 0.2, NonRetryable: []string{"card_declined"}}).
			WithTimeout(30 * time.Second).WithPriority(i % 7)
	}
	return ast.Seq(ast.Par(kids...), ast.Act("merge", nil).WithInputs(names...).Named("merge")).WithDeadline(time.Hour)
}

// benchDeep returns depth levels of tries and seqs around one leaf.
func benchDeep(depth int) ast.Node {
	n := ast.Act("a", strings.Repeat("x", 100))
	for i := 1; i < depth; i++ {
		if i%2 == 0 {
			n = ast.Seq(n, ast.Act("b", nil))
		} else {
			n = ast.Try(n, ast.Finally(ast.Act("f", nil)))
		}
	}
	return n
}
