package job_test

// Golden encodings of mid-flight jobs: the compatibility promise. Every
// file in testdata/golden is a job encoded by an earlier (or the current)
// baton; this baton must decode it, describe it the same way, re-encode it
// byte for byte and run it to its end. The files are never rewritten: when
// the encoding changes, job.Format goes up and new files are added beside
// the old ones (go test ./job -run TestGolden -update-golden writes the
// files that are missing, and only those).

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

var goldenUpdate = flag.Bool("update-golden", false, "write the golden job files of testdata/golden that are missing; existing files are never overwritten")

const goldenDir = "testdata/golden"

// goldenCase builds one mid-flight job with the current code. Each case is
// kept at every format: built with the options that make Encode write that
// format (goldenFormats).
type goldenCase struct {
	name  string
	about string
	build func(opts ...job.Option) (job.Job, error)
}

// goldenFormats gives, for every format Encode writes, the options that
// make a job need it and the cases kept at it: formats 1 and 2 keep the
// same histories, formats 3, 4 and 5 histories of workflows that need
// them (names, inputs, dags; time; priorities).
var goldenFormats = map[int]struct {
	opts  []job.Option
	cases func() []goldenCase
}{
	1:  {nil, goldenCases},
	2:  {[]job.Option{job.WithIncarnation(0x5eed_0f_ba70)}, goldenCases},
	3:  {[]job.Option{job.WithIncarnation(0x5eed_0f_ba73)}, goldenGraphCases},
	4:  {[]job.Option{job.WithIncarnation(0x5eed_0f_ba74), job.StartedAt(time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC))}, goldenTimedCases},
	5:  {[]job.Option{job.WithIncarnation(0x5eed_0f_ba75)}, goldenPriorityCases},
	6:  {[]job.Option{job.WithIncarnation(0x5eed_0f_ba76), job.StartedAt(time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC))}, goldenStoppedCases},
	7:  {[]job.Option{job.WithIncarnation(0x5eed_0f_ba77), job.StartedAt(time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC))}, goldenCancelTimeCases},
	8:  {[]job.Option{job.WithIncarnation(0x5eed_0f_ba78)}, goldenRaceCases},
	9:  {[]job.Option{job.WithIncarnation(0x5eed_0f_ba79)}, goldenLang3Cases},
	10: {[]job.Option{job.WithIncarnation(0x5eed_0f_ba7a)}, goldenGrowingCases},
}

// goldenGrowingCases are the histories kept at format 10: maps and loops,
// whose runs change the tree (the growth log).
func goldenGrowingCases() []goldenCase {
	return []goldenCase{
		{
			name:  "map-running",
			about: "a map of a seq over three elements with a limit of 2: copy 0 done, copy 1 halfway, copy 2 running; a named map's output read after it",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "resize-19", ast.Seq(
					ast.Act("list", nil).Named("files"),
					ast.Map("files", ast.Seq(ast.Act("fetch", nil).WithInputs("item").Named("got"), ast.Act("resize", nil).WithInputs("got", "index"))).WithLimit(2).Named("all"),
					ast.Act("report", nil).WithInputs("all")),
					map[string]string{"seq[0]#1": `ok:["a.png","b.png","c.png"]`},
					map[string]string{"seq[1].map[0].seq[0]#1": `ok:"A"`, "seq[1].map[1].seq[0]#1": `ok:"B"`},
					map[string]string{"seq[1].map[0].seq[1]#1": "ok"},
				)
			},
		},
		{
			name:  "loop-iterating",
			about: "a loop at its third iteration (the until leaf said false twice), with a map in its body that started again",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "poll-19", ast.Loop(ast.Seq(
					ast.Act("poll", nil).Named("ids"),
					ast.Map("ids", ast.Act("check", nil).WithInputs("item")),
					ast.Act("ready", nil).Named("done")), "done", true, 5),
					map[string]string{"loop[0].seq[0]#1": `ok:[1,2]`},
					map[string]string{"loop[0].seq[1].map[0]#1": "ok", "loop[0].seq[1].map[1]#1": "ok"},
					map[string]string{"loop[0].seq[2]#1": "ok:false"},
					map[string]string{"loop[1].seq[0]#1": `ok:[]`},
					map[string]string{"loop[1].seq[2]#1": "ok:false"},
					map[string]string{"loop[2].seq[0]#1": `ok:[7]`},
				)
			},
		},
	}
}

// goldenLang3Cases are the histories kept at format 9: workflows of
// version 3, a choice with skipped cases running its selected one.
func goldenLang3Cases() []goldenCase {
	return []goldenCase{
		{
			name:  "choice-running",
			about: "a choice on a leaf's output: its second case runs, the first and the else are skipped",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "ship-16", ast.Seq(
					ast.Act("classify", 7).Named("size"),
					ast.Choice("size",
						ast.When("small", ast.Act("ship.letter", nil)),
						ast.WhenAny([]any{"big", "huge"}, ast.Seq(ast.Act("ship.box", nil), ast.Act("insure", nil))),
						ast.Else(ast.Act("ship.freight", nil))),
					ast.Act("notify", nil)),
					map[string]string{"seq[0]#1": `ok:"big"`},
				)
			},
		},
		{
			name:  "wait-signals",
			about: "a wait that took a signal, a race of a wait and a sleep pending, a kept signal, a node cancelled and rescued",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "approve-18", ast.Par(
					ast.Seq(ast.Act("prepare", nil), ast.Wait("approval").Named("answer"),
						ast.Race(ast.Wait("stop"), ast.Sleep(48*time.Hour)), ast.Act("apply", nil).WithInputs("answer")),
					ast.Try(ast.Act("review", nil).Named("review"), ast.Rescue(ast.Act("skip", nil)))),
					map[string]string{"@signal/approval/a1": `signal:{"ok":true}`, "@signal/other/x": "signal:"},
					map[string]string{"par[0].seq[0]#1": "ok", "@cancel/review": "cancelnode:too slow"},
				)
			},
		},
		{
			name:  "choice-no-case",
			about: "a multi choice whose output is not an array: failed as it started, kind not_an_array, every case skipped",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "ship-17", ast.Seq(
					ast.Act("pick", nil).Named("tags"),
					ast.Choice("tags", ast.When("a", ast.Act("do.a", nil)), ast.Else(ast.Act("none", nil))).AllMatching()),
					map[string]string{"seq[0]#1": `ok:{"a":1}`},
				)
			},
		},
	}
}

// goldenRaceCases are the histories kept at format 8: races and replicas
// (workflow version 2), one won with a loser in its finally block, one
// undecided with a failed child and replicas whose copies take their own
// copy's outputs.
func goldenRaceCases() []goldenCase {
	return []goldenCase{
		{
			name:  "race-won",
			about: "a named race won by a leaf while a loser runs its finally block; the winner's output waits for the next leaf",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "fetch-14", ast.Seq(
					ast.Race(ast.Act("mirror", "eu"), ast.Try(ast.Act("mirror", "us"), ast.Finally(ast.Act("close", "us")))).Named("page"),
					ast.Act("render", nil).WithInputs("page")),
					map[string]string{"seq[0].race[1].body#1": "ok"},
					map[string]string{"seq[0].race[0]#1": `ok:"eu page"`},
				)
			},
		},
		{
			name:  "replicas-running",
			about: "3 replicas of a seq whose second leaf takes its own copy's output: one copy failed, one is at its second leaf",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "probe-15", ast.Seq(
					ast.Seq(ast.Act("probe", 1).Named("got"), ast.Act("check", nil).WithInputs("got")).WithReplicas(3).Named("best"),
					ast.Act("report", nil).WithInputs("best")),
					map[string]string{"seq[0].race[0].seq[0]#1": "fail:timeout", "seq[0].race[1].seq[0]#1": "ok"},
				)
			},
		},
	}
}

// goldenCancelTimeCases are the histories kept at format 7: a cancel
// stamped with its time ("cancel_at"), as runners stamp theirs.
func goldenCancelTimeCases() []goldenCase {
	return []goldenCase{
		{
			name:  "cancelled-at",
			about: "a job cancelled with a time while a try's body ran: its finally still runs; the job keeps the cancel's reason and time",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "order-13", ast.Seq(ast.Act("charge", 1), ast.Try(ast.Act("pack", 2), ast.Finally(ast.Act("release", 2)))),
					map[string]string{"seq[0]#1": "ok"},
					map[string]string{"@cancel": "cancel-at:the parcel was lost"},
				)
			},
		},
	}
}

// goldenStoppedCases are the histories kept at format 6: a leaf whose own
// deadline stopped its attempt in flight (flag 4).
func goldenStoppedCases() []goldenCase {
	return []goldenCase{
		{
			name:  "deadline-stopped",
			about: "a par whose flaky leaf failed once, ran its second attempt and was stopped by its own deadline, beside a leaf that runs",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "pay-10", ast.Par(
					ast.Act("charge", 500).WithRetry(ast.Retry{Attempts: 3, Initial: time.Second}).WithDeadline(30*time.Second),
					ast.Act("fetch", "https://example.com"),
				),
					map[string]string{"par[0]#1": "fail:502 from the bank"},
					map[string]string{"par[0]@retry#2": "fire"},
					map[string]string{"par[0]@deadline": "fire"},
				)
			},
		},
	}
}

// goldenPriorityCases are the histories kept at format 5: workflows with
// action priorities, with time (a clock, a retry) and without.
func goldenPriorityCases() []goldenCase {
	return []goldenCase{
		{
			name:  "priority-retry",
			about: "a par of leaves with priorities: the urgent one failed and runs its second attempt, the default one succeeded, the low one runs",
			build: func(opts ...job.Option) (job.Job, error) {
				opts = append(opts[:len(opts):len(opts)], job.StartedAt(time.Date(2026, 11, 25, 5, 0, 0, 0, time.UTC)))
				return goldenPlay(opts, "pay-9", ast.Par(
					ast.Act("charge", 500).WithPriority(100).WithRetry(ast.Retry{Attempts: 3, Initial: time.Second}),
					ast.Act("fetch", "https://example.com"),
					ast.Act("report", nil).WithPriority(-20),
				),
					map[string]string{"par[0]#1": "fail:502 from the bank", "par[1]#1": "ok"},
					map[string]string{"par[0]@retry#2": "fire"},
				)
			},
		},
		{
			name:  "priority-only",
			about: "priorities alone (no clock, retry, timeout or deadline): a try's seq with its first step done and its high-priority second one running, a low-priority finally to come",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "ship-5", ast.Try(
					ast.Seq(ast.Act("pack", 1), ast.Act("ship", 1).WithPriority(1000), ast.Act("notify", nil)),
					ast.Finally(ast.Act("audit", nil).WithPriority(-1000)),
				),
					map[string]string{"body.seq[0]#1": `ok:{"box":"b-1"}`},
				)
			},
		},
	}
}

// goldenTimedCases are the histories kept at format 4: retries, timeouts,
// at-most-once delivery, times.
func goldenTimedCases() []goldenCase {
	retry := ast.Retry{Attempts: 4, Initial: time.Second, Multiplier: 2, Max: time.Minute, Jitter: 0.2, NonRetryable: []string{"card_declined"}}
	return []goldenCase{
		{
			name:  "retry-waiting",
			about: "a par whose flaky leaf failed twice and waits for its third attempt, beside a leaf with a timeout and an at-most-once leaf",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "pay-7", ast.Par(
					ast.Act("charge", 500).WithRetry(retry),
					ast.Act("fetch", "https://example.com").WithTimeout(5*time.Second),
					ast.Act("ship", nil).AtMostOnce(),
				),
					map[string]string{"par[0]#1": "fail:502 from the bank"},
					map[string]string{"par[0]@retry#2": "fire"},
					map[string]string{"par[0]#2": "fail:timeout", "par[1]#1": "ok"},
				)
			},
		},
		{
			name:  "deadline-expired",
			about: "a seq whose deadline ran out while its try's body ran: the body was stopped, the finally runs in full, the sibling par's deadline still pending",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "ship-3", ast.Par(
					ast.Seq(
						ast.Try(ast.Act("pack", 1).WithRetry(ast.Retry{Attempts: 3, Initial: time.Second}), ast.Finally(ast.Act("unlock", nil))),
						ast.Act("ship", nil),
					).WithDeadline(10*time.Second),
					ast.Seq(ast.Act("label", nil), ast.Act("print", nil)).WithDeadline(time.Hour),
				),
					map[string]string{"par[0].seq[0].body#1": "fail:jammed", "par[1].seq[0]#1": "ok"},
					map[string]string{"par[0]@deadline": "fire"},
				)
			},
		},
		{
			name:  "cancelled",
			about: "a job cancelled while a leaf waited for its retry and a try's body ran: the finally still runs, the job ends cancelled once it settles",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "order-11", ast.Par(
					ast.Act("charge", 500).WithRetry(ast.Retry{Attempts: 5, Initial: time.Minute}).AtMostOnce(),
					ast.Try(ast.Act("reserve", 2).WithTimeout(time.Second), ast.Finally(ast.Act("release", 2))),
				).WithDeadline(time.Hour),
					map[string]string{"par[0]#1": "fail-kind:lost:the worker was lost"},
					map[string]string{"@cancel": "cancel:the customer changed their mind"},
				)
			},
		},
		{
			name:  "cancelled-done",
			about: "a job cancelled with nothing left to settle: it ended cancelled at once",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "order-12", ast.Seq(ast.Act("charge", 1), ast.Act("ship", 2)).WithDeadline(time.Minute),
					map[string]string{"seq[0]#1": "ok"},
					map[string]string{"@cancel": "cancel:out of stock"},
				)
			},
		},
		{
			name:  "retry-gave-up",
			about: "a leaf that failed with a kind its policy does not retry: the job failed, the failure's kind kept",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "pay-8", ast.Act("charge", 500).WithRetry(retry),
					map[string]string{"root#1": "fail-kind:card_declined:card declined"},
				)
			},
		},
	}
}

// goldenGraphCases are the histories kept at format 3: workflows with
// names, inputs and dags.
func goldenGraphCases() []goldenCase {
	a := func(name string, payload any) ast.Node { return ast.Act(name, payload) }
	return []goldenCase{
		{
			name:  "dag-running",
			about: "a dag with a fan-in taking two outputs, one branch done, the merge waiting",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "etl-1", ast.Dag(
					a("extract", "users").Named("users"),
					a("extract", "orders").Named("orders"),
					a("join", nil).Named("joined").WithAfter("users", "orders").WithInputs("users", "orders"),
					a("report", nil).Named("report").WithAfter("joined").WithInputs("joined"),
				), map[string]string{"dag[0]#1": `ok:{"rows":3}`})
			},
		},
		{
			name:  "dag-failed",
			about: "a dag frozen by a failed child: its dependents never start, a running sibling settles, the dag fails",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "etl-2", ast.Dag(
					a("fetch", 1).Named("a"),
					a("fetch", 2).Named("b"),
					a("merge", nil).Named("c").WithAfter("a", "b"),
				),
					map[string]string{"dag[0]#1": "fail:timeout talking to the source"},
					map[string]string{"dag[1]#1": `ok:"b"`},
				)
			},
		},
		{
			name:  "seq-inputs",
			about: "a seq passing a named leaf's output and a named par (null) to a later step, inside a try with a finally",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "order-9", ast.Try(
					ast.Seq(
						ast.Par(a("charge", 500).Named("charge"), a("reserve", 1)).Named("prep"),
						a("ship", nil).WithInputs("charge", "prep"),
					),
					ast.Finally(a("receipt", nil)),
				), map[string]string{"body.seq[0].par[0]#1": `ok:{"receipt":"r-1"}`, "body.seq[0].par[1]#1": "ok"})
			},
		},
	}
}

// goldenPlay starts w and applies the batches in turn; each batch maps an
// action ID to its outcome: "ok", "ok:OUTPUT", "fail:MESSAGE" or
// "fail-kind:KIND:MESSAGE"; a timer ID to "fire" (at its due time); or
// any key to "cancel:REASON" (job.CancelResult), or "cancel-at:REASON" for one
// stamped with the batch's time.
func goldenPlay(opts []job.Option, id job.ID, w ast.Node, batches ...map[string]string) (job.Job, error) {
	trJ, err := job.New(id, w, opts...)
	j, acts := trJ.Job, trJ.Actions
	if err != nil {
		return job.Job{}, err
	}
	out := map[string]job.Action{}
	for _, a := range acts {
		out[a.ID] = a
	}
	timers := map[string]job.Timer{}
	for _, t := range trJ.Timers {
		timers[t.ID] = t
	}
	for i, b := range batches {
		// Results are stamped a second apart from the job's clock, when it
		// has one, so that retries wait from known times.
		var at time.Time
		if c := j.Clock(); !c.IsZero() {
			at = c.Add(time.Second)
		}
		ids := make([]string, 0, len(b))
		for id := range b {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		var rs []job.Result
		for _, id := range ids {
			if v, ok := strings.CutPrefix(b[id], "cancel:"); ok {
				rs = append(rs, job.CancelResult(j.ID(), v))
				continue
			}
			if v, ok := strings.CutPrefix(b[id], "cancel-at:"); ok {
				r := job.CancelResult(j.ID(), v)
				r.At = at
				rs = append(rs, r)
				continue
			}
			if v, ok := strings.CutPrefix(b[id], "signal:"); ok {
				rs = append(rs, job.Result{JobID: j.ID(), ActionID: id, Output: []byte(v), At: at})
				continue
			}
			if v, ok := strings.CutPrefix(b[id], "cancelnode:"); ok {
				r := job.CancelNodeResult(j.ID(), strings.TrimPrefix(id, "@cancel/"), v)
				r.At = at
				rs = append(rs, r)
				continue
			}
			if b[id] == "fire" {
				t, ok := timers[id]
				if !ok {
					return job.Job{}, fmt.Errorf("batch %d: timer %s is not pending", i, id)
				}
				delete(timers, id)
				rs = append(rs, t.Fire(t.Due))
				continue
			}
			a, ok := out[id]
			if !ok {
				return job.Job{}, fmt.Errorf("batch %d: %s is not outstanding", i, id)
			}
			delete(out, id)
			n := len(rs)
			switch v := b[id]; {
			case strings.HasPrefix(v, "fail-kind:"):
				kind, msg, _ := strings.Cut(v[len("fail-kind:"):], ":")
				r := a.Fail(msg)
				r.Kind = kind
				rs = append(rs, r)
			case v == "ok":
				rs = append(rs, a.Succeed(nil))
			case strings.HasPrefix(v, "ok:"):
				rs = append(rs, a.Succeed([]byte(v[3:])))
			case strings.HasPrefix(v, "fail:"):
				rs = append(rs, a.Fail(v[5:]))
			default:
				return job.Job{}, fmt.Errorf("batch %d: bad outcome %q", i, v)
			}
			rs[n].At = at
		}
		trJ, err := job.Restart(j, rs)
		j, acts = trJ.Job, trJ.Actions
		if err != nil {
			return job.Job{}, err
		}
		if len(trJ.Ignored) > 0 {
			return job.Job{}, fmt.Errorf("batch %d: ignored %v", i, trJ.Ignored)
		}
		for _, a := range acts {
			out[a.ID] = a
		}
		for _, t := range trJ.Timers {
			timers[t.ID] = t
		}
	}
	return j, nil
}

// goldenCases are the jobs kept in testdata/golden, at the current format.
func goldenCases() []goldenCase {
	a := func(name string, payload any) ast.Node { return ast.Act(name, payload) }
	return []goldenCase{
		{
			name:  "running",
			about: "a par with a seq, a try and an action, two steps in, three actions outstanding",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "order-7", ast.Par(
					ast.Seq(a("check.stock", map[string]string{"sku": "A1"}), a("reserve", map[string]any{"sku": "A1", "n": 2})),
					ast.Try(a("charge", map[string]int{"cents": 500}), ast.Rescue(a("refund", nil)), ast.Finally(a("release", nil))),
					a("email.send", "confirm"),
				), map[string]string{"par[0].seq[0]#1": `ok:{"in_stock":true}`})
			},
		},
		{
			name:  "failed",
			about: "a seq whose par failed: a finished failed job, with an output that is not JSON",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "batch-42", ast.Seq(
					a("fetch", "s3://bucket/key"),
					ast.Par(a("resize", 640), a("resize", 1280), a("thumb", nil)),
					a("publish", nil),
				),
					map[string]string{"seq[0]#1": "ok:raw bytes, not JSON"},
					map[string]string{"seq[1].par[0]#1": "ok:640", "seq[1].par[1]#1": "fail:out of memory (killed)"},
					map[string]string{"seq[1].par[2]#1": "fail:thumbnailer: ünsupported"},
				)
			},
		},
		{
			name:  "succeeded",
			about: "a try whose body succeeded and whose finally ran: a finished job",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "deploy-1", ast.Try(
					ast.Seq(a("build", map[string]string{"ref": "v1.2.3"}), a("push", nil)),
					ast.Rescue(a("rollback", nil)),
					ast.Finally(a("notify", "#ops")),
				),
					map[string]string{"body.seq[0]#1": `ok:{"image": "app:1.2.3", "size": 1234}`},
					map[string]string{"body.seq[1]#1": "ok"},
					map[string]string{"finally#1": `ok:"sent"`},
				)
			},
		},
		{
			name:  "in-finally",
			about: "a try whose body failed and whose rescue succeeded, now inside its finally, beside a running action",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "sync-3", ast.Par(
					ast.Try(ast.Seq(a("lock", nil), a("copy", nil)), ast.Rescue(a("repair", nil)),
						ast.Finally(a("unlock", nil), a("audit", nil))),
					a("heartbeat", nil),
				),
					map[string]string{"par[0].body.seq[0]#1": "ok"},
					map[string]string{"par[0].body.seq[1]#1": "fail:disk full"},
					map[string]string{"par[0].rescue#1": "ok"},
					map[string]string{"par[0].finally.seq[0]#1": "ok"},
				)
			},
		},
		{
			name:  "frozen-par",
			about: "a par frozen by a failed child: one sibling cancelled, others still in flight, one inside a try whose finally must still run",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "fan-9", ast.Par(
					ast.Seq(a("a", nil), a("b", nil)),
					ast.Try(a("c", nil), ast.Finally(a("cleanup", nil))),
					a("e", nil),
					ast.Seq(a("g", nil), a("h", nil)),
				), map[string]string{"par[2]#1": "fail:e broke", "par[3].seq[0]#1": "ok"})
			},
		},
		{
			name:  "cancelled-rescue",
			about: "a try whose body failed under a frozen par: its rescue was cancelled and its finally runs",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "pay-5", ast.Par(
					a("fraud.check", nil),
					ast.Try(ast.Seq(a("charge", 100), a("capture", nil)), ast.Rescue(a("refund", nil)), ast.Finally(a("receipt", nil))),
				),
					map[string]string{"par[0]#1": "fail:flagged"},
					map[string]string{"par[1].body.seq[0]#1": "fail:declined"},
				)
			},
		},
		{
			name:  "root-act",
			about: "a workflow of a single action, outstanding",
			build: func(opts ...job.Option) (job.Job, error) {
				return goldenPlay(opts, "single", a("ping", nil))
			},
		},
	}
}

func goldenBase(format int, name string) string {
	return filepath.Join(goldenDir, fmt.Sprintf("f%d-%s", format, name))
}

// goldenWriteMissing writes the files of c at format that do not exist yet.
func goldenWriteMissing(t *testing.T, c goldenCase, format int) {
	t.Helper()
	j, err := c.build(goldenFormats[format].opts...)
	if err != nil {
		t.Fatalf("%s: build: %v", c.name, err)
	}
	enc, err := job.Encode(j)
	if err != nil {
		t.Fatalf("%s: Encode: %v", c.name, err)
	}
	if err := os.MkdirAll(goldenDir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := goldenBase(format, c.name)
	for path, data := range map[string][]byte{
		base + ".json":         append(enc, '\n'),
		base + ".describe.txt": []byte(job.Describe(j)),
	} {
		if _, err := os.Stat(path); err == nil {
			continue // never overwrite: existing files are the promise
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
	}
}

// TestGolden decodes every golden job, compares its description with the
// stored one, re-encodes it byte for byte and runs it to its end with
// every action succeeding.
func TestGolden(t *testing.T) {
	if *goldenUpdate {
		for format, f := range goldenFormats {
			for _, c := range f.cases() {
				goldenWriteMissing(t, c, format)
			}
		}
	}
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, f := range goldenFormats {
		want += len(f.cases())
	}
	if len(files) < want {
		t.Fatalf("%d golden jobs in %s, want at least %d (run with -update-golden to write missing ones)", len(files), goldenDir, want)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			enc := bytes.TrimSuffix(data, []byte("\n"))
			j, err := job.Decode(enc)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if err := job.Check(j); err != nil {
				t.Fatalf("Check: %v", err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(file, ".json") + ".describe.txt")
			if err != nil {
				t.Fatal(err)
			}
			if got := job.Describe(j); got != string(want) {
				t.Errorf("Describe differs from %s.describe.txt:\n--- want\n%s--- got\n%s", name, want, got)
			}
			again, err := job.Encode(j)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if !bytes.Equal(again, enc) {
				t.Errorf("re-encoding differs:\nfile %s\n now %s", enc, again)
			}
			goldenFinish(t, j)
		})
	}
}

// TestGoldenTimeEnds decodes the format-4 goldens of an expired node and
// of cancelled jobs, recovers them (Outstanding and Timers) and runs them
// to their end: the expired seq fails the job by its deadline once its
// finally settled, the cancelled jobs end cancelled with their first
// reason, and the withdrawn timers' firings change nothing.
func TestGoldenTimeEnds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		out      string // the outstanding actions, recovered
		timers   string // the pending timers, recovered
		status   job.Status
		failure  string // Failure().String() and Kind, if failed
		kind     string
		cancel   string
		withdraw []string // timers pending before, withdrawn: their firings are ignored
	}{
		{"f4-deadline-expired", "par[0].seq[0].finally#1 par[1].seq[1]#1", "par[1]@deadline", job.StatusFailed,
			"par[0]: deadline of 10s exceeded", job.KindDeadline, "", []string{"par[0].seq[0].body@retry#2", "par[0]@deadline"}},
		{"f4-cancelled", "par[1].finally#1", "", job.StatusCancelled, "", "", "the customer changed their mind",
			[]string{"par[0]@retry#2", "root@deadline"}},
		{"f4-cancelled-done", "", "", job.StatusCancelled, "", "", "out of stock", []string{"root@deadline"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(goldenDir, tc.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			j, err := job.Decode(bytes.TrimSuffix(data, []byte("\n")))
			if err != nil {
				t.Fatal(err)
			}
			var timers []string
			for _, tm := range j.Timers() {
				timers = append(timers, tm.ID)
			}
			if got := ids(j.Outstanding()); got != tc.out || strings.Join(timers, " ") != tc.timers {
				t.Fatalf("recovered actions %q and timers %q, want %q and %q", got, timers, tc.out, tc.timers)
			}
			for _, id := range tc.withdraw {
				tr, err := job.Restart(j, []job.Result{{JobID: j.ID(), ActionID: id, At: j.Clock().Add(time.Hour)}})
				if err != nil || tr.Changed() || len(tr.Ignored) != 1 || tr.Ignored[0].Reason != job.IgnoredTimer && tr.Ignored[0].Reason != job.IgnoredJobDone {
					t.Fatalf("the firing of the withdrawn %s: %v, changed %v, %v", id, err, tr.Changed(), tr.Ignored)
				}
			}
			again, err := job.Cancel(j, "a second reason")
			if err != nil || (tc.cancel != "") == again.Changed() {
				t.Fatalf("a cancel after: %v, changed %v", err, again.Changed())
			}
			if tc.cancel == "" {
				// The expired job, cancelled now, ends cancelled.
				if end := goldenFinish(t, again.Job); end.Status() != job.StatusCancelled {
					t.Errorf("cancelled, it ends %s", end.Status())
				}
			}
			end := goldenFinish(t, j)
			f, _ := end.Failure()
			reason, _ := end.Cancelled()
			if end.Status() != tc.status || f.String() != tc.failure && tc.failure != "" || f.Kind != tc.kind || reason != tc.cancel {
				t.Errorf("ends %s, failure %q (%s), cancelled %q; want %s, %q (%s), %q", end.Status(), f, f.Kind, reason, tc.status, tc.failure, tc.kind, tc.cancel)
			}
		})
	}
}

// goldenFinish recovers j as a runner would (Outstanding), then answers
// every outstanding action with success, firing the pending timers when
// nothing is outstanding, until the job ends; it returns the job ended.
func goldenFinish(t *testing.T, j job.Job) job.Job {
	t.Helper()
	out := j.Outstanding()
	if len(out) != j.Running() {
		t.Fatalf("recovery lists %d actions, job has %d running", len(out), j.Running())
	}
	for step := 0; !j.Done(); step++ {
		timers := j.Timers()
		if step > 100 || len(out) == 0 && len(timers) == 0 {
			t.Fatalf("no end in sight at step %d:\n%s", step, job.Describe(j))
		}
		var rs []job.Result
		for _, a := range out {
			rs = append(rs, a.Succeed(nil))
		}
		if len(rs) == 0 {
			for _, tm := range timers {
				rs = append(rs, tm.Fire(tm.Due))
			}
		}
		trNext, err := job.Restart(j, rs)
		next, more := trNext.Job, trNext.Actions
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if err := job.Check(next); err != nil {
			t.Fatalf("step %d: Check: %v", step, err)
		}
		if len(trNext.Ignored) > 0 || next.Version() != j.Version()+1 {
			t.Fatalf("step %d: ignored %v, version %d -> %d", step, trNext.Ignored, j.Version(), next.Version())
		}
		j, out = next, more
	}
	if j.Running() != 0 || len(j.Outstanding()) != 0 {
		t.Fatalf("finished with %d running", j.Running())
	}
	if _, err := job.Decode(propEnc(t, j)); err != nil {
		t.Fatalf("the finished job does not decode: %v", err)
	}
	return j
}

// TestGoldenWriterUnchanged checks that the current code still writes, for
// the same history, exactly the golden bytes of every format it writes. A
// difference means the encoding changed: raise job.Format and add new
// golden files instead of rewriting these.
func TestGoldenWriterUnchanged(t *testing.T) {
	if len(goldenFormats) != job.Format {
		t.Fatalf("goldenFormats covers %d formats, job.Format is %d: give the new format its options", len(goldenFormats), job.Format)
	}
	for format, f := range goldenFormats {
		opts := f.opts
		for _, c := range f.cases() {
			goldenWriterCase(t, c, format, opts)
		}
	}
}

func goldenWriterCase(t *testing.T, c goldenCase, format int, opts []job.Option) {
	t.Helper()
	data, err := os.ReadFile(goldenBase(format, c.name) + ".json")
	if errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: no golden file at format %d (run go test ./job -run TestGolden -update-golden)", c.name, format)
		return
	} else if err != nil {
		t.Fatal(err)
	}
	j, err := c.build(opts...)
	if err != nil {
		t.Fatalf("%s: build: %v", c.name, err)
	}
	enc, err := job.Encode(j)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(enc, '\n'), data) {
		t.Errorf("%s at format %d: the same history now encodes differently:\nfile %s now %s", c.name, format, data, enc)
	}
	if !bytes.HasPrefix(enc, []byte(fmt.Sprintf(`{"format":%d,`, format))) {
		t.Errorf("%s: built for format %d, encoded as %.20s", c.name, format, enc)
	}
}

// TestGoldenDescribeLines: Describe is a header line and then one line per
// node, whatever the messages hold, so that golden files, logs and the CLI
// can rely on its shape.
func TestGoldenDescribeLines(t *testing.T) {
	j, err := goldenPlay(nil, "lines", ast.Par(ast.Act("a", nil), ast.Act("b", nil)),
		map[string]string{"par[0]#1": "fail:first line\nsecond line\r\nthird", "par[1]#1": "ok:\"multi\\nline\""})
	if err != nil {
		t.Fatal(err)
	}
	nodes := 0
	j.Walk(func(job.NodeInfo) bool { nodes++; return true })
	d := job.Describe(j)
	lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	if len(lines) != 1+nodes {
		t.Errorf("Describe has %d lines for %d nodes, want %d:\n%s", len(lines), nodes, 1+nodes, d)
	}
	if !strings.HasPrefix(lines[0], "job lines v2: failed at par[0] (a): ") {
		t.Errorf("header %q", lines[0])
	}
}
