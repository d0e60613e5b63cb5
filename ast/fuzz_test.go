package ast_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
)

// fuzzSeeds are valid and invalid documents to start FuzzDecode from; more
// seeds live in testdata/fuzz/FuzzDecode.
var fuzzSeeds = []string{
	`{"version":3,"root":{"race":[{"wait":"ok","transient":true,"name":"w","deadline":"1h"},{"sleep":"48h"}],"name":"r"}}`,
	`{"version":3,"root":{"seq":[{"wait":"ok","name":"w"},{"act":"a","inputs":["w"]},{"sleep":"1ms"}]}}`,
	`{"version":1,"root":{"act":"a"}}`,
	`{"version":1,"root":{"act":"a","payload":{"x":[1,2.5,"s",null,true]}}}`,
	`{"version":1,"root":{"seq":[{"act":"a"},{"par":[{"act":"b"},{"act":"c","payload":"p"}]}]}}`,
	`{"version":1,"root":{"try":{"seq":[{"act":"a"}]},"rescue":{"act":"r"},"finally":{"par":[{"act":"f"}]}}}`,
	`{"version":1,"root":{"try":{"act":"a"},"rescue":null,"finally":null}}`,
	"{\n  \"root\": {\"act\": \"a\", \"payload\": [ 1 , 2 ]},\n  \"version\": 1\n}\n",
	`{"version":1,"root":{"seq":[]}}`,
	`{"version":1,"root":{"try":null}}`,
	`{"version":1,"root":{"act":"a","seq":[]}}`,
	`{"version":1,"root":{"act":"","x":1}}`,
	`{"version":2,"root":{"act":"a"}}`,
	`{"version":1}`,
	`{"version":1,"root":{"act":"a"}`,
	`{"version":1,"root":[{"act":"a"}]}`,
	`{"version":1,"root":{"par":[{"act":"a"},"x",5,null,{}]}}`,
	`{"version":1,"root":{"act":"a\u0000b"}}`,
	`{"version":1,"root":{"act":"a","payload":"\ud800"}}`,
	`null`,
	``,
	// Names, inputs and dags.
	`{"version":1,"root":{"seq":[{"par":[{"act":"a","name":"a"},{"act":"b","name":"b"}]},{"act":"m","inputs":["a","b"]}],"name":"s"}}`,
	`{"version":1,"root":{"dag":[{"name":"a","do":{"act":"x"}},{"name":"b","after":["a"],"do":{"try":{"act":"y","inputs":["a"]},"finally":{"act":"f","name":"f"}}},{"name":"c","after":["b","a"],"do":{"act":"z","inputs":["f","b"]}}],"name":"d"}}`,
	`{"version":1,"root":{"dag":[{"do":{"act":"x","name":"a"}},{"name":"b","after":["a","a"],"do":{"dag":[{"name":"c","do":{"act":"c"}}]}}]}}`,
	`{"version":1,"root":{"par":[{"act":"a","name":"a"},{"act":"b","inputs":["a"]}]}}`,
	`{"version":1,"root":{"seq":[{"try":{"act":"a","name":"a"},"rescue":{"act":"r","name":"r"}},{"act":"m","inputs":["a","r","a","zz"]}]}}`,
	`{"version":1,"root":{"dag":[{"name":"a","after":["c"],"do":{"act":"a"}},{"name":"b","after":["a"],"do":{"act":"b"}},{"name":"c","after":["b"],"do":{"act":"c"}},{"name":"d","after":["d"],"do":{"act":"d"}}]}}`,
	`{"version":1,"root":{"dag":[{"name":"a","do":{"act":"a","name":"b"}},{"name":5,"do":{"act":"x"}},{"after":"a","do":null},[],{"do":{"act":"x","after":["a"]}}]}}`,
	`{"version":1,"root":{"seq":[{"act":"a","name":"a"},{"seq":[{"act":"b","name":"a"}],"inputs":["a"],"name":"9"}]}}`,
	`{"version":1,"root":{"dag":[],"name":""}}`,
	// Retry, timeout, deadline and delivery.
	`{"version":1,"root":{"seq":[{"act":"a","retry":{"attempts":5,"initial":"1s","multiplier":2,"max":"1m0s","jitter":0.2,"non_retryable":["card_declined"]},"timeout":"30s","deadline":"1h","delivery":"at-most-once"}],"deadline":"10m0s"}}`,
	`{"version":1,"root":{"try":{"act":"a","retry":{"attempts":1,"non_retryable":["lost","timeout"]},"delivery":"at-least-once"},"finally":{"par":[{"act":"f","timeout":"1.5s"}],"deadline":"90s"},"deadline":"2h45m"}}`,
	`{"version":1,"root":{"dag":[{"name":"a","do":{"act":"x","retry":{"attempts":3,"multiplier":1.5,"jitter":1e-7},"deadline":"1ms"}}],"deadline":"10000h"}}`,
	`{"version":1,"root":{"act":"a","retry":{"attempts":2.5,"initial":5,"max":"x","multiplier":0.5,"jitter":1e400,"non_retryable":["deadline","a","a",""],"z":1},"timeout":"0s","delivery":"once"}}`,
	`{"version":1,"root":{"seq":[{"act":"a"}],"retry":{},"timeout":"1s","delivery":null,"deadline":"-1s"}}`,
	`{"version":1,"root":{"act":"a","retry":{"attempts":1e30,"initial":"-1s","max":"1ns"},"timeout":"10001h","deadline":"3000000h"}}`,
	`{"version":1,"root":{"dag":[{"name":"a","deadline":"1s","timeout":"1s","do":{"act":"x","retry":null,"timeout":null}}]}}`,
	// Duplicate keys, refused wherever the decoder reads an object (not in
	// payloads, which are the handler's data).
	`{"version":1,"root":{"act":"log","act":"fail"}}`,
	`{"version":1,"root":{"act":"log","\u0061ct":"fail","payload":{"k":1,"k":2}}}`,
	`{"version":1,"root":{"dag":[{"name":"a","name":"b","do":{"act":"a","retry":{"attempts":2,"attempts":3}}}]},"root":null}`,
	// Priority.
	`{"version":1,"root":{"par":[{"act":"a","priority":5},{"act":"b","retry":{"attempts":2},"delivery":"at-most-once","priority":-1000},{"dag":[{"name":"c","do":{"act":"c","priority":1000}}]}]}}`,
	`{"version":1,"root":{"seq":[{"act":"a","priority":5.0},{"act":"b","priority":null},{"act":"c","priority":0}]}}`,
	`{"version":1,"root":{"seq":[{"act":"a","priority":1001},{"act":"b","priority":2.5},{"act":"c","priority":"1"},{"act":"d","priority":1e999}],"priority":1}}`,
	`{"version":1,"root":{"dag":[{"name":"a","priority":1,"do":{"try":{"act":"x"},"priority":-1}}]}}`,
	// Races and replicas (version 2), and both in a version-1 document.
	`{"version":2,"root":{"seq":[{"race":[{"act":"a","name":"a"},{"seq":[{"act":"b","name":"b"},{"act":"c","inputs":["b"]}],"replicas":3}],"name":"r","deadline":"1m0s"},{"act":"d","inputs":["r"]}]}}`,
	`{"version":2,"root":{"dag":[{"name":"a","do":{"act":"x","replicas":32}},{"name":"b","after":["a"],"do":{"race":[{"act":"y"},{"act":"z","replicas":2}],"replicas":2}}]}}`,
	`{"version":2,"root":{"seq":[{"race":[{"act":"a"}]},{"race":[]},{"act":"b","replicas":1},{"act":"c","replicas":33},{"act":"d","replicas":2.5},{"act":"e","replicas":"3"},{"seq":[{"act":"f","name":"f"}],"replicas":2},{"act":"g","inputs":["f"]}]}}`,
	`{"version":1,"root":{"race":[{"act":"a"},{"act":"b","replicas":2}],"replicas":3}}`,
	// Affinity, in its forms and wrong.
	`{"version":2,"root":{"par":[{"act":"a","affinity":"dataset-42"},{"act":"b","affinity":{"key":"d","wait":"2s"}},{"seq":[{"act":"c"}],"affinity":{"scope":"job"}},{"act":"d","affinity":{"scope":"job","key":"scratch","strict":false}}]}}`,
	`{"version":2,"root":{"seq":[{"act":"a","affinity":""},{"act":"b","affinity":{"scope":"x","wait":"-1s"}},{"act":"c","replicas":2}],"affinity":{"scope":"job","key":"k","zone":1}}}`,
	`{"version":1,"root":{"act":"a","affinity":{"key":"k","strict":"yes"}}}`,
	// Maps and loops (version 3), good and bad.
	`{"version":3,"root":{"seq":[{"act":"l","name":"xs"},{"map":{"over":"xs","do":{"seq":[{"act":"a","name":"a","inputs":["item"]},{"act":"b","inputs":["a","index"]}]},"limit":2,"need":1},"name":"m","deadline":"1m0s"}]}}`,
	`{"version":3,"root":{"loop":{"do":{"try":{"act":"p","name":"p"},"finally":{"act":"f"}},"until":{"output":"p","equals":{"done":[1,2.0]}},"max":10000},"name":"l"}}`,
	`{"version":3,"root":{"seq":[{"act":"l","name":"item"},{"map":{"over":"item","do":null,"limit":0,"need":1e9}},{"loop":{"do":{"act":"x"},"until":{"output":"x"},"max":1.5}},{"act":"y","inputs":["index"]}]}}`,
	`{"version":2,"root":{"map":{"over":"a","do":{"map":{"over":"b","do":{"loop":{"do":{"act":"c","name":"c"},"until":{"output":"c","equals":null},"max":0}}}}}}}`,
}

// FuzzDecode checks that Decode never panics and that whatever it accepts
// round-trips: Encode succeeds, decoding the encoding gives an equal tree,
// and encoding that again gives the same bytes.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := ast.Decode(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("empty error message")
			}
			var ae *ast.Error
			if errors.As(err, &ae) {
				for i := 1; i < len(ae.Problems); i++ {
					if ast.ComparePaths(ae.Problems[i-1].Path, ae.Problems[i].Path) > 0 {
						t.Fatalf("problems out of tree order: %v", err)
					}
				}
			}
			return
		}
		if err := ast.Validate(n); err != nil {
			t.Fatalf("Decode returned a tree Validate rejects: %v", err)
		}
		enc, err := ast.Encode(n)
		if err != nil {
			t.Fatalf("Encode of a decoded tree: %v", err)
		}
		back, err := ast.Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(n)): %v\nencoding: %s", err, enc)
		}
		if !ast.Equal(back, n) {
			t.Fatalf("Decode(Encode(n)) differs from n\nencoding: %s", enc)
		}
		again, err := ast.Encode(back)
		if err != nil {
			t.Fatalf("Encode(Decode(Encode(n))): %v", err)
		}
		if !bytes.Equal(again, enc) {
			t.Fatalf("Encode is not a fixed point:\n first: %s\nsecond: %s", enc, again)
		}
		if got, want := ast.Count(back), ast.Count(n); got != want {
			t.Fatalf("Count %d after the round trip, want %d", got, want)
		}
		walked := 0
		ast.Walk(n, func(string, *ast.Node) bool { walked++; return true })
		if walked != ast.Count(n) {
			t.Fatalf("Walk visited %d nodes, Count says %d", walked, ast.Count(n))
		}
	})
}

// FuzzInputs builds a valid tree from the fuzzer's bytes (unique names,
// named dag children after earlier siblings only), gives one of its leaves
// one named node as input, and checks Validate against the rule as the
// language states it, computed the slow way: the set of nodes sure to have
// succeeded before the leaf starts.
func FuzzInputs(f *testing.F) {
	for _, s := range []string{
		"", "\x00", "\x01\x00\x00\x02\x00", "\x02\x01\x00\x03\x01\x01\x00\x00\x05\x07",
		"\x03\x02\x04\x00\x01\x01\x00\x02\x00\x01\x01\x01\x04\x09",
		"\x04\x01\x00\x01\x00\x01\x01\x00\x01\x02\x03",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkInputs(t, data) })
}

// TestInputsOracle runs FuzzInputs' check on a few thousand trees made
// from pseudo-random bytes, the same on every run.
func TestInputsOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sure := 0
	for range 3000 {
		data := make([]byte, 20+r.IntN(200))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		if checkInputs(t, data) {
			sure++
		}
	}
	// Enough of the inputs are sure, and enough not, for the check to
	// mean something.
	t.Logf("%d inputs of 3000 were sure", sure)
	if sure < 500 || sure > 2500 {
		t.Errorf("%d inputs of 3000 were sure, want 500 to 2500", sure)
	}
}

// checkInputs is FuzzInputs' check of the bytes data. It reports whether
// the input it chose is valid.
func checkInputs(t *testing.T, data []byte) bool {
	defer func() {
		if t.Failed() {
			t.Logf("for the bytes %q", data)
		}
	}()
	g := &fuzzGen{data: data}
	root := g.node(0, false)
	var leaves, named []*ast.Node
	fuzzVisit(&root, func(n *ast.Node) {
		if n.Kind == ast.KindAct {
			leaves = append(leaves, n)
		}
		if n.Name != "" {
			named = append(named, n)
		}
	})
	if err := ast.Validate(root); err != nil {
		t.Fatalf("generated tree is invalid: %v", err)
	}
	if len(named) == 0 {
		return false
	}
	// The last leaf, with the most nodes before it, half the time.
	l := leaves[len(leaves)-1]
	if g.byte()%2 == 0 {
		l = leaves[int(g.byte())%len(leaves)]
	}
	sure := fuzzSure(&root, l)
	// A sure node half the time, when there is one; any named node else.
	var sureNamed []*ast.Node
	for _, n := range named {
		if sure[n] {
			sureNamed = append(sureNamed, n)
		}
	}
	target := named[int(g.byte())%len(named)]
	if len(sureNamed) > 0 && g.byte()%2 == 0 {
		target = sureNamed[int(g.byte())%len(sureNamed)]
	}
	l.Inputs = []string{target.Name}
	err := ast.Validate(root)
	switch {
	case target == l:
		if err == nil || !strings.Contains(err.Error(), "is the name of this leaf itself") {
			t.Fatalf("input naming the leaf itself: %v", err)
		}
	case sure[target]:
		if err != nil {
			t.Fatalf("input %q is sure, Validate says: %v", target.Name, err)
		}
	default:
		if err == nil || !strings.Contains(err.Error(), "not sure to have succeeded") {
			t.Fatalf("input %q is not sure, Validate says: %v", target.Name, err)
		}
	}
	if err == nil {
		enc, err := ast.Encode(root)
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		back, err := ast.Decode(enc)
		if err != nil || !ast.Equal(back, root) {
			t.Fatalf("round trip: %v\n%s", err, enc)
		}
	}
	return err == nil
}

// fuzzGen makes a tree out of bytes; past the end, every byte is 0.
type fuzzGen struct {
	data  []byte
	i     int
	names int
	nodes int
}

func (g *fuzzGen) byte() byte {
	if g.i >= len(g.data) {
		return 0
	}
	g.i++
	return g.data[g.i-1]
}

func (g *fuzzGen) node(depth int, dagChild bool) ast.Node {
	g.nodes++
	// Seqs and dags twice as often as pars and tries: they make inputs sure.
	// Maps and loops (5, 6) come with the leaf their over or until reads.
	kind := [...]byte{0, 0, 1, 1, 2, 3, 3, 4, 5, 6}[g.byte()%10]
	if depth >= 5 || g.nodes > 60 {
		kind = 0
	}
	var n ast.Node
	switch kind {
	case 0:
		n = ast.Act("a", nil)
	case 1, 2, 3:
		kids := make([]ast.Node, 1+g.byte()%3)
		for i := range kids {
			kids[i] = g.node(depth+1, kind == 3)
		}
		n = [...]func(...ast.Node) ast.Node{ast.Seq, ast.Par, ast.Dag}[kind-1](kids...)
		if kind == 3 {
			for i := range kids {
				for j := range i {
					if g.byte()%2 == 1 {
						n.Children[i] = n.Children[i].WithAfter(n.Children[j].Name)
					}
				}
			}
		}
	case 4:
		var opts []ast.TryOption
		body := g.node(depth+1, false)
		if g.byte()%2 == 1 {
			opts = append(opts, ast.Rescue(g.node(depth+1, false)))
		}
		if g.byte()%2 == 1 {
			opts = append(opts, ast.Finally(g.node(depth+1, false)))
		}
		n = ast.Try(body, opts...)
	case 5:
		g.names++
		over := fmt.Sprintf("n%d", g.names)
		n = ast.Seq(ast.Act("a", nil).Named(over), ast.Map(over, g.node(depth+1, false)))
	case 6:
		g.names++
		until := fmt.Sprintf("n%d", g.names)
		n = ast.Loop(ast.Seq(g.node(depth+1, false), ast.Act("a", nil).Named(until)), until, true, 3)
	}
	if dagChild || g.byte()%2 == 1 {
		g.names++
		n = n.Named(fmt.Sprintf("n%d", g.names))
	}
	return n
}

// fuzzVisit calls f for every node of the tree at n, which it may modify.
func fuzzVisit(n *ast.Node, f func(*ast.Node)) {
	f(n)
	for i := range n.Children {
		fuzzVisit(&n.Children[i], f)
	}
	for _, p := range []*ast.Node{n.Body, n.Rescue, n.Finally} {
		if p != nil {
			fuzzVisit(p, f)
		}
	}
}

// fuzzSure returns the nodes sure to have succeeded before the leaf l
// starts, by the language's definition.
func fuzzSure(root, l *ast.Node) map[*ast.Node]bool {
	parent := map[*ast.Node]*ast.Node{}
	fuzzVisit(root, func(n *ast.Node) {
		for i := range n.Children {
			parent[&n.Children[i]] = n
		}
		for _, p := range []*ast.Node{n.Body, n.Rescue, n.Finally} {
			if p != nil {
				parent[p] = n
			}
		}
	})
	sure := map[*ast.Node]bool{}
	var implied func(x *ast.Node)
	implied = func(x *ast.Node) {
		if sure[x] {
			return
		}
		sure[x] = true
		switch x.Kind {
		case ast.KindSeq, ast.KindPar, ast.KindDag:
			for i := range x.Children {
				implied(&x.Children[i])
			}
		case ast.KindTry:
			if x.Finally != nil {
				implied(x.Finally)
			}
			if x.Rescue == nil {
				implied(x.Body)
			}
		}
	}
	for c := l; parent[c] != nil; c = parent[c] {
		p := parent[c]
		switch p.Kind {
		case ast.KindSeq:
			for i := range p.Children {
				if &p.Children[i] == c {
					break
				}
				implied(&p.Children[i])
			}
		case ast.KindDag:
			byName := map[string]*ast.Node{}
			for i := range p.Children {
				byName[p.Children[i].Name] = &p.Children[i]
			}
			seen := map[*ast.Node]bool{}
			todo := []*ast.Node{c}
			for len(todo) > 0 {
				x := todo[len(todo)-1]
				todo = todo[:len(todo)-1]
				for _, a := range x.After {
					if s := byName[a]; !seen[s] {
						seen[s] = true
						implied(s)
						todo = append(todo, s)
					}
				}
			}
		}
	}
	return sure
}
