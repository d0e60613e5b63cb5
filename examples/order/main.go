// Command order runs an order workflow on the in-memory runner. It passes
// data between steps, retries a flaky payment provider with back-off, and
// can be cancelled while it waits:
//
//	try(
//	  seq(
//	    dag(
//	      reserve: stock.reserve
//	      fraud:   fraud.check
//	      courier: courier.book    after reserve and fraud; takes reserve
//	    ),
//	    charge:       payment.charge   takes courier and fraud; retried
//	    confirmation: order.confirm    takes reserve, courier and charge
//	  ),
//	  rescue(refund: payment.refund, cancellation: order.cancel),
//	  finally(release: stock.release))
//
// The stock is reserved and the fraud check runs at once; a courier is
// booked once both have succeeded, from the warehouse the reservation
// names. The charge adds the courier's fee to the goods. The payment
// provider answers 503 to the first two calls, so the charge succeeds on
// its third attempt, each after a back-off. The rescue compensates a
// failed body and says which failure it follows (job.Action.Failure); the
// finally releases whatever stock is still held, whatever happened,
// also when the job is cancelled.
//
//	go run ./examples/order            # paid on the third attempt, confirmed
//	go run ./examples/order -decline   # the third attempt is declined: not retried, compensated
//	go run ./examples/order -cancel    # cancelled while waiting for a courier
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/store"
)

// Order is the payload of every action of the flow.
type Order struct {
	ID    string `json:"id"`
	SKU   string `json:"sku"`
	Qty   int    `json:"qty"`
	Cents int    `json:"cents"` // per item
	Card  string `json:"card"`
}

// The outputs of the steps, which later steps take as inputs.
type (
	// Hold is stock.reserve's output.
	Hold struct {
		Warehouse string `json:"warehouse"`
		SKU       string `json:"sku"`
		Qty       int    `json:"qty"`
	}
	// Risk is fraud.check's output.
	Risk struct {
		Score int    `json:"score"`
		Level string `json:"level"`
	}
	// Booking is courier.book's output.
	Booking struct {
		Courier string `json:"courier"`
		From    string `json:"from"`
		Fee     int    `json:"fee"` // cents
	}
	// Receipt is payment.charge's output.
	Receipt struct {
		ID    string `json:"id"`
		Cents int    `json:"cents"`
	}
	// Confirmation is order.confirm's output.
	Confirmation struct {
		Tracking string `json:"tracking"`
		Receipt  string `json:"receipt"`
	}
	// Note is the output of the compensating steps: what they did, and
	// the failure they follow (job.Action.Failure), if any.
	Note struct {
		Did      string `json:"did"`
		Followed string `json:"followed,omitempty"`
	}
)

// declinedCard is the test card the payment provider always declines.
const declinedCard = "4000-0002"

// mode is what the run shows.
type mode int

const (
	modePaid    mode = iota // the charge succeeds on its third attempt
	modeDecline             // the third attempt is declined
	modeCancel              // the job is cancelled while a courier is awaited
)

// cancelReason is what the -cancel run cancels the job with.
const cancelReason = "the customer cancelled the order"

// settings tune a run; tests shorten the waits.
type settings struct {
	mode    mode
	backoff time.Duration // the charge's first retry wait
	courier time.Duration // how long a courier takes to accept (unless cancelled)
	// lose makes the courier lose the parcel once the order is charged
	// (tests only): order.confirm fails, and the rescue refunds.
	lose bool
}

func main() {
	decline := flag.Bool("decline", false, "the card is declined")
	cancel := flag.Bool("cancel", false, "cancel the job while it waits for a courier")
	flag.Parse()
	s := settings{backoff: 100 * time.Millisecond, courier: 50 * time.Millisecond}
	switch {
	case *decline && *cancel:
		fmt.Fprintln(os.Stderr, "order: -decline and -cancel: pick one")
		os.Exit(2)
	case *decline:
		s.mode = modeDecline
	case *cancel:
		s.mode = modeCancel
	}
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	if _, err := run(ctx, os.Stdout, s); err != nil {
		log.Fatal(err)
	}
}

// workflow returns the order's workflow; backoff is the charge's first
// retry wait.
func workflow(o Order, backoff time.Duration) ast.Node {
	charge := ast.Act("payment.charge", o).Named("charge").WithInputs("courier", "fraud").
		WithRetry(ast.Retry{
			Attempts:     5,
			Initial:      backoff,
			Multiplier:   2,
			Max:          8 * backoff,
			Jitter:       0.2,
			NonRetryable: []string{"card_declined"},
		}).
		WithTimeout(2 * time.Second)
	return ast.Try(
		ast.Seq(
			ast.Dag(
				ast.Act("stock.reserve", o).Named("reserve"),
				ast.Act("fraud.check", o).Named("fraud"),
				ast.Act("courier.book", o).Named("courier").WithAfter("reserve", "fraud").WithInputs("reserve"),
			),
			charge,
			ast.Act("order.confirm", o).Named("confirmation").WithInputs("reserve", "courier", "charge"),
		),
		ast.Rescue(
			ast.Act("payment.refund", o).Named("refund"),
			ast.Act("order.cancel", o).Named("cancellation"),
		),
		ast.Finally(ast.Act("stock.release", o).Named("release")),
	)
}

// outcome is what a run left: the finished job and the shop's state.
type outcome struct {
	Job  job.Job
	Shop *shop
}

// run runs one order to its end and prints an account of it to w.
func run(ctx context.Context, w io.Writer, set settings) (outcome, error) {
	s := newShop(w, set)
	reg := runner.NewRegistry()
	if err := s.register(reg); err != nil {
		return outcome{}, err
	}
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: store.NewMemory()})
	if err != nil {
		return outcome{}, err
	}
	defer r.Close()
	go r.Run(context.Background())

	o := Order{ID: "A-1001", SKU: "SKU-42", Qty: 2, Cents: 2499, Card: "4242-4242"}
	if set.mode == modeDecline {
		o.Card = declinedCard
	}
	id := job.ID("order-" + o.ID)
	fmt.Fprintf(w, "order %s: %d x %s at %d cents, card %s\n", o.ID, o.Qty, o.SKU, o.Cents, o.Card)
	if err := r.Submit(ctx, id, workflow(o, set.backoff)); err != nil {
		return outcome{}, err
	}
	if set.mode == modeCancel {
		select {
		case <-s.waiting:
		case <-ctx.Done():
			return outcome{}, fmt.Errorf("no courier booking began: %w", ctx.Err())
		}
		s.say("r.Cancel", "%s: %s", id, cancelReason)
		if err := r.Cancel(ctx, id, cancelReason); err != nil {
			return outcome{}, err
		}
	}
	j, err := r.Wait(ctx, id)
	if err != nil {
		return outcome{}, err
	}
	if set.mode == modeCancel {
		// The job ends once its finally has run, which may be before the
		// stopped handler has returned: wait for it, to report what it saw.
		select {
		case <-s.courierDone:
		case <-ctx.Done():
			return outcome{}, fmt.Errorf("the stopped courier booking did not return: %w", ctx.Err())
		}
	}
	report(w, j, s, o)
	return outcome{Job: j, Shop: s}, nil
}

// report prints the job's status, each named step, and the shop's state.
func report(w io.Writer, j job.Job, s *shop, o Order) {
	status := j.Status().String()
	if reason, ok := j.Cancelled(); ok {
		status += ": " + reason
	}
	j.Walk(func(n job.NodeInfo) bool {
		if n.Status == job.StatusFailed && j.Status() == job.StatusSucceeded {
			// Only a rescue lets a job with a failed step succeed.
			status += ", its rescue having handled a failure"
			return false
		}
		return true
	})
	fmt.Fprintf(w, "job %s %s\n", j.ID(), status)
	j.Walk(func(n job.NodeInfo) bool {
		if n.Name == "" {
			return true
		}
		line := fmt.Sprintf("  %-13s %s", n.Name, n.Status)
		if n.Attempt > 1 {
			line += fmt.Sprintf(" after %d attempts", n.Attempt)
		}
		switch {
		case n.Status == job.StatusFailed && n.Failure != nil && n.Failure.Kind != "":
			line += fmt.Sprintf(": [%s] %s", n.Failure.Kind, job.Clip(n.Error))
		case n.Status == job.StatusFailed:
			line += ": " + job.Clip(n.Error)
		case len(n.Output) > 0:
			line += " " + string(n.Output)
		}
		fmt.Fprintln(w, line)
		return true
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(w, "stock of %s: %d available, %d held, %d shipped; charged %d cents, refunded %d\n",
		o.SKU, s.available[o.SKU], s.held[o.ID], s.shipped[o.SKU], s.charged[o.ID], s.refunded[o.ID])
}

// shop is the outside world the handlers talk to: a warehouse, a fraud
// service, couriers and a payment provider. Every change it makes is keyed
// so that an action delivered twice changes nothing the second time.
type shop struct {
	set settings

	outMu sync.Mutex
	out   io.Writer

	mu        sync.Mutex
	available map[string]int     // by SKU
	held      map[string]int     // by order ID
	shipped   map[string]int     // by SKU
	holds     map[string]Hold    // by idempotency key: a reservation is made once
	bookings  map[string]Booking // by idempotency key
	receipts  map[string]Receipt // by idempotency key: a charge is made once
	calls     map[string]int     // calls to the payment provider, by idempotency key
	charged   map[string]int     // cents, by order ID
	refunded  map[string]int     // cents, by order ID
	ran       map[string]int     // handler runs, by action name
	began     []time.Time        // when each charge attempt began
	ended     []time.Time        // and ended
	followed  map[string]*job.Failure

	waiting     chan struct{} // closed once a courier booking waits
	courierDone chan struct{} // closed once a stopped courier booking returned
	courierWhy  error         // why the courier booking stopped waiting (context.Cause)
	waitOnce    sync.Once
	doneOnce    sync.Once
}

func newShop(w io.Writer, set settings) *shop {
	return &shop{
		set: set, out: w,
		available: map[string]int{"SKU-42": 10}, held: map[string]int{}, shipped: map[string]int{},
		holds: map[string]Hold{}, bookings: map[string]Booking{}, receipts: map[string]Receipt{},
		calls: map[string]int{}, charged: map[string]int{}, refunded: map[string]int{},
		ran: map[string]int{}, followed: map[string]*job.Failure{},
		waiting: make(chan struct{}), courierDone: make(chan struct{}),
	}
}

// say prints one line of the account, for step.
func (s *shop) say(step, format string, args ...any) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	fmt.Fprintf(s.out, "  %-15s %s\n", step, fmt.Sprintf(format, args...))
}

// action returns the action a handler performs, and counts the run.
func (s *shop) action(ctx context.Context) job.Action {
	a, _ := runner.ActionFrom(ctx) // always there: the handlers run under runner.Execute
	s.mu.Lock()
	s.ran[a.Name]++
	if a.Failure != nil {
		f := *a.Failure
		s.followed[a.Name] = &f
	}
	s.mu.Unlock()
	return a
}

// register adds the typed handlers.
func (s *shop) register(reg *runner.Registry) error {
	return errors.Join(
		runner.Handle(reg, "stock.reserve", s.reserve),
		runner.Handle(reg, "fraud.check", s.fraudCheck),
		runner.Handle(reg, "courier.book", s.bookCourier),
		runner.Handle(reg, "payment.charge", s.charge),
		runner.Handle(reg, "order.confirm", s.confirm),
		runner.Handle(reg, "payment.refund", s.refund),
		runner.Handle(reg, "order.cancel", s.cancel),
		runner.Handle(reg, "stock.release", s.release),
	)
}

func (s *shop) reserve(ctx context.Context, o Order) (Hold, error) {
	a := s.action(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.holds[a.IdempotencyKey()]; ok {
		return h, nil // delivered again: reserved once already
	}
	if s.available[o.SKU] < o.Qty {
		// No retry would mend it.
		return Hold{}, runner.Final(fmt.Errorf("only %d of %s in stock", s.available[o.SKU], o.SKU))
	}
	s.available[o.SKU] -= o.Qty
	s.held[o.ID] += o.Qty
	h := Hold{Warehouse: "LYS-1", SKU: o.SKU, Qty: o.Qty}
	s.holds[a.IdempotencyKey()] = h
	s.say(a.Name, "holding %d x %s at %s", h.Qty, h.SKU, h.Warehouse)
	return h, nil
}

func (s *shop) fraudCheck(ctx context.Context, o Order) (Risk, error) {
	a := s.action(ctx)
	if o.Qty*o.Cents > 100000 {
		return Risk{}, runner.WithKind(errors.New("the amount needs a manual review"), "review")
	}
	r := Risk{Score: 12, Level: "low"}
	s.say(a.Name, "score %d: %s risk", r.Score, r.Level)
	return r, nil
}

// bookCourier waits for a courier to accept the parcel, or for its
// context to end: the runner stops it when the job is cancelled.
func (s *shop) bookCourier(ctx context.Context, o Order) (Booking, error) {
	a := s.action(ctx)
	hold, err := runner.InputAs[Hold](ctx, "reserve")
	if err != nil {
		return Booking{}, err
	}
	s.mu.Lock()
	b, ok := s.bookings[a.IdempotencyKey()]
	s.mu.Unlock()
	if ok {
		return b, nil
	}
	s.say(a.Name, "waiting for a courier to collect %d x %s at %s", hold.Qty, hold.SKU, hold.Warehouse)
	var accepted <-chan time.Time
	if s.set.mode != modeCancel {
		accepted = time.After(s.set.courier)
	}
	s.waitOnce.Do(func() { close(s.waiting) })
	select {
	case <-accepted:
	case <-ctx.Done():
		why := context.Cause(ctx)
		s.mu.Lock()
		s.courierWhy = why
		s.mu.Unlock()
		s.say(a.Name, "stopped waiting: %v", why)
		s.doneOnce.Do(func() { close(s.courierDone) })
		return Booking{}, why
	}
	b = Booking{Courier: "RX Couriers", From: hold.Warehouse, Fee: 690}
	s.mu.Lock()
	s.bookings[a.IdempotencyKey()] = b
	s.mu.Unlock()
	s.say(a.Name, "%s collects from %s for %d cents", b.Courier, b.From, b.Fee)
	return b, nil
}

// charge asks the payment provider for the goods and the courier's fee.
// The provider answers 503 to the first two calls: the retry policy tries
// again after a back-off, under the same idempotency key.
func (s *shop) charge(ctx context.Context, o Order) (Receipt, error) {
	a := s.action(ctx)
	booking, err := runner.InputAs[Booking](ctx, "courier")
	if err != nil {
		return Receipt{}, err
	}
	risk, err := runner.InputAs[Risk](ctx, "fraud")
	if err != nil {
		return Receipt{}, err
	}
	cents := o.Qty*o.Cents + booking.Fee
	key := a.IdempotencyKey()

	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	waited := ""
	if n := len(s.ended); n > 0 {
		waited = fmt.Sprintf(" (%s after attempt %d)", now.Sub(s.ended[n-1]).Round(time.Millisecond), a.Attempt-1)
	}
	s.began = append(s.began, now)
	defer func() { s.ended = append(s.ended, time.Now()) }()
	if r, ok := s.receipts[key]; ok {
		return r, nil // delivered again: charged once already
	}
	s.calls[key]++
	var kind string
	switch {
	case s.calls[key] <= 2:
		err, kind = errors.New("503 from the payment provider"), "unavailable"
	case o.Card == declinedCard:
		err, kind = errors.New("card declined by the issuer"), "card_declined"
	}
	if err != nil {
		// The kind is what the retry policy looks at: it lists
		// card_declined as not retryable.
		s.say(a.Name, "attempt %d%s: %v [%s]", a.Attempt, waited, err, kind)
		return Receipt{}, runner.WithKind(err, kind)
	}
	r := Receipt{ID: fmt.Sprintf("rcpt-%d", len(s.receipts)+1), Cents: cents}
	s.receipts[key] = r
	s.charged[o.ID] += cents
	s.say(a.Name, "attempt %d%s: charged %d cents (goods %d, courier %d; risk %s)",
		a.Attempt, waited, cents, o.Qty*o.Cents, booking.Fee, risk.Level)
	return r, nil
}

func (s *shop) confirm(ctx context.Context, o Order) (Confirmation, error) {
	a := s.action(ctx)
	hold, err := runner.InputAs[Hold](ctx, "reserve")
	if err != nil {
		return Confirmation{}, err
	}
	booking, err := runner.InputAs[Booking](ctx, "courier")
	if err != nil {
		return Confirmation{}, err
	}
	receipt, err := runner.InputAs[Receipt](ctx, "charge")
	if err != nil {
		return Confirmation{}, err
	}
	if s.set.lose {
		err := runner.Final(fmt.Errorf("%s lost the parcel", booking.Courier))
		s.say(a.Name, "%v", err)
		return Confirmation{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Shipping what is held is idempotent: the second time nothing is.
	n := min(s.held[o.ID], hold.Qty)
	s.held[o.ID] -= n
	s.shipped[hold.SKU] += n
	c := Confirmation{Tracking: "RX-" + o.ID, Receipt: receipt.ID}
	s.say(a.Name, "%d x %s shipped with %s, tracking %s, receipt %s", hold.Qty, hold.SKU, booking.Courier, c.Tracking, c.Receipt)
	return c, nil
}

// refund compensates a failed body: it refunds what was charged, if
// anything. Its action says which failure it follows.
func (s *shop) refund(ctx context.Context, o Order) (Note, error) {
	a := s.action(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := Note{Did: "nothing was charged; nothing to refund", Followed: followed(a)}
	if c := s.charged[o.ID] - s.refunded[o.ID]; c > 0 {
		s.refunded[o.ID] += c
		n.Did = fmt.Sprintf("refunded %d cents", c)
	}
	s.say(a.Name, "%s (after %s)", n.Did, n.Followed)
	return n, nil
}

// cancel tells the customer why the order is cancelled: the failure the
// rescue follows.
func (s *shop) cancel(ctx context.Context, o Order) (Note, error) {
	a := s.action(ctx)
	why := "it could not be completed"
	if a.Failure != nil {
		why = a.Failure.Message
	}
	n := Note{Did: fmt.Sprintf("order %s cancelled; the customer is told: %s", o.ID, why), Followed: followed(a)}
	s.say(a.Name, "%s", n.Did)
	return n, nil
}

// release gives back the stock still held for the order: all of it
// unless it was shipped. It runs whatever happened, so it may have
// nothing to do.
func (s *shop) release(ctx context.Context, o Order) (Note, error) {
	a := s.action(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.held[o.ID]
	s.held[o.ID] = 0
	s.available[o.SKU] += n
	note := Note{Did: fmt.Sprintf("released %d held x %s", n, o.SKU), Followed: followed(a)}
	s.say(a.Name, "%s", note.Did)
	return note, nil
}

// followed describes the failure that a's rescue or finally follows.
func followed(a job.Action) string {
	if a.Failure == nil {
		return ""
	}
	f := a.Failure.String()
	if a.Failure.Kind != "" {
		f += " [" + a.Failure.Kind + "]"
	}
	return f
}
