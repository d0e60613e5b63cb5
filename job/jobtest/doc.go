// Package jobtest is a harness that plays the runner for scripted tests of
// the reducer in package job, in the style of etcd's raft interaction tests
// (rafttest.InteractionEnv driven by datadriven scripts).
//
// A script (ParseScript) is a list of commands, each followed by the output
// it must print. A test runs each command through an Env, compares the
// output with the expected text, and with -rewrite writes the new output
// back into the file (Script.Bytes), to be reviewed as a diff:
//
//	# Each file opens with a comment saying what rule it checks.
//	new j1
//	par(log a, seq(log b, log c))
//	----
//	dispatch par[0]#1 log "a"
//	dispatch par[1].seq[0]#1 log "b"
//	job j1 v1: running, 2 outstanding, 0/3 actions settled
//
//	ok par[0]#1 par[1].seq[0]#1
//	----
//	par[0]: succeeded
//	par[1].seq[0]: succeeded
//	dispatch par[1].seq[1]#1 log "c"
//	job j1 v2: running, 1 outstanding, 2/3 actions settled
//
// # Commands
//
//	new ID [start=TIME] [failures=on]
//	                        start job ID; the workflow follows on the next
//	                        lines, in the compact syntax of ParseWorkflow or,
//	                        when it starts with '{', the JSON form of ast.Decode
//	                        (the only one with retries, timeouts, deadlines
//	                        and deliveries); start= is its start time
//	                        (job.StartedAt), failures=on prints the failure
//	                        each action of a rescue or finally follows
//	ok ID... [out=OUTPUT]   succeed these actions, in one batch (out=, at= and
//	                        job= apply to the ID before them)
//	fail ID [MESSAGE] [kind=KIND] [final=true]
//	                        fail one action ("action failed" if no message),
//	                        with a kind (Result.Kind) and as final
//	fire TIMER... [at=TIME] deliver the firing of these timers (Timer.Fire);
//	                        at= defaults to the due time of the timer of
//	                        that ID a transition asked for
//	cancel [REASON]         job.Cancel (an empty reason is its error)
//	batch CLAUSE; CLAUSE    several ok, fail, fire and cancel clauses in one
//	                        batch (a cancel clause is job.CancelResult); ok,
//	                        fail and fire lines may also hold several clauses
//	  ... at=TIME           stamp a result or firing with a time (Result.At):
//	                        +DURATION after the start (at=+1m30s), an RFC 3339
//	                        time, or 0 for none (the default for a result)
//	  ... job=JOB           send a result as if for another job (a routing bug)
//	dup ID...               send again, in one batch, the last result sent
//	                        for each ID (a timer ID, @cancel)
//	crash                   store and reload: Encode, Decode, then
//	                        Restart(decoded, nil); prints what it re-emits
//	                        and the timers to arm again ("rearm ID due TIME")
//	describe                print job.Describe
//	history                 print every step, in the syntax of ok and fail
//	replay [from=N]         job.Replay of the whole journal on the job at
//	                        version N (default 1), encoded and decoded; it
//	                        must equal the live job byte for byte
//	encode                  print job.Encode
//	output NAME...          print job.Output of each name: "a = {"n":1}",
//	                        "a = null" (empty), "a: no output"
//	timers                  print the job's clock (Job.Clock) and the timers
//	                        it waits for (Job.Timers)
//	workflow                print the workflow in the compact and JSON forms
//
// Words are separated by spaces; a word may be a Go quoted string ("card
// declined"), an option's value too (out="a b"); quotes inside a word are
// kept (out={"n":1}). A '#' that starts a word begins a comment. Action IDs
// are written in full, attempt included: par[1].seq[0]#1.
//
// # Output
//
// After new, a result command or dup, in this order: the results the
// reducer ignored, written as clauses, with the reason ("ignored ok
// par[0]#1: duplicate"); every node that settled, children before parents
// ("par[2]: failed: boom", "par[1] seq: cancelled", "root par: failed at
// ...", a failure's kind in brackets before its message: "par[0]: failed:
// [timeout] too slow", "root seq: failed at root: [deadline] deadline of
// 5s exceeded"); the actions dispatched ("dispatch ID NAME PAYLOAD", or,
// for an action taking inputs, "dispatch ID NAME <IN=OUTPUT ...> PAYLOAD",
// an empty output and an inner node's written null: "dispatch dag[2]#1
// merge <a={"n":1} b=null>", followed by "timeout=30s" and "at-most-once"
// when the action says so, and, with failures=on, for an action of a
// rescue or a finally, a line "  follows PATH (ACTION): MESSAGE" or
// "  follows nothing"); the actions told to stop (Transition.Stops: "stop
// ID NAME"); the timers asked for (Transition.Timers: "timer ID due
// TIME"); the timers withdrawn, pending before and not now, without
// having fired ("withdrawn ID"); and the job's status line, the first
// line of job.Describe. Times are written as at= reads them: after the
// start (+2s) when the job has one. When New, Restart or Cancel returns
// an error (an invalid workflow, a result for another job, a cancel
// without a reason), the output is "error: ..." and the job stays as it
// was.
//
// # Checks
//
// After every New and Restart the Env checks, and fails Run if one does
// not hold: Env.Check (job.Check, the invariants, in job's tests); every
// action dispatched carries, in the order its leaf lists them, the
// outputs of the named leaves it takes as inputs, which have succeeded
// (job.Output), and null for named inner nodes, which have succeeded too;
// Restart did not modify its input; the job encodes, decodes and encodes
// again to the same bytes and describes the same way; Restart(job, nil)
// returns the same job and re-emits exactly the actions, inputs, timeout,
// delivery and failure included, the Env has outstanding; the actions
// stopped were outstanding before the step (none is both dispatched and
// stopped by one step); an action outside every rescue and finally
// carries no failure; the timers the job waits for are those it waited
// for, less those fired or withdrawn, plus those the transition asked for,
// and a crash keeps them and the clock; a finished job has nothing
// outstanding and waits for no timer, and is cancelled exactly when it
// has a cancel reason; a step that applied nothing left the job and
// version alone and asked for nothing; an applied step gives the same
// job, actions, timers and stops with its batch reversed and with only
// the results it recorded (so a batch is a set, Replay works, and Cancel
// is Restart with its CancelResult).
//
// These are errors and not output so that -rewrite can never bless them.
package jobtest
