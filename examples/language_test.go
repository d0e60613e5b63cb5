package examples_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	goast "go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
)

// The snippets of docs/language.md and of the README's section "The
// language" are checked here, as TestWorkflowFiles checks the workflow
// files:
//
//   - every ```json block decodes (a document with "version", else a
//     node) and validates; a block marked ```json invalid must fail, with
//     the message that the ```text block right after it shows;
//   - every ```go block is, byte for byte, the body of a function of this
//     file, in the order of the page: docXxx for docs/language.md,
//     readmeXxx for the README. The body is taken one tab less indented,
//     without the "return " of a body that is one return statement, and
//     without a last line "return NAME" (the variable the snippet built).
//     So every snippet compiles;
//   - a function that returns an ast.Node is a workflow (it is listed in
//     workflows), and the page's next block must be a ```json block of the
//     same tree.
//
// TestLanguageHandlers then runs the handler snippets.

// pages are the documents whose snippets are checked: the file, the
// section (a "## " heading; "" for all of it) and the prefix of the
// functions that mirror its Go snippets.
var pages = []struct{ file, section, prefix string }{
	{"../docs/language.md", "", "doc"},
	{"../README.md", "## The language", "readme"},
}

// workflows are the mirror functions that build a workflow.
var workflows = map[string]func() ast.Node{
	"docAct": docAct, "docSeq": docSeq, "docPar": docPar, "docTry": docTry, "docDag": docDag, "docRace": docRace, "docChoice": docChoice,
	"docNames": docNames, "docRetry": docRetry, "docTimeout": docTimeout, "docDeadline": docDeadline,
	"docDelivery": docDelivery, "docPriority": docPriority, "docReplicas": docReplicas, "readmeFlow": readmeFlow, "readmeMapLoop": readmeMapLoop,
}

// The mirrors of the Go snippets of docs/language.md, in its order.

func docAct() ast.Node {
	return ast.Act("email.send", map[string]string{"to": "a@example.com"})
}

func docSeq() ast.Node {
	return ast.Seq(
		ast.Act("stock.reserve", "o-7"),
		ast.Act("payment.charge", "o-7"),
	)
}

func docPar() ast.Node {
	return ast.Par(
		ast.Act("stock.reserve", "o-7"),
		ast.Act("fraud.check", "o-7"),
	)
}

func docTry() ast.Node {
	return ast.Try(ast.Act("payment.charge", "o-7"),
		ast.Rescue(ast.Act("payment.refund", "o-7"), ast.Act("order.cancel", "o-7")),
		ast.Finally(ast.Act("stock.release", "o-7")))
}

func docDag() ast.Node {
	return ast.Dag(
		ast.Act("stock.reserve", "o-7").Named("reserve"),
		ast.Act("fraud.check", "o-7").Named("fraud"),
		ast.Act("courier.book", "o-7").Named("courier").WithAfter("reserve", "fraud").WithInputs("reserve"),
	)
}

func docRace() ast.Node {
	return ast.Race(
		ast.Act("quote.fetch", "eu").Named("eu"),
		ast.Act("quote.fetch", "us"),
		ast.Try(ast.Act("quote.fetch", "ap"), ast.Finally(ast.Act("conn.close", "ap"))),
	).Named("quote")
}

func docChoice() ast.Node {
	return ast.Seq(
		ast.Act("claim.assess", "c-9").Named("size"),
		ast.Choice("size",
			ast.When("small", ast.Act("claim.pay", "c-9")),
			ast.WhenAny([]any{"large", "huge"}, ast.Act("claim.investigate", "c-9")),
			ast.Else(ast.Act("claim.reject", "c-9"))),
	)
}

func docNames() ast.Node {
	return ast.Seq(
		ast.Act("payment.charge", "o-7").Named("charge"),
		ast.Act("receipt.send", "o-7").WithInputs("charge"),
	)
}

func docRetry() ast.Node {
	return ast.Act("payment.charge", "o-7").WithRetry(ast.Retry{
		Attempts:     5,
		Initial:      time.Second,
		Multiplier:   2,
		Max:          time.Minute,
		Jitter:       0.2,
		NonRetryable: []string{"card_declined"},
	})
}

func docTimeout() ast.Node {
	return ast.Act("http.get", "https://example.com/").
		WithTimeout(30 * time.Second).
		WithRetry(ast.Retry{Attempts: 3, Initial: time.Second})
}

func docDeadline() ast.Node {
	return ast.Try(
		ast.Seq(
			ast.Act("courier.book", "o-7"),
			ast.Act("label.print", "o-7"),
		).WithDeadline(48*time.Hour),
		ast.Finally(ast.Act("stock.release", "o-7")),
	)
}

func docDelivery() ast.Node {
	return ast.Par(
		ast.Act("sms.send", "o-7").AtMostOnce(),
		ast.Act("ledger.post", "o-7").AtMostOnce().WithRetry(ast.Retry{Attempts: 3, Initial: time.Second}),
	)
}

func docPriority() ast.Node {
	return ast.Par(
		ast.Act("fraud.check", "o-7").WithPriority(10),
		ast.Act("stock.reserve", "o-7"),
		ast.Act("report.update", "o-7").WithPriority(-5),
	)
}

func docReplicas() ast.Node {
	return ast.Seq(
		ast.Act("http.get", "https://example.com/big").WithTimeout(time.Minute).WithReplicas(3).Named("page"),
		ast.Act("index.add", nil).WithInputs("page"),
	)
}

func docCancel(ctx context.Context, r *inmem.Runner) error {
	return r.Cancel(ctx, "order-7", "the customer cancelled the order")
}

func docCharge(reg *runner.Registry) error {
	return runner.Handle(reg, "payment.charge", func(ctx context.Context, o Order) (Receipt, error) {
		a, _ := runner.ActionFrom(ctx)
		booking, err := runner.InputAs[Booking](ctx, "courier")
		if err != nil {
			return Receipt{}, err
		}
		r, err := psp.Charge(ctx, a.IdempotencyKey(), o.Cents+booking.Fee)
		switch {
		case errors.Is(err, psp.ErrDeclined):
			return Receipt{}, runner.WithKind(err, "card_declined")
		case errors.Is(err, psp.ErrInvalid):
			return Receipt{}, runner.Final(err)
		}
		return r, err
	})
}

func docCourier(reg *runner.Registry) error {
	return runner.Handle(reg, "courier.book", func(ctx context.Context, o Order) (Booking, error) {
		select {
		case b := <-couriers.Offer(o.ID):
			return b, nil
		case <-ctx.Done():
			return Booking{}, context.Cause(ctx)
		}
	})
}

func docRescue(reg *runner.Registry) error {
	return runner.Handle(reg, "order.cancel", func(ctx context.Context, o Order) (string, error) {
		a, _ := runner.ActionFrom(ctx)
		if a.Failure != nil && a.Failure.Kind == "card_declined" {
			return notify(ctx, o, "your card was declined")
		}
		return notify(ctx, o, "we could not complete your order")
	})
}

func docOutcome(ctx context.Context, r *inmem.Runner) (Receipt, error) {
	j, err := r.Wait(ctx, "order-7")
	if err != nil {
		return Receipt{}, err
	}
	if reason, ok := j.Cancelled(); ok {
		return Receipt{}, fmt.Errorf("order-7 cancelled: %s", reason)
	}
	if f, ok := j.Failure(); ok {
		return Receipt{}, fmt.Errorf("order-7 failed at %s", f)
	}
	return job.OutputAs[Receipt](j, "charge")
}

// The mirrors of the Go snippets of the README's section "The language".

func readmeFlow() ast.Node {
	flow := ast.Try(
		ast.Seq(
			ast.Dag(
				ast.Act("stock.reserve", "o-7").Named("reserve"),
				ast.Act("fraud.check", "o-7").Named("fraud"),
				ast.Act("courier.book", "o-7").Named("courier").WithAfter("reserve", "fraud").WithInputs("reserve"),
			).WithDeadline(48*time.Hour),
			ast.Act("payment.charge", "o-7").Named("charge").WithInputs("courier").
				WithRetry(ast.Retry{Attempts: 5, Initial: time.Second, Multiplier: 2, Max: time.Minute,
					Jitter: 0.2, NonRetryable: []string{"card_declined"}}).
				WithTimeout(30*time.Second),
			ast.Act("sms.send", "o-7").WithInputs("charge").AtMostOnce(),
		),
		ast.Rescue(ast.Act("payment.refund", "o-7"), ast.Act("order.cancel", "o-7")),
		ast.Finally(ast.Act("stock.release", "o-7")),
	)
	return flow
}

func readmeMapLoop() ast.Node {
	return ast.Seq(
		ast.Act("orders.list", "2026-11-26").Named("orders"), // outputs a JSON array
		ast.Map("orders", ast.Act("invoice.send", nil).WithInputs("item", "index")).
			WithLimit(10).Named("invoices"),
		ast.Loop(ast.Seq(ast.Sleep(time.Minute), ast.Act("export.status", nil).Named("status")),
			"status", "ready", 60).Named("poll"), // once a minute until "ready", 60 times at most
	)
}

// What the handler snippets use.

type (
	Order struct {
		ID    string `json:"id"`
		Cents int    `json:"cents"`
		Card  string `json:"card"`
	}
	Booking struct {
		Courier string `json:"courier"`
		Fee     int    `json:"fee"`
	}
	Receipt struct {
		ID    string `json:"id"`
		Cents int    `json:"cents"`
	}
)

// psp is a payment provider. It takes the card of each job from cards:
// it declines "declined", refuses "" as invalid, and charges any other
// once per idempotency key.
var psp = &provider{
	ErrDeclined: errors.New("card declined"),
	ErrInvalid:  errors.New("invalid request: no card"),
	charged:     map[string]Receipt{},
	cards:       map[job.ID]string{},
}

type provider struct {
	ErrDeclined, ErrInvalid error

	mu      sync.Mutex
	charged map[string]Receipt // by idempotency key
	cards   map[job.ID]string
}

func (p *provider) card(id job.ID, card string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cards[id] = card
}

func (p *provider) Charge(ctx context.Context, key string, cents int) (Receipt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.charged[key]; ok {
		return r, nil
	}
	a, _ := runner.ActionFrom(ctx)
	switch p.cards[a.JobID] {
	case "declined":
		return Receipt{}, fmt.Errorf("%w: insufficient funds", p.ErrDeclined)
	case "":
		return Receipt{}, p.ErrInvalid
	}
	r := Receipt{ID: fmt.Sprintf("ch_%d", len(p.charged)+1), Cents: cents}
	p.charged[key] = r
	return r, nil
}

// couriers offers a booking at once for any order but "o-wait", for
// which no courier ever comes.
var couriers courierDesk

type courierDesk struct{}

func (courierDesk) Offer(order string) <-chan Booking {
	ch := make(chan Booking, 1)
	if order != "o-wait" {
		ch <- Booking{Courier: "RX", Fee: 690}
	}
	return ch
}

// notify tells the customer of order o: here, it returns the message.
func notify(_ context.Context, o Order, msg string) (string, error) {
	return o.ID + ": " + msg, nil
}

// block is one fenced block of a page.
type block struct {
	info, text string
	line       int // of the opening fence
}

// blocks returns the fenced blocks of md, the lines from the heading
// section up to the next "## " heading (all of md if section is "").
func blocks(t *testing.T, md, section string) []block {
	t.Helper()
	lines := strings.Split(md, "\n")
	from, to := 0, len(lines)
	if section != "" {
		from = -1
		for i, l := range lines {
			if l == section {
				from = i + 1
				continue
			}
			if from >= 0 && strings.HasPrefix(l, "## ") {
				to = i
				break
			}
		}
		if from < 0 {
			t.Fatalf("no section %q", section)
		}
	}
	var bs []block
	for i := from; i < to; i++ {
		if strings.HasPrefix(strings.TrimLeft(lines[i], " \t"), "```") && !strings.HasPrefix(lines[i], "```") {
			t.Errorf("line %d: an indented fence, which this test does not read", i+1)
		}
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		b := block{info: strings.TrimPrefix(lines[i], "```"), line: i + 1}
		var body []string
		for i++; i < to && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		if i == to {
			t.Fatalf("line %d: the block does not end", b.line)
		}
		b.text = strings.Join(body, "\n")
		bs = append(bs, b)
	}
	return bs
}

// mirror is the snippet a function of this file mirrors.
type mirror struct {
	name, text string
}

// mirrors returns the snippets of the functions of this file whose names
// start with prefix, in the order of the file.
func mirrors(t *testing.T, prefix string) []mirror {
	t.Helper()
	src, err := os.ReadFile("language_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "language_test.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ms []mirror
	for _, d := range f.Decls {
		fn, ok := d.(*goast.FuncDecl)
		if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, prefix) || fn.Body == nil {
			continue
		}
		body := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
		lines := strings.Split(strings.Trim(body, "\n"), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, "\t")
		}
		stmts := fn.Body.List
		if r, ok := stmts[len(stmts)-1].(*goast.ReturnStmt); ok && len(r.Results) == 1 {
			if _, ident := r.Results[0].(*goast.Ident); ident && len(stmts) > 1 {
				lines = lines[:len(lines)-1]
			} else if len(stmts) == 1 {
				lines[0] = strings.TrimPrefix(lines[0], "return ")
			}
		}
		ms = append(ms, mirror{name: fn.Name.Name, text: strings.Join(lines, "\n")})
	}
	return ms
}

// decode reads a JSON block: a document if it has a version, else a node.
func decode(text string) (ast.Node, error) {
	var probe map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &probe) == nil && probe["version"] != nil {
		return ast.Decode([]byte(text))
	}
	var n ast.Node
	err := n.UnmarshalJSON([]byte(text))
	return n, err
}

func TestLanguageSnippets(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range pages {
		data, err := os.ReadFile(p.file)
		if err != nil {
			t.Fatal(err)
		}
		bs := blocks(t, string(data), p.section)
		var goBlocks []int
		for i, b := range bs {
			if b.info == "go" {
				goBlocks = append(goBlocks, i)
			}
		}
		ms := mirrors(t, p.prefix)
		if len(ms) != len(goBlocks) {
			t.Errorf("%s: %d go blocks, %d %s functions in language_test.go", p.file, len(goBlocks), len(ms), p.prefix)
		}
		for k := range min(len(ms), len(goBlocks)) {
			b, m := bs[goBlocks[k]], ms[k]
			if b.text != m.text {
				t.Errorf("%s:%d: the go block is not the body of %s:\n--- page\n%s\n--- %s\n%s", p.file, b.line, m.name, b.text, m.name, m.text)
				continue
			}
			build, ok := workflows[m.name]
			if !ok {
				continue
			}
			seen[m.name] = true
			if goBlocks[k]+1 >= len(bs) || bs[goBlocks[k]+1].info != "json" {
				t.Errorf("%s:%d: the workflow of %s is not followed by a json block", p.file, b.line, m.name)
				continue
			}
			j := bs[goBlocks[k]+1]
			got, err := decode(j.text)
			if err != nil {
				continue // reported below
			}
			if want := build(); !ast.Equal(got, want) {
				g, _ := got.MarshalJSON()
				w, err := want.MarshalJSON()
				t.Errorf("%s:%d: the json block is not the tree of %s:\njson: %s\ngo:   %s %v", p.file, j.line, m.name, g, w, err)
			}
		}
		for i, b := range bs {
			switch b.info {
			case "json":
				n, err := decode(b.text)
				if err == nil {
					err = ast.Validate(n)
				}
				if err != nil {
					t.Errorf("%s:%d: %v", p.file, b.line, err)
				}
			case "json invalid":
				if i+1 >= len(bs) || bs[i+1].info != "text" {
					t.Errorf("%s:%d: an invalid example without the ```text block of its message", p.file, b.line)
					continue
				}
				_, err := decode(b.text)
				if err == nil || err.Error() != bs[i+1].text {
					t.Errorf("%s:%d: the example decodes with\n%v\nwant\n%s", p.file, b.line, err, bs[i+1].text)
				}
			case "go", "text", "sh", "":
			default:
				t.Errorf("%s:%d: a block of unknown kind %q", p.file, b.line, b.info)
			}
		}
	}
	for name := range workflows {
		if !seen[name] {
			t.Errorf("the workflow %s mirrors no go block", name)
		}
	}
}

// TestLanguageLinks checks that the links of docs/language.md lead to
// files of the repository or to its own headings.
func TestLanguageLinks(t *testing.T) {
	data, err := os.ReadFile("../docs/language.md")
	if err != nil {
		t.Fatal(err)
	}
	// Code is not prose: fenced blocks and code spans hold no links.
	text := regexp.MustCompile("(?s)\n```.*?\n```").ReplaceAllString(string(data), "")
	text = regexp.MustCompile("`[^`]*`").ReplaceAllString(text, "")
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(text, -1) {
		a := strings.ToLower(strings.ReplaceAll(m[1], " ", "-"))
		anchors[regexp.MustCompile(`[^a-z0-9_-]`).ReplaceAllString(a, "")] = true
	}
	for _, m := range regexp.MustCompile(`\]\(([^)]+)\)`).FindAllStringSubmatch(text, -1) {
		target := m[1]
		switch {
		case strings.HasPrefix(target, "#"):
			if !anchors[target[1:]] {
				t.Errorf("link to %s: no such heading", target)
			}
		case strings.Contains(target, "://"):
			t.Errorf("link to %s: the page links only within the repository", target)
		default:
			if _, err := os.Stat(filepath.Join("../docs", target)); err != nil {
				t.Errorf("link to %s: %v", target, err)
			}
		}
	}
}

// TestLanguageHandlers runs the handler snippets of docs/language.md: a
// charge that takes the courier's booking, a declined card given its kind
// and handled by a rescue that reads it, an invalid request that is final
// whatever the retry policy, and a cancel while the courier is awaited.
func TestLanguageHandlers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// start returns a runner whose started actions go to started.
	start := func(t *testing.T, started chan<- job.Action) *inmem.Runner {
		reg := runner.NewRegistry()
		for _, f := range []func(*runner.Registry) error{docCharge, docCourier, docRescue} {
			if err := f(reg); err != nil {
				t.Fatal(err)
			}
		}
		hooks := &runner.Hooks{ActionStarted: func(a job.Action) {
			select {
			case started <- a:
			default:
			}
		}}
		r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Hooks: hooks}})
		if err != nil {
			t.Fatal(err)
		}
		go r.Run(ctx)
		t.Cleanup(func() { r.Close() })
		return r
	}
	flow := func(o Order) ast.Node {
		return ast.Try(
			ast.Seq(
				ast.Act("courier.book", o).Named("courier"),
				ast.Act("payment.charge", o).Named("charge").WithInputs("courier").
					WithRetry(ast.Retry{Attempts: 3, NonRetryable: []string{"card_declined"}}),
			),
			ast.Rescue(ast.Act("order.cancel", o).Named("cancellation")),
		)
	}
	for _, c := range []struct {
		card   string
		cents  int    // charged, when the charge succeeds
		rescue string // what the rescue says, when the charge fails
	}{
		{card: "visa", cents: 1250 + 690},
		{card: "declined", rescue: "o-7: your card was declined"},
		{card: "", rescue: "o-7: we could not complete your order"},
	} {
		t.Run("card="+c.card, func(t *testing.T) {
			r := start(t, nil)
			psp.card("order-7", c.card)
			if err := r.Submit(ctx, "order-7", flow(Order{ID: "o-7", Cents: 1250, Card: c.card})); err != nil {
				t.Fatal(err)
			}
			got, err := docOutcome(ctx, r)
			switch {
			case c.rescue == "" && (err != nil || got.Cents != c.cents || !strings.HasPrefix(got.ID, "ch_")):
				t.Errorf("receipt %+v (%v), want one for %d cents", got, err, c.cents)
			case c.rescue != "" && (err == nil || !strings.Contains(err.Error(), `no output named "charge"`)):
				t.Errorf("the outcome of a rescued job: %+v, %v; want no charge", got, err)
			}
			j, err := r.Wait(ctx, "order-7")
			if err != nil {
				t.Fatal(err)
			}
			var charge job.NodeInfo
			j.Walk(func(n job.NodeInfo) bool {
				if n.Name == "charge" {
					charge = n
				}
				return true
			})
			// Declined: not retryable; invalid: final. Neither is retried.
			if charge.Attempt != 1 {
				t.Errorf("the charge ran %d times, want once\n%s", charge.Attempt, job.Describe(j))
			}
			if c.rescue != "" {
				if msg, err := job.OutputAs[string](j, "cancellation"); err != nil || msg != c.rescue {
					t.Errorf("the rescue said %q (%v), want %q", msg, err, c.rescue)
				}
			}
		})
	}
	t.Run("cancel", func(t *testing.T) {
		started := make(chan job.Action, 1)
		r := start(t, started)
		if err := r.Submit(ctx, "order-7", flow(Order{ID: "o-wait", Cents: 1250, Card: "visa"})); err != nil {
			t.Fatal(err)
		}
		select {
		case a := <-started: // the courier booking, which waits for a courier
			if a.Name != "courier.book" {
				t.Fatalf("%s started first", a.Name)
			}
		case <-ctx.Done():
			t.Fatal("the courier booking did not start")
		}
		if err := docCancel(ctx, r); err != nil {
			t.Fatal(err)
		}
		_, err := docOutcome(ctx, r)
		if err == nil || err.Error() != "order-7 cancelled: the customer cancelled the order" {
			t.Errorf("the outcome of a cancelled job: %v", err)
		}
	})
}

// TestLanguageJSONIsCanonical: the canonical form of every workflow
// snippet decodes to the same tree (Encode and Decode round-trip).
func TestLanguageJSONIsCanonical(t *testing.T) {
	for name, build := range workflows {
		b, err := ast.Encode(build())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n, err := ast.Decode(b)
		if err != nil || !ast.Equal(n, build()) {
			t.Errorf("%s: %s does not read back: %v", name, b, err)
		}
		if again, _ := ast.Encode(n); !bytes.Equal(again, b) {
			t.Errorf("%s: encoded twice differently:\n%s\n%s", name, b, again)
		}
	}
}
