package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// TestMain lets the test binary run the command itself: with the variable
// set, it is the command, which TestCommand starts in subprocesses.
func TestMain(m *testing.M) {
	if os.Getenv("BATON_ORDER_EXAMPLE") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The waits of a test run: short, as only lower bounds are checked.
const (
	testBackoff = 5 * time.Millisecond
	testCourier = time.Millisecond
)

// runMode runs the order with set and returns what it left, failing the
// test if it does not finish.
func runMode(t *testing.T, set settings) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	o, err := run(ctx, &out, set)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// node returns the job's node called name.
func node(t *testing.T, j job.Job, name string) job.NodeInfo {
	t.Helper()
	var found *job.NodeInfo
	j.Walk(func(n job.NodeInfo) bool {
		if n.Name == name {
			found = &n
			return false
		}
		return true
	})
	if found == nil {
		t.Fatalf("no node named %q", name)
	}
	return *found
}

// output decodes the output of the leaf called name.
func output[T any](t *testing.T, j job.Job, name string) T {
	t.Helper()
	v, err := job.OutputAs[T](j, name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// want checks the status and attempts of named nodes: "name": "status #n".
func want(t *testing.T, j job.Job, nodes map[string]string) {
	t.Helper()
	for name, w := range nodes {
		n := node(t, j, name)
		got := n.Status.String()
		if n.Attempt > 0 {
			got += fmt.Sprintf(" #%d", n.Attempt)
		}
		if got != w {
			t.Errorf("%s: %s, want %s", name, got, w)
		}
	}
}

// wantStock checks the shop's stock and money for the order.
func wantStock(t *testing.T, s *shop, available, held, shipped, charged, refunded int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	got := [...]int{s.available["SKU-42"], s.held["A-1001"], s.shipped["SKU-42"], s.charged["A-1001"], s.refunded["A-1001"]}
	if got != [...]int{available, held, shipped, charged, refunded} {
		t.Errorf("available, held, shipped, charged, refunded = %v, want %v", got, [...]int{available, held, shipped, charged, refunded})
	}
}

// wantRan checks how often each handler ran.
func wantRan(t *testing.T, s *shop, ran map[string]int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, n := range ran {
		if s.ran[name] != n {
			t.Errorf("%s ran %d times, want %d", name, s.ran[name], n)
		}
	}
}

// wantProvider checks that the payment provider was called calls times,
// all under one idempotency key, and that each retry began no earlier than
// its back-off allows: Initial * 2^(k-1), less the jitter of 20%.
func wantProvider(t *testing.T, s *shop, calls int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) != 1 {
		t.Errorf("the provider saw %d idempotency keys, want 1 for every attempt: %v", len(s.calls), s.calls)
	}
	for key, n := range s.calls {
		if n != calls {
			t.Errorf("the provider was called %d times under %s, want %d", n, key, calls)
		}
	}
	if len(s.began) != calls || len(s.ended) != calls {
		t.Fatalf("%d attempts began and %d ended, want %d", len(s.began), len(s.ended), calls)
	}
	least := time.Duration(float64(testBackoff) * 0.8)
	for k := 1; k < calls; k++ {
		if waited := s.began[k].Sub(s.ended[k-1]); waited < least {
			t.Errorf("attempt %d began %s after attempt %d ended, before its back-off (at least %s)", k+1, waited, k, least)
		}
		least *= 2
	}
}

func TestWorkflowValid(t *testing.T) {
	o := Order{ID: "A-1001", SKU: "SKU-42", Qty: 2, Cents: 2499, Card: "4242-4242"}
	if err := ast.Validate(workflow(o, time.Second)); err != nil {
		t.Fatal(err)
	}
	// The JSON form reads back as the same tree.
	b, err := ast.Encode(workflow(o, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	back, err := ast.Decode(b)
	if err != nil || !ast.Equal(back, workflow(o, time.Second)) {
		t.Fatalf("the workflow does not read back from %s: %v", b, err)
	}
}

// TestPaid: the provider fails twice with kind unavailable and charges on
// the third attempt, each retry after its back-off and under the same
// idempotency key; the outputs pass from step to step; the rescue does not
// run and the finally finds nothing left to release.
func TestPaid(t *testing.T) {
	o := runMode(t, settings{mode: modePaid, backoff: testBackoff, courier: testCourier})
	j, s := o.Job, o.Shop
	if j.Status() != job.StatusSucceeded {
		t.Fatalf("status %s, want succeeded\n%s", j.Status(), job.Describe(j))
	}
	want(t, j, map[string]string{
		"reserve": "succeeded #1", "fraud": "succeeded #1", "courier": "succeeded #1",
		"charge": "succeeded #3", "confirmation": "succeeded #1",
		"refund": "idle", "cancellation": "idle", "release": "succeeded #1",
	})
	wantProvider(t, s, 3)
	if got := output[Hold](t, j, "reserve"); got != (Hold{Warehouse: "LYS-1", SKU: "SKU-42", Qty: 2}) {
		t.Errorf("reserve output %+v", got)
	}
	if got := output[Booking](t, j, "courier"); got != (Booking{Courier: "RX Couriers", From: "LYS-1", Fee: 690}) {
		t.Errorf("courier output %+v: its From must come from reserve's output", got)
	}
	// The charge took the courier's fee as an input: 2 x 2499 + 690.
	if got := output[Receipt](t, j, "charge"); got != (Receipt{ID: "rcpt-1", Cents: 5688}) {
		t.Errorf("charge output %+v, want rcpt-1 for 5688 cents", got)
	}
	if got := output[Confirmation](t, j, "confirmation"); got != (Confirmation{Tracking: "RX-A-1001", Receipt: "rcpt-1"}) {
		t.Errorf("confirmation output %+v: its receipt must come from charge's output", got)
	}
	if got := output[Note](t, j, "release"); got != (Note{Did: "released 0 held x SKU-42"}) {
		t.Errorf("release output %+v: nothing left to release, no failure followed", got)
	}
	wantRan(t, s, map[string]int{"payment.charge": 3, "order.confirm": 1, "payment.refund": 0, "order.cancel": 0, "stock.release": 1})
	wantStock(t, s, 8, 0, 2, 5688, 0)
}

// TestDecline: after two 503s the third attempt is declined, a kind the
// policy lists as not retryable, so the leaf fails with two attempts left;
// the rescue runs, knowing what failed, and the job succeeds through it.
func TestDecline(t *testing.T) {
	o := runMode(t, settings{mode: modeDecline, backoff: testBackoff, courier: testCourier})
	j, s := o.Job, o.Shop
	if j.Status() != job.StatusSucceeded {
		t.Fatalf("status %s, want succeeded (rescued)\n%s", j.Status(), job.Describe(j))
	}
	want(t, j, map[string]string{
		"charge": "failed #3", "confirmation": "idle",
		"refund": "succeeded #1", "cancellation": "succeeded #1", "release": "succeeded #1",
	})
	if f := node(t, j, "charge").Failure; f == nil || f.Kind != "card_declined" {
		t.Errorf("charge failure %+v, want kind card_declined", f)
	}
	wantProvider(t, s, 3)
	s.mu.Lock()
	for _, step := range []string{"payment.refund", "order.cancel"} {
		f := s.followed[step]
		if f == nil || f.Path != "body.seq[1]" || f.Action != "payment.charge" || f.Kind != "card_declined" || f.Message != "card declined by the issuer" {
			t.Errorf("%s followed %+v, want the charge's failure", step, f)
		}
	}
	s.mu.Unlock()
	if got := output[Note](t, j, "refund"); got.Did != "nothing was charged; nothing to refund" || !strings.Contains(got.Followed, "[card_declined]") {
		t.Errorf("refund output %+v", got)
	}
	if got := output[Note](t, j, "release"); got.Did != "released 2 held x SKU-42" {
		t.Errorf("release output %+v", got)
	}
	wantRan(t, s, map[string]int{"payment.charge": 3, "order.confirm": 0, "payment.refund": 1, "order.cancel": 1, "stock.release": 1})
	wantStock(t, s, 10, 0, 0, 0, 0)
}

// TestLost: a failure after the charge (the courier loses the parcel) is
// compensated by a refund of what was charged.
func TestLost(t *testing.T) {
	o := runMode(t, settings{mode: modePaid, backoff: testBackoff, courier: testCourier, lose: true})
	j, s := o.Job, o.Shop
	if j.Status() != job.StatusSucceeded {
		t.Fatalf("status %s, want succeeded (rescued)\n%s", j.Status(), job.Describe(j))
	}
	want(t, j, map[string]string{"charge": "succeeded #3", "confirmation": "failed #1", "refund": "succeeded #1", "cancellation": "succeeded #1", "release": "succeeded #1"})
	if got := output[Note](t, j, "refund"); got.Did != "refunded 5688 cents" || !strings.HasPrefix(got.Followed, "body.seq[2] (order.confirm): RX Couriers lost the parcel") {
		t.Errorf("refund output %+v", got)
	}
	wantStock(t, s, 10, 0, 0, 5688, 5688)
}

// TestCancel: the job is cancelled while the courier booking waits. Its
// handler's context is cancelled with cause runner.ErrStopped, nothing new
// starts (not the charge, not the rescue), the finally releases the stock,
// and the job ends cancelled with the reason.
func TestCancel(t *testing.T) {
	o := runMode(t, settings{mode: modeCancel, backoff: testBackoff, courier: testCourier})
	j, s := o.Job, o.Shop
	if j.Status() != job.StatusCancelled {
		t.Fatalf("status %s, want cancelled\n%s", j.Status(), job.Describe(j))
	}
	if reason, ok := j.Cancelled(); !ok || reason != cancelReason {
		t.Errorf("Cancelled() = %q, %v; want %q", reason, ok, cancelReason)
	}
	if _, failed := j.Failure(); failed {
		t.Error("a cancelled job reports a failure")
	}
	want(t, j, map[string]string{
		"reserve": "succeeded #1", "fraud": "succeeded #1", "courier": "cancelled #1",
		"charge": "idle", "confirmation": "idle", "refund": "idle", "cancellation": "idle", "release": "succeeded #1",
	})
	s.mu.Lock()
	if !errors.Is(s.courierWhy, runner.ErrStopped) {
		t.Errorf("the courier booking stopped waiting because of %v, want runner.ErrStopped", s.courierWhy)
	}
	if f := s.followed["stock.release"]; f != nil {
		t.Errorf("the finally followed %+v, want none: a cancel is not a failure", f)
	}
	s.mu.Unlock()
	if got := output[Note](t, j, "release"); got.Did != "released 2 held x SKU-42" {
		t.Errorf("release output %+v", got)
	}
	wantRan(t, s, map[string]int{"courier.book": 1, "payment.charge": 0, "payment.refund": 0, "order.cancel": 0, "stock.release": 1})
	wantStock(t, s, 10, 0, 0, 0, 0)
}

// TestCommand runs the command as 'go run ./examples/order' would, with
// each flag, and checks the account it prints.
func TestCommand(t *testing.T) {
	for _, c := range []struct {
		args  []string
		code  int
		lines []string
	}{
		{nil, 0, []string{
			"job order-A-1001 succeeded\n",
			"  charge        succeeded after 3 attempts {\"id\":\"rcpt-1\",\"cents\":5688}\n",
			"stock of SKU-42: 8 available, 0 held, 2 shipped; charged 5688 cents, refunded 0\n",
		}},
		{[]string{"-decline"}, 0, []string{
			"job order-A-1001 succeeded, its rescue having handled a failure\n",
			"  charge        failed after 3 attempts: [card_declined] card declined by the issuer\n",
			"stock of SKU-42: 10 available, 0 held, 0 shipped; charged 0 cents, refunded 0\n",
		}},
		{[]string{"-cancel"}, 0, []string{
			"stopped waiting: runner: action stopped",
			"job order-A-1001 cancelled: the customer cancelled the order\n",
			"  courier       cancelled\n",
			"stock of SKU-42: 10 available, 0 held, 0 shipped; charged 0 cents, refunded 0\n",
		}},
		{[]string{"-decline", "-cancel"}, 2, []string{"pick one"}},
	} {
		cmd := exec.Command(os.Args[0], c.args...)
		cmd.Env = append(os.Environ(), "BATON_ORDER_EXAMPLE=1")
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			t.Fatal(err)
		}
		if code != c.code {
			t.Errorf("%q: exit %d, want %d\n%s", c.args, code, c.code, out)
		}
		for _, l := range c.lines {
			if !strings.Contains(string(out), l) {
				t.Errorf("%q: output lacks %q\n%s", c.args, l, out)
			}
		}
	}
}
