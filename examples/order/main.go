// Command order runs a realistic order flow with typed handlers:
//
//	seq(
//	  par(stock.reserve, fraud.check),
//	  try(seq(payment.charge, order.confirm),
//	      rescue(payment.refund, order.cancel),
//	      finally(stock.release)))
//
// The stock check and the fraud check run in parallel; the payment runs in
// a try whose rescue compensates (refund, cancel) and whose finally
// releases what is left of the stock reservation. Run it twice:
//
//	go run ./examples/order            # the card is accepted
//	go run ./examples/order -decline   # the card is declined: compensation
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"sync"

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
	Cents int    `json:"cents"`
	Card  string `json:"card"`
}

// shop is the outside world the handlers talk to: stock and payments.
type shop struct {
	mu                       sync.Mutex
	available, held, shipped map[string]int
	charged                  map[string]int    // order ID -> cents
	payments                 map[string]string // idempotency key -> receipt: a charge is made once per key
}

func main() {
	decline := flag.Bool("decline", false, "the payment is declined")
	flag.Parse()
	if err := runOrder(*decline); err != nil {
		log.Fatal(err)
	}
}

func runOrder(decline bool) error {
	s := &shop{available: map[string]int{"SKU-42": 10}, held: map[string]int{}, shipped: map[string]int{}, charged: map[string]int{}, payments: map[string]string{}}
	reg := runner.NewRegistry()
	if err := s.register(reg); err != nil {
		return err
	}
	r, err := inmem.New(inmem.Options{Store: store.NewMemory(), Registry: reg})
	if err != nil {
		return err
	}
	defer r.Close()
	go r.Run(context.Background())

	o := Order{ID: "A-1001", SKU: "SKU-42", Qty: 2, Cents: 4998, Card: "4242-4242"}
	if decline {
		o.Card = "4000-0002" // the test card that is always declined
	}
	workflow := ast.Seq(
		ast.Par(ast.Act("stock.reserve", o), ast.Act("fraud.check", o)),
		ast.Try(ast.Seq(ast.Act("payment.charge", o), ast.Act("order.confirm", o)),
			ast.Rescue(ast.Act("payment.refund", o), ast.Act("order.cancel", o)),
			ast.Finally(ast.Act("stock.release", o))),
	)
	fmt.Printf("order %s: %d x %s for %d cents, card %s\n", o.ID, o.Qty, o.SKU, o.Cents, o.Card)
	ctx := context.Background()
	if err := r.Submit(ctx, job.ID("order-"+o.ID), workflow); err != nil {
		return err
	}
	j, err := r.Wait(ctx, job.ID("order-"+o.ID))
	if err != nil {
		return err
	}

	outcome := "paid and confirmed"
	j.Walk(func(n job.NodeInfo) bool {
		if n.Action == "payment.charge" && n.Status == job.StatusFailed {
			outcome = "payment failed (" + n.Error + "): compensated, order cancelled"
		}
		return true
	})
	fmt.Printf("outcome: %s; job %s\n", outcome, j.Status())
	s.mu.Lock()
	fmt.Printf("stock of %s: %d available, %d held, %d shipped\n", o.SKU, s.available[o.SKU], s.held[o.SKU], s.shipped[o.SKU])
	s.mu.Unlock()
	fmt.Print(job.Describe(j))
	return nil
}

// register adds the typed handlers. Actions are delivered at least once,
// so each must be idempotent: the payment is keyed with its action's
// idempotency key (the same for every attempt of the leaf, as a payment
// provider's idempotency key would be); the others work on the order's
// state.
func (s *shop) register(reg *runner.Registry) error {
	type done struct {
		Order string `json:"order"`
		Note  string `json:"note"`
	}
	step := func(name string, f func(o Order, key string) (string, error)) error {
		return runner.Handle(reg, name, func(ctx context.Context, o Order) (done, error) {
			a, _ := runner.ActionFrom(ctx) // the action: job, attempt, idempotency key
			s.mu.Lock()
			note, err := f(o, a.IdempotencyKey())
			s.mu.Unlock()
			if err != nil {
				fmt.Printf("  %-15s %s: %v\n", name, o.ID, err)
				return done{}, err
			}
			fmt.Printf("  %-15s %s: %s\n", name, o.ID, note)
			return done{Order: o.ID, Note: note}, nil
		})
	}
	return errors.Join(
		step("stock.reserve", func(o Order, _ string) (string, error) {
			if s.available[o.SKU] < o.Qty {
				return "", fmt.Errorf("only %d of %s in stock", s.available[o.SKU], o.SKU)
			}
			s.available[o.SKU] -= o.Qty
			s.held[o.SKU] += o.Qty
			return fmt.Sprintf("holding %d x %s", o.Qty, o.SKU), nil
		}),
		step("fraud.check", func(o Order, _ string) (string, error) {
			if o.Cents > 100000 {
				return "", errors.New("amount needs a manual review")
			}
			return "low risk", nil
		}),
		step("payment.charge", func(o Order, key string) (string, error) {
			if receipt, ok := s.payments[key]; ok {
				return receipt, nil // delivered again: charged once already
			}
			if o.Card == "4000-0002" {
				return "", errors.New("card declined")
			}
			s.charged[o.ID] = o.Cents
			s.payments[key] = fmt.Sprintf("charged %d cents", o.Cents)
			return s.payments[key], nil
		}),
		step("order.confirm", func(o Order, _ string) (string, error) {
			s.held[o.SKU] -= o.Qty
			s.shipped[o.SKU] += o.Qty
			return "confirmed; the held stock is shipped", nil
		}),
		step("payment.refund", func(o Order, _ string) (string, error) {
			if c := s.charged[o.ID]; c > 0 {
				delete(s.charged, o.ID)
				return fmt.Sprintf("refunded %d cents", c), nil
			}
			return "nothing was charged; nothing to refund", nil
		}),
		step("order.cancel", func(Order, string) (string, error) { return "cancelled; customer notified", nil }),
		step("stock.release", func(o Order, _ string) (string, error) {
			n := min(s.held[o.SKU], o.Qty)
			s.held[o.SKU] -= n
			s.available[o.SKU] += n
			return fmt.Sprintf("released %d held x %s", n, o.SKU), nil
		}),
	)
}
