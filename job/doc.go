// Package job is baton's pure reducer: it turns a workflow tree and the
// results of finished actions into the next job state and the next actions
// to run.
//
//	tr, err := job.New("order-7", workflow)    // version 1, first actions
//	tr, err = job.Restart(tr.Job, results)     // apply a batch of results
//
// Both return a Transition, the one value a runner acts on (raft's Ready):
// the new Job, the Step that made it, the Actions to dispatch, the Timers
// to arm, the actions in flight to Stop and the results Ignored.
//
// Runners move actions and results; this package decides everything else.
// It is to baton what etcd's raft core is to etcd: it never sends, sleeps,
// reads a clock, draws random numbers or starts a goroutine, and it imports
// only package ast and standard-library value packages (a test,
// internal/archtest, enforces this). Time enters as data: the times
// stamped on results (Result.At) and timer firings, which are results.
//
// # Contracts
//
//   - Pure and deterministic. The same job and results give a byte-identical
//     encoded job and the same actions in the same order.
//   - Restart never modifies its input job. Jobs are immutable values that
//     share unchanged state (a persistent trie), so a Restart costs
//     O(results × depth + new actions), not O(tree): one result in a job of
//     100,000 actions costs about what it costs in a job of 10.
//     Changed(old, new) lists the nodes whose state differs between two
//     versions, comparing only the parts of their tries they do not
//     share, so following a job step by step costs per step, not per tree.
//   - Store before dispatch. The transition's Job must be stored durably
//     BEFORE its Actions are dispatched.
//   - A Job carries no report of the Restart that made it: the Step and the
//     ignored results come beside it, in the Transition, so a job loaded
//     from a store is the same value as the one that was saved.
//   - Recovery is Job.Outstanding and Job.Timers: the actions dispatched
//     and not settled, and the timers pending, which a runner dispatches
//     and arms again after a crash. An empty batch is not recovery:
//     Restart(j, nil) changes nothing and returns no action.
//   - Idempotent. A result for an unknown, never dispatched, stale,
//     duplicated or already settled action changes nothing and is reported
//     in Transition.Ignored, so at-least-once transports are safe. A
//     Restart in which nothing applied returns the same job, the zero Step
//     and no action.
//   - A failed workflow is state, not an error. Errors are for broken
//     contracts only: bad input to New, a zero Job, a result routed to the
//     wrong job (ErrWrongJob), a corrupt encoding (ErrCorrupt).
//   - Incarnations. WithIncarnation gives a job a number that tells it
//     apart from others made under the same ID; runners draw it at random.
//     Every Action carries it, and Action.IdempotencyKey (job, incarnation,
//     path: the same for every attempt of a leaf) is what handlers key
//     their side effects with.
//   - Action IDs are derived from the leaf's path and attempt
//     ("par[1].seq[0]#1"); see package ast for paths.
//
// # Semantics
//
// A node is idle, running, or settled as succeeded, failed or cancelled.
// (The kinds are ast's; a node with replicas runs as a race, below.)
//
//   - Act: dispatched as an Action when started; settles with its result.
//   - Seq: starts its first child; when a child succeeds it starts the next,
//     and succeeds after the last. It fails at the first failing child and
//     starts nothing after it.
//   - Par: starts all children at once; succeeds when all succeeded. Once a
//     child has failed, the par is frozen: no new action is started anywhere
//     under it, except inside the finally blocks of tries already entered.
//     Work already in flight under it goes on; when everything under it has
//     settled, the par fails, reporting its first failure and counting the
//     others (Failure.Others). First means first in time; failures applied
//     in the same batch count as simultaneous, and the one earliest in tree
//     order is reported, except that a leaf that gave up its retries because
//     of the freeze (see Retry), a deadline or a cancel fails after the
//     failures of its batch.
//   - Dag: its children are named; each starts once every sibling it is
//     after has succeeded (those after nothing start at once). Failure is
//     as in a par: the dag freezes, nothing new starts under it (finally
//     blocks of tries already entered excepted), and it fails once the
//     children it started have settled; the children that never started
//     stay idle.
//   - Race: starts all children at once, as a par. The first child to
//     succeed wins (rules below); the others still running are stopped.
//   - Cancelled: a node that a frozen par stops from starting (the next
//     child of a seq, a rescue) is cancelled. A seq with a cancelled child is
//     cancelled; so is a par with a cancelled child and no failed one. A
//     cancelled node never runs anything. The root is cancelled only when
//     the job is (Cancel): a par that freezes its subtree itself fails.
//   - Try: runs its body. If the body fails and there is a rescue, the
//     rescue runs (unless a frozen par stops it). The finally, if any, runs
//     after the body and rescue, whatever happened, exactly once, even under
//     a frozen par. The try succeeds if the body succeeded or the rescue
//     did; it fails if the body failed and no rescue ran, or the rescue
//     failed, or the finally failed. The failure it reports is the one
//     that was not handled: the rescue's if the rescue failed (it replaces
//     the body's, which it was handling), else the body's if no rescue ran;
//     the finally's failure is reported only when nothing failed before it,
//     and is not counted in Others otherwise. A try whose body was
//     cancelled is cancelled unless its finally fails.
//   - The job succeeds, fails or is cancelled when its root settles; then
//     nothing is outstanding and no timer pending, and later results are
//     ignored with IgnoredJobDone.
//
// # Races and replicas
//
// The rules come from the placement issue (18, section B); where they
// leave a question open, the answer is the team's decision recorded with
// it, and says so ("decided").
//
//   - Winner. A race is decided at the first moment a child succeeds; a
//     moment is what one batch settles: its results and what follows
//     from them, then its timer firings, then a cancel. Among the
//     children that succeeded at that moment, the earliest in tree order
//     wins (a batch is a set). An inner race is decided before a race
//     around it, and what its decision settles counts in the same moment
//     for the race around it. A success from a result beats one that
//     only follows from a firing in the same batch, as for deadlines
//     (decided).
//   - Losers. Every child still running when the race is won is stopped
//     the way an expired deadline stops its subtree: its actions in
//     flight outside finally blocks are in Transition.Stops and leave the
//     outstanding set, its leaves waiting for a retry give up (a pending
//     retry timer is withdrawn, a failure in the deciding batch asks for
//     none, a retry firing in it starts nothing), its deadlines are
//     withdrawn, nothing new starts in it; finally blocks already started
//     run in full (their retries go on), and the finally of a try already
//     entered still starts. Children already settled stay as they are.
//     A loser's late result is ignored (IgnoredStopped, its Detail naming
//     the race and its winner). A race under a frozen par, an expired
//     deadline or a cancel still stops its losers when a child wins
//     (decided).
//   - Settling. A won race settles once its losers have, as succeeded,
//     whatever their finally blocks do (decided: else its status would
//     depend on arrival order). While it waits, its own deadline or a
//     cancel can still end it.
//   - Failure. A child's failure changes nothing for the others: a race
//     never freezes. It fails when every child has settled and none
//     succeeded, reporting the failure of the earliest failed child in
//     tree order and counting the others (Failure.Others), whatever the
//     order they came in. A child stopped by a freeze, deadline or cancel
//     around the race counts as failed (decided); a race whose children
//     were all stopped so, none failing, is cancelled, as a par is.
//   - Output. A named race's output (for Inputs, Output) is its winner's
//     when the winner is a leaf (for a retried leaf, its successful
//     attempt's), else null, also when the winner is a race (decided).
//     NodeInfo.Winner records which child won; Describe shows it.
//   - Inputs. A race is as a par for what is sure before it; nothing
//     inside a race is sure because it succeeded (ast.Validate).
//   - Replicas. A node with Replicas k runs as a race of k copies
//     (ast.Expand): the node's name, after and deadline are the race's;
//     each copy has the rest. Copy i's path is the node's path then
//     "race[i]"; names given inside the node are made unique per copy as
//     "name#i" (Output takes them so), and an input naming one from inside
//     the same copy takes that copy's. Each action under a copy carries
//     Action.Replica (the race's path, the copy, the number of copies):
//     placement's spread group, which the reducer gives no meaning.
//   - Commutation. A race's final status is the same for every order and
//     batching of the same outcomes when no deadline or cancel is
//     involved: it succeeds if and only if some child would on its own.
//     Which child wins, its output, how far the losers got and which of
//     their actions were stopped may depend on arrival order, as which
//     actions still ran after a failure already may.
//
// # Choices, guards, ends, needs and limits (workflow version 3)
//
//   - Skipped. A case a choice did not select, a dag child whose guard
//     was false, and everything under them, are StatusSkipped: settled,
//     never run. For the node around it a skipped child is done as a
//     succeeded one is (a skipped dag child satisfies the after of its
//     siblings); its output is null; nothing skipped is ever sure to
//     have succeeded for inputs (ast.Validate).
//   - Equality. A case's value, or a guard's, matches an output when both
//     decode to the same JSON value: numbers as numbers, exactly (1, 1.0
//     and 1e0 are equal), object keys in any order (ast.EqualJSON). An
//     output that is not JSON matches nothing and is not an array; an
//     empty output is null.
//   - Reading. A choice reads its On leaf, a guard its Output leaf, when
//     the node starts (the guard: when its child is ready); both name a
//     leaf sure to have succeeded then (ast.Validate), and a retried leaf
//     gives its successful attempt's output.
//   - Choice. Exclusive: the first case in order that matches runs, the
//     other cases and the else are skipped; no match: the else runs;
//     without an else the choice fails, kind no_case (KindNoCase), never
//     retried. Multi: the output must be an array (else kind not_an_array,
//     null included); every case matching any element runs, together, as
//     a par (a failure freezes the others); no match: as exclusive. A
//     choice's output is null. Nothing inside a case is sure outside it.
//   - Settling as it starts. A node that settles the moment it begins (a
//     choice that selects nothing, a dag whose children are all skipped,
//     an end) settles once the dispatch round that began it is over:
//     what that round began stays begun, then the tree settles and starts
//     again until nothing changes. When such a settling stops what that
//     same round began (an end stops everything; a dag that succeeds so
//     may win a race), the actions concerned are withdrawn from the
//     transition rather than both dispatched and stopped: they were never
//     dispatched (their attempt is not counted). It asks for no timer.
//   - Guards. A dag child with a guard, once ready (everything it is after
//     succeeded or was skipped), runs if the guard holds and is skipped
//     otherwise; under a frozen dag it is cancelled instead, as any start.
//     Skips settle before anything of their round begins, as
//     cancellations do.
//   - End. Once its round is over, an end node stops the job as a cancel
//     does (actions in flight outside finally blocks are stopped, nothing
//     new starts, finally blocks already entered run in full) and the job
//     then ends succeeded; Job.Ended gives its reason. A cancel after it
//     is ignored (the job is ending already); an end reached while the job
//     is cancelled stops nothing more.
//   - Need. A race with Need N is won at the moment its N-th child
//     succeeds; the winner (whose output a named race keeps) is the first
//     in tree order of the children that succeeded; the others still
//     running are stopped as losers. Short of N, it fails once every child
//     has settled, its message listing each child.
//   - Limit. A par with Limit K begins its first K children; each time one
//     settles, the next in tree order starts in the same transition (two
//     settling in one batch start the next two). A freeze, an expiry, a
//     cancel or a lost race cancels those not yet started, one slot at a
//     time, in the same transition. (A dag takes no limit yet.)
//
// # Maps and loops (workflow version 3)
//
//   - Copies. A map has one copy of its template per element of its
//     array, map[0] to map[n-1] in its path, in index order, which is
//     their tree order; a copy's action and timer IDs carry its index
//     (seq[1].map[3].seq[0]#1). A deadline on the map is outside its
//     copies; one inside the template exists once per copy.
//   - Starting a map. It reads its over when it starts (a leaf sure to
//     have succeeded then; a retried leaf gives its successful attempt's
//     output). Not a JSON array (null, no output, not JSON): it fails as
//     it starts, kind not_an_array (KindNotAnArray); more than
//     ast.MaxCopies elements: kind map_too_large (KindMapTooLarge); empty:
//     it succeeds as it starts. These settle as a choice that selects
//     nothing does, once the round that began the map is over, with no
//     timer.
//   - Limit. Copies start in index order, at most Limit running; a copy
//     that settles frees its slot and the next starts in the same
//     transition, two settling in one batch starting the next two.
//   - Failures. A copy's failure freezes the map as a par: copies not
//     started never start (cancelled), running ones go on (their waits
//     and sleeps are withdrawn), and the map fails once they settle. A
//     map blocked from outside (a frozen par or dag, a deadline, a
//     cancel, a lost race) starts no more copies and ends as a stopped
//     seq does.
//   - Need. A map with Need N succeeds the moment N copies have (all of
//     them when it has fewer elements), unless a copy failed first: the
//     copies still running are stopped as a won race's losers (their late
//     results are ignored as stopped), those not started are cancelled.
//   - Names. Inside a copy, an input, on or over naming a node of the
//     template names that node of the same copy; else of the nearest
//     enclosing copy; else the node outside every map. The reserved
//     inputs item and index give a leaf the element (compact JSON) and
//     the index of its innermost copy. Nothing inside a map is sure to
//     have succeeded outside it.
//   - Map output. When the template is a leaf or a wait, the array of the
//     copies' outputs in index order (null for a copy stopped, without an
//     output, or whose output is not JSON, which no array can hold);
//     otherwise null. A named map keeps it for inputs and Job.Output.
//   - Iterations. A loop's iteration i runs its body at loop[i] in its
//     path (loop[2].seq[0]#1): iteration 0 starts with the loop, and
//     iteration i+1 in the transition that saw iteration i succeed with
//     an until that does not match (the until leaf is read then, in the
//     iteration just finished). A result or a firing naming an earlier
//     iteration is ignored as stale (IgnoredStale, naming the loop and
//     the iteration it runs; once the job ended, IgnoredJobDone, as any
//     later result). A failed iteration fails the loop, as a
//     seq's child fails the seq; after Max iterations without a match it
//     fails with kind loop_limit (KindLoopLimit). Names are per
//     iteration; a deadline inside the body exists once per iteration.
//   - Stopped loops. Under a freeze, a deadline, a cancel or a lost race
//     the next iteration does not start: it is cancelled before it
//     begins, and the loop ends cancelled, or failed by its deadline.
//   - Loop output. The last iteration's, when the body is a leaf or a
//     wait; otherwise null.
//   - Cost. A map's start makes a new tree with its copies and moves the
//     node states to tries of the new size: O(nodes of the tree), the
//     price of compiling a par of that size, for the first map a Restart
//     starts; the others it starts (the inner maps of a map's copies,
//     started with them) are added to that tree in place, O(copies), and
//     so are all of them when Decode replays the growth log. A map started
//     in a later Restart pays O(tree) again: an inner map under a map with
//     a limit, whose copies start as others finish, or a map inside a
//     loop, once per iteration; N such starts cost O(N × tree) in all
//     (BenchmarkMapFlatness; TestNestedMapStartsGrowLinearly). A loop's next
//     iteration makes a new tree that differs in its table of iterations
//     (O(loops)) and resets the body's states (O(body)); only when a map
//     inside the body has copies does it copy the node array (O(tree))
//     to leave them behind. A leaf under a loop has its action ID made
//     at dispatch, since its path holds the iteration. A tree without
//     maps and loops pays nothing: its node IDs stay in pre-order and no
//     growth log is kept. See maploop.go for how the tree changes and
//     how Decode rebuilds it (the growth log of format 10).
//
// # Waits, signals and sleeps (workflow version 3)
//
//   - Wait. A wait is a leaf no worker runs (no Action, not in Running,
//     Progress or Outstanding). When it starts it takes the oldest signal
//     of its name the job keeps, unless it is transient; a transient wait
//     takes only signals that arrive while it runs. It then succeeds with
//     the signal's payload as its output (null for none), which inputs,
//     a choice's on, a guard and a race it wins read as a leaf's. A
//     deadline on it is its timeout.
//   - Sleep. A sleep asks for the timer "PATH@sleep", due at the job's
//     clock when it starts plus its duration (the deadline rule); its
//     firing succeeds it, output null.
//   - Withdrawn. A running wait or sleep that a freeze, an expiry, a
//     cancel, a cancelled node or a lost race stops is withdrawn as a
//     leaf waiting for a retry gives up: its timer is withdrawn, it is in
//     no Stops (it is not an action) and it fails at once, kind
//     KindWithdrawn.
//   - Signals. A Signal has a name (a valid node name), an ID and a JSON
//     payload of at most MaxSignalPayload bytes (Signal.Check). Its name
//     and ID make it idempotent for the job's whole life: a repeat is
//     ignored (IgnoredDuplicate), also after it was taken, kept or
//     dropped. A batch's signals apply after its results and before its
//     firings, in order of time (Signal.At), then ID, then name; each
//     moves the job's clock as a result does. A running wait of its name
//     takes it (of several, the one that started first; started in the
//     same round, in tree order); otherwise the job keeps it, at most
//     MaxKeptSignals; beyond that it is dropped (IgnoredQueueFull), yet
//     its ID is seen from then on, so the step holds it while Ignored
//     lists it too (the one result that is both). A signal in the batch
//     of the result that starts its wait is kept, then taken when the
//     wait starts. A signal to a job that has settled is ignored
//     (IgnoredJobSettled); a cancelled job still running finally blocks
//     has not, and a wait in one takes a signal. A malformed signal is
//     ignored (IgnoredUnknown). Job.Signals lists the kept signals and
//     which wait took which; Describe shows both.
//   - Cancelling a node. CancelNode(j, name, reason) stops the running
//     node called name as an expired deadline stops it; it fails with
//     kind KindCancelled and the reason as message, which a try around
//     it may rescue. It applies with the batch's firings, in tree order;
//     one for a node not running is ignored.
//
// What a runner calls. Signals and node cancels are results, so every
// runner carries them as it carries results (a store's step journals
// them, Replay replays them):
//
//	res := job.SignalResult(id, job.Signal{Name: n, ID: sid, Payload: p, At: now}) // "@signal/NAME/ID"
//	res := job.CancelNodeResult(id, name, reason)                               // "@cancel/NAME"
//	tr, err := job.Restart(j, []job.Result{res, ...})
//
// (Deliver and CancelNode do the same for a job in hand.) A runner checks
// a signal with Signal.Check before accepting it, to refuse a bad one to
// its sender; a result's AsSignal reads a signal back. A sleep's timer is
// a Timer like the others, armed and fired the same way.
//
// # Data
//
// A named leaf's output (its successful result's JSON; none for an empty
// output) is kept under its name: Job.Output, OutputAs. A leaf's inputs
// name nodes sure to have succeeded before it starts (ast.Validate checks
// this); its Action carries their outputs in Action.Inputs (nil for an
// inner node). An action in a try's rescue carries the failure it
// handles, one in a finally the failure of the body or rescue if one
// failed (Action.Failure).
//
// # Time: retries, timeouts, deadlines, cancellation
//
// The job keeps a clock: the latest time stamped on a result applied
// (Job.Clock), and the start time given to New (StartedAt).
//
//   - Retry. A failed attempt of a leaf with a retry policy, attempts left,
//     a failure not Final and a Kind not listed as non-retryable (nor
//     deadline or cancelled) does not fail the leaf: the leaf waits (no
//     action outstanding) and the transition asks for a timer,
//     "PATH@retry#N", due at the failed result's time plus
//     Initial × Multiplier^(N-2), capped at Max, then moved by up to
//     ±Jitter of itself, drawn from a hash of the job, path and attempt
//     (the same wherever the job is replayed). Its firing starts attempt N.
//     A frozen par or dag above a waiting leaf makes it give up: it fails
//     with its last failure and its timer is withdrawn.
//   - Timeout. A leaf's timeout travels in its Action; the runner bounds
//     the handler with it and reports an overrun as a failure of kind
//     KindTimeout, which a retry policy retries like any failure.
//   - At most once. An at-most-once leaf's Action says so; a runner that
//     cannot tell whether an attempt ran reports it failed with kind
//     KindLost instead of running it again, and the retry policy decides.
//   - Deadline. When a node with a deadline starts, the transition asks
//     for a timer "PATH@deadline" due at the job's clock plus the
//     deadline; it is withdrawn when the node settles first. If it fires
//     first the node expires: nothing new starts under it, the actions in
//     flight under it are listed in Transition.Stops and cancelled (their
//     results are ignored with IgnoredStopped), leaves waiting for a
//     retry give up, and inner deadlines are withdrawn; finally blocks of
//     tries already entered run in full. The node fails, with kind
//     KindDeadline, once everything under it has settled. A result and
//     the firing in one batch: the result applies first, then the firing,
//     then what the result would start starts, unless the firing stopped
//     it (see Batches).
//   - Cancel. Cancel(j, reason), or a runner applying CancelResult, makes
//     the root expire the same way; the job ends cancelled, with the
//     reason (Job.Cancelled), once the finally blocks it had entered
//     settle. A second cancel is ignored.
//
// # Batches
//
// A batch of results is a set. Restart sorts it into a canonical order (by
// node in tree order, then attempt, error, output, kind, finality, time
// and the ID as written, the root's timers being read with or without
// "root" ("root@deadline", "@deadline"), so that of two results for one
// attempt the same one applies whatever their order in the batch), and
// applies it in four phases:
//
//  1. its results are recorded, and the nodes they settle tell their
//     parents (a seq whose last child succeeded succeeds, a par hit by a
//     failure freezes now); nothing starts;
//  2. its timer firings and its cancel apply, in tree order, on the tree
//     as the results left it: a node a result settled has no timer left,
//     a node still running expires;
//  3. the tree settles: what a freeze or an expiry stops from starting is
//     cancelled, leaves waiting for a retry under a frozen or expired
//     node give up, and what that settles settles in turn;
//  4. only then do new nodes start (and retry timers are armed).
//
// So for par(seq(a, b), c) neither the batch {a: ok, c: failed} nor {a: ok,
// c's deadline fires} starts b, and for seq(a, b) with a deadline the
// batch {a: ok, the deadline fires} never dispatches b: a node a batch
// would start and the same batch stops is cancelled before it starts, so
// no transition both dispatches and stops an action (Restart checks this
// of its own output). A try that the batch would enter is not entered, so
// its finally does not run either. The deadline of a node a batch starts
// counts from the job's clock at the end of the batch (so does a retry
// wait whose failed result carries no time). What commutes, exactly:
//
//  1. permuting the results inside a batch changes nothing;
//  2. splitting or merging batches of successful results changes nothing in
//     the final state of any node;
//  3. the job's final status is the same for every order and batching of
//     the same outcomes.
//
// Once something has failed, which other actions still start may depend on
// how results were batched, as in any real system, but the rules above hold
// for every batching.
//
// # Persistence in O(delta)
//
// Every Transition carries the Step that produced its job (its applied
// results and new version). Stores append steps, encoded by EncodeStep (a
// compact record of about 30 bytes per result, checksummed; every store
// writes the same bytes, and a golden record in testdata/ keeps them), and
// write a full Encode snapshot only now and then (the rule is
// store.SnapshotDue); Replay(snapshot, steps) rebuilds the job byte for
// byte. Encodings carry a format version (Format; Encode writes the oldest
// format that holds the job); Decode
// reads every older format, refuses newer ones with ErrFutureFormat, and
// checks every invariant of the state so that a corrupt job is an error
// (ErrCorrupt), never a panic in a later Restart. Encoded mid-flight jobs
// of each format are kept under testdata/ and decoded by a test, so a
// change cannot strand jobs that are already running.
//
// Describe renders a job as stable text for tests, logs and the CLI.
package job
