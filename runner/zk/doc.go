// Package zk runs baton on ZooKeeper: a Store that keeps jobs as znodes,
// and a Runner whose workers, in any number of processes, claim actions
// from a queue of znodes, run them, and apply their results. It is
// imported as zkrunner next to go-zookeeper's own package:
//
//	import zkrunner "github.com/batonwf/baton/runner/zk"
//
//	st, err := zkrunner.Open(ctx, zkrunner.Config{Servers: []string{"127.0.0.1:2181"}})
//	r, err := zkrunner.New(zkrunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
//	go r.Run(ctx)
//	err = r.Submit(ctx, "order-1", workflow)
//	j, err := r.Wait(ctx, "order-1")
//
// # Layout
//
// Everything lives under one root (Config.Root, default /baton), in
// nodes an operator reads with zkCli.sh:
//
//	/baton/jobs/ID                     the job's record: JSON (version, status,
//	                                   progress, its newest snapshot); its znode
//	                                   version is what a transition checks
//	/baton/jobs/ID/i-INC               one incarnation of the job (16 hex digits)
//	/baton/jobs/ID/i-INC/snap-V-TAG-K  chunk K (512 KiB at most) of the snapshot
//	                                   at version V (job.Encode); the origin
//	                                   (V=1) and the newest are kept
//	/baton/jobs/ID/i-INC/step-V        the step record that made version V
//	                                   (job.EncodeStep): the journal
//	/baton/jobs/ID/i-INC/ignored/r-SEQ a result a transition ignored
//	                                   (store.EncodeIgnored): the newest
//	                                   store.MaxIgnored are kept
//	/baton/queue/a-RANK-TIME-ROUTE-NLEN-NAME-LEN-ID-ACTION
//	                                   an action waiting or running: RANK is
//	                                   10000 minus its priority (5 digits),
//	                                   TIME when it was queued (Unix ms, 13
//	                                   digits), ROUTE its route token ("-",
//	                                   k<16 hex>.<wait ms, base 36>, p<16 hex>
//	                                   or g<16 hex>: see Placement), NAME its
//	                                   action name (NLEN bytes), then its job
//	                                   and action ID (LEN is the job ID's
//	                                   length); data: JSON {job, id, action,
//	                                   claimed, worker, act}. Entries an older
//	                                   baton named a-RANK-TIME-LEN-ID-ACTION
//	                                   are read as routed anywhere, their
//	                                   action name from their data
//	/baton/claims/ENTRY                ephemeral: the worker that runs ENTRY;
//	                                   its version counts the claim's renewals
//	/baton/timers/t-DUE-LEN-ID-TIMER   a timer due at DUE (Unix ms, 13 digits)
//	/baton/workers/NAME                a registered worker (see Placement): JSON
//	                                   {state, capacity, limits, grace_ms,
//	                                   actions, baton, drain_timeout_ms}
//	/baton/workers/NAME/live           ephemeral: the process that runs it, JSON
//	                                   {host, pid, started, load}
//	/baton/workers/NAME/pins/ID        the index of the pins it holds (ID: the
//	                                   key's hash, 16 hex digits)
//	/baton/alloc/XX/ID                 a pin's allocation: JSON {key, worker,
//	                                   job, since}; XX is ID's first 2 digits
//	/baton/placement                   the cluster's placement settings: JSON
//	                                   {strategy, wait_ms, quarantine}
//	/baton/quarantine/ACTION           a count of ACTION's quarantines; its
//	                                   version is what a quarantine checks
//	/baton/quarantine/ACTION/NAME      ephemeral: worker NAME's quarantine for
//	                                   ACTION, JSON {until_ms_left, strikes}
//	/baton/signals/s-LEN-ID-HASH       a signal sent to job ID and not yet
//	                                   applied; HASH: 128 bits of the SHA-256
//	                                   of its name and ID, 32 hex digits; data:
//	                                   JSON {name, id, payload, at}
//	/baton/dispatching/ID              a transition too large for one request
//	                                   whose queue entries are still being written
//	/baton/settled/m-MINUTE/MS-LEN-ID  the index of settled jobs: the minute
//	                                   (UTC, YYYYMMDDHHMM) and the time (Unix ms)
//	                                   a job settled; data: its incarnation
//
// Open creates the root's nodes when they are missing, but never the
// root's parent; with Config.MustExist (clients that only read or change
// existing jobs) it writes nothing, and a missing root is an error
// (ErrNoRoot) naming it.
//
// Workers sort the queue's names: higher priorities first, then, within
// a priority, roughly the oldest first (see Workers). Nothing in the
// layout is ever evaluated: a node's data is JSON or baton's own
// encodings, checked when read.
//
// # Transitions
//
// A transition (job.Restart's output) is written with ONE multi-op: set
// the job's record at the znode version it was read at (the
// compare-and-swap: of two writers of one version exactly one wins, and
// the other reloads and finds its results applied), create the step
// node, delete the queue entries and claims of the results it applies,
// create the queue entries of the new actions and the nodes of the new
// timers. A snapshot that is due is written in the same multi-op, or,
// when larger than a request may be, in chunks written first that the
// record then makes current (chunks of a write that lost are deleted).
// A transition with more new actions than one request holds writes a
// dispatching marker with the state and the rest of its entries after;
// a runner that finds a marker older than 30 s dispatches the job again.
//
// # Workers
//
// A transition claims, in its own multi-op, the new actions that the
// worker writing it has a handler and a free slot (and, per name, room
// under its limit) for, that are at least as urgent as anything waiting
// unclaimed, and that placement lets it take (see Placement, Claiming):
// their entries are created claimed (their claims created too), and the
// worker runs them at once, with no request of their own. A seq therefore
// costs one write per action: its transition. If the multi-op's reply
// is lost and its retry fails, the claim existing in the worker's
// session, its entry still at version 0, shows it was written, and the
// worker runs the actions. If the session expired before the worker
// learns the outcome, those claims went with it: the retry fails on the
// record's compare-and-swap, the worker reads the job again and finds its
// results applied (the reducer ignores them as duplicates), and the new
// entries wait in the queue, unclaimed, for any worker (this one in its
// new session, or another) to claim them; a claim this worker makes so
// moves the entry's version, and is not taken for the transition's. The
// worker reads back the step the commit wrote and logs that it was
// applied (or, when the step cannot be read, that its outcome is
// unknown).
// The slots are the work loop's: the transition reserves them before its
// multi-op, and gives them back or starts the actions in them after.
//
// The other entries wait in the queue. A worker lists the queue (with a
// watch) and the claims, decides each unclaimed entry it has a handler
// for with placement.Decide (see Placement, Claiming), and claims those
// it may take now: one multi-op creates its ephemeral claim and sets the
// entry's data (bumping its version, which then names this claim). It
// lists again when the queue or the claims changed, at most every 10 ms
// (or every ten listing costs, for a long queue: a listing's cost is the
// request that got through and its ordering, never the outage its
// retries waited out), and decides its last
// listing again whenever a slot frees, the registry or a pin's
// allocation changes, or a decision's wait ends. Within a priority it
// decides entries round-robin over jobs: the oldest entry of each job in
// turn, jobs in the order of their oldest entry, so that a job with many
// queued actions does not starve one queued after it. An entry of a cached job never claimed before (version 0) is
// claimed without reading it, from the cached action (never for an
// at-most-once action, see below). The first claim of an entry runs the
// action the entry carries; an entry claimed before, or of a job that
// cancelled or ran out of a deadline, is checked against the job first
// (and dropped if the job no longer waits for it). The result is applied
// with the entry deleted at the claimed version and the claim deleted, in
// the transition's multi-op; results of one job that end together in one
// process are applied together, starting from the process's cached copy
// of the job (runner.Cache: a stale copy fails the compare-and-swap, and
// the job is read again).
//
// Every claim, from the queue or in a transition, is logged at DEBUG
// ("action claimed", with the entry: runner.LogClaimed).
//
// A worker that dies loses its session, and with it its claims: another
// worker claims the entry and runs the action again (actions run at
// least once). A worker whose session expired while it ran an action
// (stopped, partitioned) finds, when it applies the result, its claim
// gone or the entry's version moved on: the multi-op fails and the
// result is abandoned; the transition that a new claimant makes is the
// only one. The warning says what became of the action: its entry gone
// (the job no longer waits for it), claimed again (by this worker in its
// new session, or by another), or waiting in the queue. An at-most-once action whose entry was claimed before is not
// run again: it is reported failed with kind lost.
//
// A transition that stops actions (a cancel, a deadline) deletes the
// queue entries of those that no worker has claimed, and Delete deletes
// a job's entries and timers: an entry of an action no live worker has a
// handler for is not left for ever. Both list the queue once.
//
// A running action's handler is cancelled with cause runner.ErrStopped
// when its job no longer waits for it: in this process at once, in
// others when their workers see the job's record count a new stop (one
// watch per job per process, shared by its handlers).
// Actions whose name has no handler in a worker's registry stay in the
// queue for a worker that has one (baton status lists what each worker
// serves); a worker logs once that it leaves them.
//
// # Placement
//
// A worker (a runner with a Registry) is a durable name, Name: Run
// registers it (placement.Transition, EventRegister) in one multi-op that
// creates or moves by compare-and-swap its persistent registration, and
// creates its ephemeral live node and its pins index. A registration
// found keeps its admin state: a process restarted under the name is the
// same worker. A live node of another session means a live process has
// the name: Run returns a NameTakenError naming its host and pid, and
// writes nothing. The live node carries the worker's load (its running
// actions in total and per name, its successes and counted failures per
// name since it started), written only when it changed and at most once a
// second. When Run returns the live node is deleted and the registration
// stays: the worker is down, and every worker counts its grace (Options.Grace,
// DefaultGrace) from when it saw the live node vanish. After a session
// expiry the worker registers again.
//
// Every worker watches the registry (/workers, each registration and live
// node, /placement, /quarantine) and keeps it as a placement.View; it
// reads a node again only when its watch fires, and a slow poll of the
// parents backs the watches up. A node that does not parse is logged once
// and counted (Stats.Unreadable) per version: its worker shows as
// unreadable (placement.StateNone) and is not eligible; garbled settings
// leave the last good ones in force; a garbled quarantine or allocation
// counts as none.
//
// Store.Drain marks a live worker draining (or, with a timeout, records
// it in drain_timeout_ms, which the worker measures on its own clock from
// when it sees the drain). The worker sees it through its registry and
// claims nothing new but its pins' actions; once nothing runs and its pins
// index is empty it deletes its registration with the live node and the
// index in one multi-op at the version it read (an undrain meanwhile
// makes it fail) and Run returns nil (Drained says what it did). At the
// timeout it deletes its pins' allocations that still name it and their
// index entries, so they move. Draining a worker that is down removes its
// registration and releases its pins at once. Without DrainOptions.Force,
// a drain that would leave an action name that live workers run today
// with no available worker is a LastWorkerError; an unknown name is an
// UnknownWorkerError listing the registered ones. Store.Undrain makes the
// worker available and deletes its quarantine nodes, each with its
// action's count lowered in the same multi-op.
//
// # Claiming
//
// A queue entry's name carries its action's name and one route token
// (placement.Route, from the action's job.Placement and job.Replica):
// "-" anywhere; "k<hash>.<wait>" a soft key (a wait of 0 is the
// cluster's, Settings.Wait); "p<hash>" a pin; "g<hash>" a replica group
// (the job and the race's path; a replica copy under a soft key routes by
// its group). So a worker decides from the names it lists: for each
// entry, placement.Decide on its registry's view, in which its own entry
// carries its exact load (its slots: actions claimed or running, in total
// and per name, and the replica copies it runs per group), with the time
// it first saw the entry on its own clock (Options.Clock, as the
// registry's times). Claim: it claims now; Wait: it decides again at the
// time named (it sleeps until the earliest); Pass: not its to take while
// the view holds. It never holds more claims than its capacity
// (WorkerOptions.Workers), nor more of one name than Options.Limits
// allows: its slots refuse a claim past either, whoever asks (the work
// loop, or a transition claiming its own new actions).
//
// A pin's holder is read from its allocation, once per process, with a
// watch that drops it from the process's cache when it changes. A claim
// that allocates a pin to its worker (Decision.Persist) reads the entry's
// data first for every action name under the pin and decides again with
// them, then writes, in the claim's own multi-op, the allocation
// (created, or rewritten at the version read when the pin moves from a
// holder down past its grace, quarantined, draining past its timeout or
// gone), its worker's index entry, and the deletion of the old holder's
// index entry: two workers racing for a pin, one multi-op fails whole and
// that worker reads the allocation again. A transition claims its own new
// actions only when Decide says Claim at once for those with a key, a pin
// (only one its worker holds already) or a group its worker runs a copy
// of already; an action routed anywhere, and one copy of a group its
// worker runs none of, is claimed whenever Decide does not pass, so that
// a job's next action runs where its last one did, and a race's first
// replica copy where the race started (the strategy's order among
// workers with room decides what waits in the queue). A job's final transition
// deletes its job-scoped pins' allocations and their index entries
// (job.Pins) in its own multi-op: a pin costs four operations in
// multi-ops that happen anyway (create and delete of the allocation and
// of its index entry), and no request per action. Stats counts claims,
// spills (a soft key's action claimed off its holder), pins allocated and
// pins moved, and tells each to the runner.Hooks' Placement hook
// (runner.PlacementClaimed and the kinds after it), as it does every
// event it counts below.
//
// Store.Settings and Store.UpdateSettings read and write /placement, by
// compare-and-swap; a missing node, or field, means its default
// (DefaultSettings). Store.Workers lists the registered workers, live or
// down, with their state, load, pins and claims; Store.Pins the stored
// pins.
//
// # Claim leases
//
// A worker whose session stays alive while its loop is wedged (stopped,
// starved, deadlocked) would keep its claims for ever: its session is
// what frees them when it dies. Each claim is therefore leased
// (Options.ClaimLease, DefaultClaimLease). A claim its worker has held
// longer than a third of the lease is renewed every third of the lease
// by a versioned write (the claim's data set at the version the worker
// last wrote, with a check that the entry is still at the version the
// claim gave it), so an action shorter than a third of the lease costs
// no write at all. A worker keeps its leases per claim, not per claim
// name: when it claims an entry again in a new session while the old
// claim's result is still being applied, finishing the old one leaves
// the new claim's lease to be renewed. Each claim is watched by one other live worker: the
// first live worker other than its owner in the rendezvous preference
// list of the claim's name (placement.Rank, all weighing the same), so
// that when the watcher leaves the next one takes over. Every third of
// the lease a worker lists /claims once and reads only the claims it
// may watch (those it is first or second for: about two in N of them).
// A claim whose version the watcher has seen unchanged for a whole lease
// on its own clock is broken by deleting it at that version (a renewal
// meanwhile makes the delete fail, and so does a claim made since under
// the same name: the claim is read again, and the delete checks the
// entry's version, which every claim moves): the action is claimable again, or,
// for an at-most-once action, its failure with kind lost is applied in
// the same multi-op, which deletes the entry too. A lone worker has no
// watcher. The worker that lost a claim finds it gone at its next
// renewal: it cancels the handler's context (cause: the claim was lost),
// logs it, and abandons the result; a result it applies anyway finds the
// claim gone and changes nothing (see Workers). Stats counts renewals
// and broken leases, and the Placement hook is told of each.
//
// # Quarantine
//
// A worker quarantines itself for an action name when it keeps failing
// it while others succeed (placement.Quarantine, with the thresholds of
// the cluster's settings). Every attempt's outcome on the worker goes to
// placement.Quarantine.Observe: successes, failures and time-outs count;
// stops, cancels, deadlines, lost claims and sessions, and failures the
// handler marked final never do. The peers it is given are this
// worker's view of the registry: the live available workers that handle
// the name, how many of the others are quarantined for it, and when this
// worker last saw another's published success count for the name grow
// (on its own clock; a count first seen is where growth is measured
// from). A sentence is written as ONE multi-op: the count of
// /quarantine/ACTION set at the version read together with its children,
// and the ephemeral /quarantine/ACTION/NAME created (JSON: how long it
// lasts, its strikes). Of two workers racing for the last slot one
// multi-op fails whole, and that worker counts again and is refused: at
// most the policy's share of the name's workers (at least one, never the
// last) are quarantined at once. A quarantined worker claims no action of
// the name, from the queue or in a transition, and keeps running the
// others. The quarantine ends on the worker's clock (Options.Clock): it
// deletes its node and wakes the work loop at once. An undrain deletes
// the node, which lifts the quarantine too. Stats counts quarantines,
// and the Placement hook is told of each.
//
// # Timers
//
// Every runner watches the timers node and, when a timer falls due,
// applies its firing, then deletes the node. Two runners may fire one
// timer; the reducer ignores the second firing.
//
// # Signals
//
// Runner.Signal checks the signal and that the job is stored and
// unfinished, then writes the signal's node: from then on it is durable,
// and Signal returns nil. It then applies it at once, in a transition
// whose multi-op deletes the node (at the version read) with the rest,
// so that a node is applied once; a transition that loses that delete
// (another runner applied the node first) changes nothing. A node of one
// name and ID exists once: the same signal sent again before it was
// applied finds it there; sent after, it is ignored by the reducer as a
// duplicate and its node deleted. A sender that dies after writing the
// node, or whose transition keeps losing the job's record, leaves the
// node to the workers: every runner watches /signals and applies a node
// it has seen for a second (signalGrace, on its own clock), the sender's
// time to apply it. A node of a job that is gone, or that the job
// ignores (it settled), is deleted; deleting a job deletes its nodes. A
// node whose data does not parse is logged once and left for an
// operator. Runner.CancelNode applies the node's cancel as Cancel does
// the job's, through runner.Engine.CancelNode.
//
// # Retention
//
// Settled jobs (succeeded, failed, cancelled) are deleted by the workers
// (runners with a Registry) once they settled longer ago than
// Config.Retention: by default DefaultRetention, a week; a negative
// Retention keeps them until someone deletes them. ZooKeeper holds all
// its data in memory: a root that only grows ends by exhausting it. The
// transition that settles a job indexes it, in its own multi-op, under
// /settled by minute; every worker sweeps the index every tenth of the
// retention (at least every 100 ms, at most every minute), deleting at
// most 256 jobs a sweep, with their history, their leftover queue
// entries and timers, then their index nodes. A job is thus deleted
// between Retention and Retention plus a sweep or two after it settled.
// A sweep never lists the jobs: it lists the index's buckets (one per
// minute in which a job settled) and the expired ones. Jobs that settled
// under a baton older than the index stay until deleted by hand.
//
// # Connection loss
//
// go-zookeeper neither takes contexts nor retries. Every request here is
// retried with capped, jittered exponential back-off (Config.Backoff, a
// runner.Backoff: the first wait at most 100 ms, doubling up to 10 s)
// until its context ends; every write is either idempotent or
// guarded by a version, so a retry of a write that had in fact been
// applied fails visibly and is treated as done or as a conflict. Watches
// wake workers; the same back-off paces the polls that back them up, and
// the retries of a listing or a load that failed for a reason of its own.
// Outages are logged once when they start and once when they end.
//
// # Sizes
//
// A result's output and error together are bounded by MaxResultBytes (a
// larger one fails its action, saying so), a step record by MaxStepBytes,
// and a new job's state by Config.MaxJobBytes (default 8 MiB), so that
// every request stays under ZooKeeper's 1 MB jute.maxbuffer.
//
// # Security
//
// With Config.Auth ("user:password"), the connection authenticates with
// that digest and every node baton creates carries an ACL granting all to
// that identity alone: a client without it can neither read nor change
// them. All clients of a root must therefore share its credentials, or
// all go without: Open reads the ACL of baton's nodes under the root and
// refuses at once (AccessError, wrapping ErrAccess, naming the root and
// the users it admits) a root made with credentials when it has none or
// other ones, and a root made without any when it has some (the nodes it
// made would be closed to the others).
//
// # Code
//
// The runner is runner.Engine's loop on a transport of its own
// (transport.go): Commit writes a transition as the one multi-op above,
// and the queue entries and claims that the results it applies consume
// are its argument (the engine's R, handed in by Engine.ApplyWith). The
// work loop (workloop.go) lists the queue, claims entries (claim.go),
// runs their actions and hands the results to the per-job applier
// (apply.go: runner.Applier, batches of at most 256 results and
// MaxResultBytes; a batch that lost its job's record to other workers
// too often goes back to the head of the job's queue), and drains
// through runner.Drain when Run's context ends; Run starts with
// runner.RecoverAll (unless NoResume), Run and Close are
// runner.Lifecycle's. Its slots (slots.go) are what a transition claims in,
// through the small claimer interface the transport calls. Claim
// leases (lease.go), quarantines (quarantine.go), timers
// (timers.go), stop watches (stopwatch.go), retention (retention.go),
// the registry a worker watches (registry.go; the nodes' data in
// nodes.go), registration and the published load (register.go, load.go),
// drain (drain.go), the settings (settings.go), stored pins (keys.go),
// signals (signal.go),
// leftovers of cancelled and deleted jobs (leftovers.go) and the store
// (store.go) have a file each. There is one commit path: the package's
// tests crash it through an unexported fault hook on the connection
// (faults.go), asked before a transition's multi-op, once it applied, and
// before every request, which only export_test.go sets.
//
// # Limits
//
// The queue is one parent node: zkCli.sh (the Java client) cannot list
// more than about 50,000 entries with its default jute.maxbuffer.
// go-zookeeper lists 150,000 in well under a second.
package zk
