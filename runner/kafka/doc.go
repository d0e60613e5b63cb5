// Package kafka runs baton on Kafka, as the seed designed it: a restarter
// topic keyed by job ID receives new jobs and results, one topic per action
// name receives the actions to run, and the jobs' state lives in a
// compacted topic. It is imported as kafkarunner next to kafka-go's own
// package:
//
//	import kafkarunner "github.com/batonwf/baton/runner/kafka"
//
//	st, err := kafkarunner.Open(ctx, kafkarunner.Config{Brokers: []string{"127.0.0.1:9092"}})
//	r, err := kafkarunner.New(kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
//	go r.Run(ctx)
//	err = r.Submit(ctx, "order-1", workflow)
//	j, err := r.Wait(ctx, "order-1")
//
// A Runner is a restarter (it owns partitions of the restarter topic and
// makes the transitions of their jobs), a worker (it runs the handlers of
// its Registry), or both (Options.Role). Any number of each, in any number
// of processes, may share a prefix. A runner that only submits, cancels,
// delivers and waits (RoleClient) needs no Run; Close releases a runner's
// connections whether or not it ran.
//
// The loop is runner.Engine's, unchanged: the restarter feeds results to
// Engine.Apply, and its runner.Transport saves the transition, then
// dispatches; taking partitions over is Engine.Recover of their jobs.
//
// # Topics
//
// Every topic is named under a prefix (Config.Prefix, default "baton"):
//
//	PREFIX.restarter     new jobs, results, cancels and deletes; key: the job ID;
//	                     Config.Partitions partitions; cleanup.policy=delete
//	PREFIX.state         the jobs' state; as many partitions as the restarter
//	                     topic; cleanup.policy=compact
//	PREFIX.action.NAME   the actions named NAME; key: JOB/ACTION-ID;
//	                     Config.ActionPartitions partitions; cleanup.policy=delete
//	PREFIX.stops         notices that tell workers to stop actions; 1 partition;
//	                     cleanup.policy=delete, retention.ms=3600000
//	PREFIX.workers       the control topic: each worker's admin state and load,
//	                     keyed by worker name; 1 partition; cleanup.policy=compact,
//	                     segment.ms=600000, min.cleanable.dirty.ratio=0.1
//	                     (see Placement)
//
// and two consumer groups: PREFIX.restarters (the restarter topic) and
// PREFIX.workers (the action topics; each worker subscribes to the topics
// of the names its Registry has handlers for). Open creates the topics
// that are missing, with these configurations, and checks those that
// exist: a state topic that is not compacted, or whose partition count
// differs from the restarter topic's, is an error. An action topic is
// created when its first action is dispatched or its first worker starts;
// the control topic when a runner that is not a client starts, or at the
// first Store.Drain, Undrain or Control (with Config.NoCreate, Control
// reads a missing control topic as empty).
// Topics are always created explicitly, never by the broker's automatic
// creation. With Config.NoCreate (read-only tools, users who may not
// create topics), nothing is created: Open fails with a
// *MissingTopicsError naming the missing topics and the prefix, and so
// does the dispatch of an action whose topic does not exist.
//
// A job's records all go to the same partition number p in the restarter
// and the state topic: p is the murmur2 hash of the job ID modulo the
// partition count, as Kafka's Java producer partitions a key, so a stock
// producer writing a result keyed by the job ID reaches the right
// partition. A state record's key starts with the job ID and a '/' (which
// a job ID never holds), and only that part is hashed. An action's
// partition is the hash of its whole key.
//
// # Message formats
//
// Every value is JSON with a format number "v" (1), readable with stock
// tools (kafka-console-consumer --property print.key=true), except the
// state topic's step records and snapshots, which are baton's store
// encodings. Bytes that are not valid JSON (an output, an input) are
// written base64 under a key ending in "_b64". Times are RFC 3339 with
// nanoseconds.
//
// Restarter topic, key JOB:
//
//	{"v":1,"type":"submit","incarnation":"00ab…(16 hex)","started":TIME,"workflow":WORKFLOW}
//	{"v":1,"type":"result","incarnation":HEX,"action":"seq[0]#1","output":JSON,
//	 "error":"…","kind":"…","final":true,"at":TIME,"worker":"NAME"}
//	{"v":1,"type":"cancel","reason":"…","at":TIME,"node":"NAME"}
//	{"v":1,"type":"signal","name":"NAME","id":"…","payload":JSON,"at":TIME}
//	{"v":1,"type":"delete","incarnation":HEX}
//
// WORKFLOW is ast.Encode's document. "incarnation" on a result is the
// incarnation of the job the action belonged to: a result for a job since
// deleted and submitted again under its ID is ignored. A timer's firing
// is a result with the timer's ID as "action" (it never travels through
// the topic: see Timers). A result's "worker" is the name of the worker
// that ran the action (job.Result.Worker; absent for a result of a baton
// before results named their worker, which a restarter of this one reads
// as naming none; a restarter of such a baton refuses a result that has
// one as an unknown field, so upgrade restarters before workers). A
// cancel's "at" (optional) moves the job's
// clock; with "node" it cancels that node only (job.CancelNode). A
// signal (job.Signal: its name, ID and payload, absent for null) is
// checked where it is read (job.Signal.Check: a bad one is refused as any
// bad message is) and applied by the restarter with the results of its
// batch; its ID makes it idempotent, so a signal sent twice, or read
// twice after a restarter's crash, is applied once. Both are new: a
// restarter of a baton before them refuses them as unknown, so upgrade
// restarters before sending them. A delete names the incarnation to delete; without one, it
// deletes whatever is stored under the ID (a damaged job).
//
// Action topics, key JOB/ACTION-ID (an action's partition: see
// Placement; headers baton-affinity, baton-affinity-mode and
// baton-replica say how it was placed):
//
//	{"v":1,"type":"action","job":JOB,"incarnation":HEX,"id":"seq[0]#1","name":"email.send",
//	 "attempt":1,"payload":JSON,"inputs":[{"name":"…","output":JSON}],
//	 "timeout_ns":N,"at_most_once":true,"priority":P,"failure":{…}}
//	{"v":1,"type":"claimed","job":JOB,"incarnation":HEX,"id":"seq[0]#1","offset":N,"worker":NAME}
//
// The second is a worker's claim on an at-most-once action (see At most
// once). Stops topic, key JOB:
//
//	{"v":1,"type":"stop","incarnation":HEX,"actions":["par[0]#1",…]}
//
// State topic: every record carries the header baton-token (16 hex
// digits: the claim it was written under, see Ownership). Keys:
//
//	JOB                           the job's head, written once the actions of a
//	                              transition are dispatched: JSON {"v":1,
//	                              "incarnation":HEX,"version":V,"status":"running",
//	                              "settled":S,"total":T,"dispatched":true}; a null
//	                              value (tombstone) deletes the job
//	JOB/s/VVVVVVVVVVVVVVVVVVVV/TOKEN  the step that made version V (20 digits):
//	                              job.EncodeStep's record
//	JOB/n/VVVVVVVVVVVVVVVVVVVV/TOKEN/K  chunk K of the snapshot at version V
//	                              (job.Encode), with the header baton-chunks (the
//	                              count); version 1 is the origin
//	/claim/P/TOKEN                a restarter's claim on partition P (headers
//	                              baton-partition: P, baton-epoch: ERA.GEN.SEQ);
//	                              value JSON {"v":1,"partition":P,"owner":NAME,
//	                              "epoch":"ERA.GEN.SEQ","at":TIME}, NAME being the
//	                              runner's Options.Name; a null value deletes a
//	                              superseded claim (see Ownership)
//
// A job's steps and its origin are kept (they are its history); a snapshot
// is written when store.SnapshotDue says so, and the one it supersedes is
// deleted by tombstones, except the origin. Compaction keeps the newest
// head of each job and drops what tombstones delete; the token in the keys
// of steps and chunks keeps a record that a fenced writer wrote under the
// same version from replacing the valid one.
//
// # Ownership
//
// The restarters share the restarter topic's partitions through their
// consumer group: the one assigned partition p owns the jobs of p, and
// only it changes them, so the transitions of one job never race. When it
// is assigned p, the restarter
//
//  1. rebuilds p: it reads state partition p from its start, and keeps
//     every job of p in memory (the cache Load answers from);
//  2. claims p: it writes a claim record with a fresh random token and an
//     epoch above every claim it read, then reads on to past its claim;
//  3. recovers the unfinished jobs of p (Engine.Recover): it dispatches
//     again the actions that may not have been dispatched, and arms the
//     jobs' timers;
//  4. reads restarter partition p from the group's committed offset, and
//     applies its backlog (the messages up to the partition's end as it
//     was taken over: a cancel sent while no restarter ran, results of
//     other processes' workers) in offset order before anything handed
//     in within the process (a result of its own worker, a Submit or
//     Cancel of its own, a timer's firing), which came after it.
//
// A restarter that lost p without knowing it (paused past its session
// timeout: a zombie) may still write. Every state record carries the token
// of its writer's claim, and a record counts only if its token is that of
// the claim that counts at that point of the partition: the one of the
// highest epoch read so far. A claim's epoch is the generation of the
// restarter group that assigned the partition (the coordinator only ever
// raises it), then a count of the owner's claims in that generation; so
// the new owner's claim fences every later record of the old one, and a
// late copy of an old claim (a writer retries a write whose caller gave
// up, and it may land after a newer claim) takes nothing back. (When the
// group was deleted and its generations start again from 1, a restarter
// assigned a partition starts a new era, which outranks the old ones.) Since the new owner reads the
// partition up to its own claim, it has seen every record that counts
// from before it; and it never writes over a version it has not seen.
// Offset commits are fenced by the group itself (a commit of an old
// generation is refused).
//
// Every claim supersedes the ones before it, but a superseded claim stays
// needed while records depend on it: those written under it, and those of
// the claim before it that it fences (a zombie's). Once its claim counts,
// a new owner deletes with tombstones the claims that decide nothing
// (their ranges hold neither) and the claims that never counted, so the
// live claims of a partition are bounded by its eras that wrote records
// still in it, not by the restarters' starts. A restarter whose state write fails does not
// trust its cache: it claims the partition again and rebuilds it.
//
// # Balancing the groups
//
// Both groups assign partitions with baton's own assignor (protocol
// "baton-sticky"), kafka-go's GroupBalancer over placement.Balance: a
// sticky, capacity-weighted assignment. In every join a member sends, as
// its user data, one version byte (1) and a JSON object:
//
//	{"name":NAME,"capacity":C,"since":TIME,"draining":true,
//	 "generation":G,"owned":{"PREFIX.action.ship":[0,3]}}
//
// NAME is the runner's Options.Name, C its Options.Capacity (default its
// Workers), "since" when it started, "draining" its Options.Draining
// (absent when false), and "owned" the partitions of each topic that
// generation G of the group assigned it (absent before its first).
// kafka-go tells an assignor nothing of what its member owns (its
// protocol metadata has no owned partitions, and it has no cooperative
// protocol): the runner records each generation's assignment before it
// serves it, and its next join's user data carries it. The member the
// coordinator elects leader assigns each topic among the members
// subscribed to it:
//
//   - each member that is not draining gets the floor or the ceiling of
//     its capacity-weighted share of the topic's partitions; a draining
//     member gets none (when every member drains, nobody gets any);
//   - members keep the partitions they own up to their share, so a
//     member that joins takes its share and at most one partition more
//     moves for each member that rounds up, and a member that leaves
//     gives up only its own;
//   - a partition is owned by the member that claims it in the newest
//     generation; one claimed by two members in the same generation (a
//     claim built on stale data) is trusted to neither and assigned as
//     if unowned.
//
// A member whose user data does not parse (another version, another
// client's) is logged and counted (Stats.BadMembers, by the leader): it
// owns nothing and weighs 1. Members also offer kafka-go's range
// assignor, with the same user data, as their second choice, so a group
// that holds members without baton-sticky (a baton before it, during a
// rolling upgrade) agrees on range instead of refusing them.
// Store.Workers reads the same user data from the workers' group's
// description.
//
// Rebalances stay eager: every member of a group pauses its partitions
// while the group rebalances (about a second), but partitions come back
// to their owners, so a restarter's rebuilt partitions and a key's
// worker survive a join or a leave. What partitions cannot express (a
// wait before a spill, pins, spread and pack) does not apply on Kafka
// (see Placement).
//
// # Placement
//
// On Kafka, where an action runs is which worker reads its partition, so
// placement is mostly partition assignment (Balancing the groups). What
// a worker adds:
//
// Capacity and limits. A worker runs at most Options.Capacity handlers
// at once (default Workers; `baton worker --capacity`), and at most
// Options.Limits[NAME] of action NAME (`--limit NAME=N`). Each partition
// takes its next message, then waits for a slot (the name's, then one of
// the capacity) before it fetches another: a full worker stops fetching
// (its reader's read-ahead aside), and at most one message per partition
// waits for a slot. Handlers end in any order; each partition's offset
// is committed only up to its lowest unfinished message (see
// Transitions), so a crash runs again the unfinished message and those
// after it, never skips one.
//
// Affinity and replicas. An action with an affinity key
// (job.Action.Placement) goes to the partition of its key (the murmur2
// hash of the key, carried in the header baton-affinity; the message key
// stays JOB/ACTION-ID), so a key's actions reach one worker while the
// group's membership is stable, and its next owner after. The copies of
// a node with replicas (job.Action.Replica) go to consecutive partitions
// from the hash of their group (the job and the race's path; header
// baton-replica, "COPY/OF/GROUP"), so to distinct partitions while they
// are no more than the topic's partitions, and to distinct workers only
// when the topic has as many workers: Store.Queues counts the copies
// waiting (Queue.Copies), and `baton status` warns when they outnumber
// the workers. Not mapped: strictness, a wait before a spill, and the
// spill itself (a partition has one reader; an action whose affinity is
// strict or sets a wait carries baton-affinity-mode, counted by
// Queue.Unmapped, and `baton status` says so); pins; the spread and pack
// strategies; and fairness between jobs whose actions share a partition
// (they run in the partition's order).
//
// The control topic, PREFIX.workers (compacted, one partition), holds
// what is said of each worker by name, JSON with a format number "v":
//
//	NAME       {"v":1,"type":"admin","state":"draining","at":TIME}
//	           (Store.Drain and Store.Undrain write "draining" and "available")
//	NAME/load  {"v":1,"type":"load","capacity":4,"running":2,"names":{"ship":
//	           {"running":1,"succeeded":10,"failed":2,"quarantined_until":TIME}},"at":TIME}
//	           (the worker, when it changed, at most once a second)
//
// A worker name holds no '/' (New refuses one). Every runner that is not
// a client reads the topic from its start while it runs; a record that
// does not parse is skipped, logged and counted (Stats.BadControl;
// Store.Control returns the count too). Peers' success counts for
// quarantine, and what `baton status` shows of each worker, come from the
// load records: chosen over a member's user data, which changes only
// with a rebalance.
//
// Drain. Store.Drain of a live worker writes "draining"; the runner reads
// it, announces draining in any join from then on (the balancer gives a
// draining member nothing), takes no new action, finishes those it runs
// (a drain never stops one; only Close's DrainTimeout does), commits
// their offsets, and leaves its groups: the coordinator rebalances, and
// the others take its partitions from the committed offsets, so the
// messages it had not finished (those behind an unfinished one included)
// go to the new owners. Its restarter finishes its batch and commits the
// same way. Then it deletes its two records with tombstones and Run
// returns nil (`baton worker` exits 0). It leaves rather than rejoining
// first: under the eager protocol a rejoin ends the generation, after
// which its commits are refused, and what it finished would run again.
// Draining a name the control topic knows but no live member has deletes
// its records (it is removed); a name neither knows is an
// *UnknownWorkerError listing the known ones. Store.Undrain writes
// "available"; a runner that began to drain still leaves.
//
// Wedged workers. kafka-go heartbeats from a goroutine of its own, so a
// worker whose handlers hang keeps its partitions for ever. A worker
// that, for Options.ClaimLease (default DefaultClaimLease, 60s;
// `--claim-lease`), has had an action waiting for a slot while no handler
// started or ended counts as wedged (Stats.Wedged): it leaves the
// workers' group, whose other members take its partitions from the
// committed offsets (so they run again the actions it still runs, whose
// messages it has not committed), and joins again once one of its
// handlers has returned. Its handlers are not cancelled: a hung one is
// its own to end, and a slow one's result counts if it comes first. A
// lease shorter than a worker's longest action makes a full worker with
// work waiting leave too, and its long actions then run twice (at least
// once).
//
// Quarantine. Each worker feeds the outcome of every attempt to
// placement.Quarantine.Observe (Options.Quarantine): failures and
// timeouts count; stops, hand-backs, lost attempts and non-retryable
// failures do not. A peer's success is another worker's success count growing in
// the control topic. Before a sentence, the worker counts the live
// members of the workers' group that take the action's topic and the
// others quarantined for it (their load records): the last one able to
// run it is never quarantined. A worker quarantined for NAME leaves the
// workers' group and joins again without PREFIX.action.NAME, keeping
// the others; when the back-off ends it joins again with it. Each costs
// two rebalances of the group (kafka-go cannot change a member's topics
// in place). Stats.Quarantines counts them; its load record shows them.
// The runner.Hooks' Placement hook is told of each quarantine, each
// wedge, the drain's start and each control record or member's user data
// that did not parse (runner.PlacementQuarantined, PlacementWedged,
// PlacementDraining, PlacementUnreadable).
//
// # Transitions: write order, commit order
//
// kafka-go has no transactions, so nothing here is atomic across records.
// The order of the writes makes a crash at any point lose nothing. A
// restarter takes a batch of messages from its partition, groups them by
// job, and for each job runs Engine.Apply (load from the cache,
// job.Restart, Transport.Commit), or Engine.Create for a submit (job.New
// with the message's incarnation and start), which:
//
//	W1  writes the state: the step (and a snapshot, when due) to state
//	    partition p, acks from all in-sync replicas, and waits for them;
//	    then updates the cache;
//	W2  publishes the stop notices (best effort);
//	W3  produces the new actions to their topics, acks from all, and
//	    waits; arms the new timers;
//	W4  writes the job's head at the new version, "dispatched":true (not
//	    waited for).
//
// Then, once every job of the batch has been through W1-W4,
//
//	C   commits the restarter partition's offset past the batch, and
//	    waits for the answer (the commits that the partitions of one
//	    generation ask for while one is under way go together in the
//	    next request, each partition's newest offset; each waits for the
//	    request that holds its own).
//
// A crash (or a write that fails) at each point:
//
//   - before W1 completes: the offset is not committed, so the batch is
//     read again by whoever owns p next. If the state write landed, its
//     results are ignored as duplicates and Apply dispatches the job's
//     actions that may not have been dispatched; if it did not, they
//     apply then.
//   - after W1, before or during W3: no head says the new version was
//     dispatched. The next owner's recovery dispatches the actions that the job's
//     latest step made (those of earlier steps were dispatched before the
//     latest step was written: a restarter handles one job's transitions
//     one after another and finishes W3 of one before W1 of the next),
//     and the redelivered results are ignored.
//   - after W3, before W4: the same; the actions are produced twice, and a
//     worker may run them twice, which at-least-once delivery allows (the
//     second result is ignored).
//   - after W4, before C: the redelivered results are ignored and nothing
//     is dispatched again.
//   - after C: nothing to do.
//
// Duplicates are harmless because the reducer ignores a result it has
// applied (job.IgnoredDuplicate) and the restarter saves nothing then; a
// step is written once per version, since only the owner writes and its
// cache compares versions before every write (store.ErrConflict).
//
// There is one commit path: the package's tests crash it through an
// unexported fault hook of the Config (faults.go), which only
// export_test.go sets: Transport.Commit asks it before W1 and once W1
// took effect, and every produce, fetch and offset commit asks it first,
// so that a runner that died there writes, reads and acknowledges
// nothing more.
//
// A worker takes an action from its partition, runs it, delivers the
// result, and only then acknowledges the action (commits the offset of
// the longest run of finished actions of that partition):
//
//   - a crash before the result is delivered: the offset is not committed,
//     and the worker that gets the partition next runs the action again;
//   - after the result is delivered, before the commit: the action runs
//     again and its second result is ignored.
//
// A result is delivered when it is in the restarter topic (acks from all)
// or, when the worker runs in the process that owns the job's partition,
// once that process's restarter has applied it (the result skips the
// round trip through the topic; if the partition changes hands meanwhile,
// it goes through the topic). Either way it is durable before the action
// is acknowledged. A delivery that fails is tried again; it counts as done
// when the job as stored no longer waits for the result (the write that
// failed for the restarter had landed). Submit, Cancel and Deliver are
// delivered the same way, and return once applied (or in the topic).
//
// # Timers
//
// The reducer asks for timers with absolute due times (retries, deadlines).
// They are part of the job's state (job.Job.Timers), so nothing about them
// is written anywhere else: the restarter that owns the job arms them in
// memory when it commits the transition that asked for them, and again
// when it recovers the job after taking the partition over (a rebalance, a
// crash). When a timer is due, the firing (job.Timer.Fire) is applied in
// the partition's loop like a result. A timer armed twice, or fired by two
// restarters around a rebalance, is fired twice; the reducer ignores the
// second firing. A timer is never fired early; it fires late by as long as
// the partition had no owner.
//
// # Stops
//
// A transition that stops actions (a deadline ran out, the job was
// cancelled: job.Transition.Stops) publishes a notice to the stops topic
// after its state is written. Every worker reads the stops topic from its
// end when it starts, and cancels the handlers it runs for the actions
// named, with cause runner.ErrStopped; an action whose notice came before
// it was taken is skipped. Stopping is a courtesy: the reducer ignores a
// stopped action's result, so a notice lost or read late loses nothing.
//
// A message cannot be taken out of a Kafka topic, so the actions of a job
// cancelled, deleted or finished while they waited for a worker stay in
// their topic until its retention removes them. They are not waiting work:
// Store.Queues reads what waits after the workers' committed offsets and
// counts them apart (Queue.Withdrawn), and a worker that takes a partition
// over checks, for each action queued before it took it, that the job as
// stored still waits for it, and skips (and commits) it otherwise. Stop
// notices cover the actions dispatched while the worker runs.
//
// # At most once
//
// On Kafka, an action whose worker may have run it cannot be told apart
// from one that never ran. A restarter that dispatches again an
// at-most-once action that may have been dispatched (recovery, or a
// redelivered result) does not produce it: it reports it failed with kind
// job.KindLost (runner.LostResult), as runner.Transport.Dispatch says, and
// the leaf's retry policy decides.
//
// A worker, before it runs an at-most-once action, appends a claimed
// record to the action's partition and waits for it to be acknowledged. A
// worker that takes the partition over and finds an at-most-once action
// among the messages it reads again reads the partition to its end first:
// if the action was claimed, it reports it lost instead of running it. So
// an at-most-once action is never run twice; but one whose worker was still
// running it when the partition moved (a worker rebalance) is reported
// lost too, and its late result is ignored.
//
// # Deleting and retention
//
// Only the owner of a partition writes its jobs, so Runner.Delete sends a
// delete to the restarter topic (or to its own loop, if it owns the
// partition), as Cancel does. The owner applies it in the job's order of
// inputs: it stops the job's actions in flight, if the job had not
// finished, and writes a tombstone for every record of the job, its head
// last; compaction drops them. Results that come later for the job are
// skipped (Stats.UnknownJobs, or Stale once the ID is used again).
//
// Config.Retention (default DefaultRetention, a week; negative: for
// ever) bounds how long a settled job stays: the restarter that owns a
// partition deletes the settled jobs whose clocks (the time of the last
// result or cancel applied) are older, the same way. Each partition keeps
// its settled jobs in a heap by clock, so a sweep costs what it deletes;
// a sweep deletes at most 64 jobs, between two batches of the partition's
// inputs, every quarter of the retention (at most every minute), and
// sooner while more are due.
//
// # Sizes
//
// Config.MaxMessageBytes (default 1,000,000, and never more than the
// topics' max.message.bytes allow) bounds every message, checked before
// it is produced:
//
//   - Submit refuses a workflow too large for one message, saying so;
//   - an action too large for one message (a large payload, large inputs)
//     is not produced: it fails, Final, with a message saying why;
//   - a result too large is replaced by a failure saying so;
//   - the restarter applies at most as many results in one step as fit in
//     one state record; a snapshot larger than a record is split into
//     chunks.
//
// # Bad input
//
// A malformed message on the restarter topic (not JSON, an unknown type, a
// key that is not a job ID) is skipped, logged and counted (Stats), and its
// offset committed: it never stalls its partition. So is a result for a job
// the partition does not hold. A result for an unknown action of a known
// job is ignored by the reducer (job.IgnoredUnknown). A malformed action
// message is skipped and counted by the worker. A state record that does
// not decode makes its job broken (Load reports it, naming the record);
// the other jobs of the partition are unaffected. Actions whose name no
// worker serves stay in their topic; Store.Queues shows them.
//
// # Reading the state
//
// The Store implements store.Store, store.Lister, store.Historian and
// store.Deleter. The owner of a partition answers from its cache and is
// the only one that writes it (Create, Save, Delete on a partition this
// process does not own fail with ErrNotOwner). Any other Load or List
// reads the partition from where it last stopped to its current end, then
// answers: it sees every transition written before it was called. History
// reads the job's partition from its start.
//
// # Connections
//
// Every writer and client has a kafka-go transport of its own, which
// fetches the cluster's metadata every 500ms at most (kafka-go refreshes
// it on nothing else, not even "not leader for partition") and bounds
// each fetch by the same 500ms. A request made before a fetch has
// succeeded (a broker slow to answer, a loaded machine) waits for one,
// within its context and Config.Timeout, instead of failing with "Broker
// Not Available"; one whose connection fails (refused, a failed TLS or
// SASL handshake) fails at once. A transport's metadata can predate a
// topic created since (an action topic made for its first dispatch, a
// topic another process made): a write to a topic that baton created or
// checked waits for a fetch that lists it, up to Config.Timeout, instead
// of failing with "Unknown Topic Or Partition"; a warning is logged only
// if that takes over 2s. A failed Open, and Close of a Store or a Runner,
// leave no connection open.
//
// # Writes
//
// Every write (W1, W3, a result, a claim) waits for the acks of every
// in-sync replica. A writer keeps one request in flight per partition and
// holds nothing back: a message for a partition with no request in flight
// is sent at once, and the messages that come while one is in flight go
// together in the next request, in the order they came. So a transition
// of a lone job costs a round trip per write, and many jobs' writes share
// requests. (kafka-go's Writer holds a batch that is not full for its
// BatchTimeout, which a lone synchronous write waits out.) A request that
// fails with a retriable error (a timeout, "not leader", a connection
// lost) is sent again, up to 10 times in all, 20ms to 500ms apart, before
// the requests behind it, whether or not its caller still waits; so a
// write whose caller gave up may land later, and a write that failed may
// have landed (at least once). A record is stamped with the time of its
// write.
//
// # Security
//
// Config.TLS and Config.SASL are handed to kafka-go's Dialer (consumer
// groups and readers) and Transport (writers and admin requests).
//
// # Limits
//
//   - A job's history stays in the state topic until the job is deleted
//     (by hand, or by retention once it settled); a restarter that takes a
//     partition over reads all of it (reading is fast; replay starts at
//     each job's newest snapshot), and keeps every job of its partitions
//     in memory.
//   - One consumer group serves every action topic: a worker joining or
//     leaving pauses every action for the rebalance (about a second);
//     the balancer moves few partitions, but the pause is the eager
//     protocol's. A member's user data changes with every generation
//     (what it owns), so a member that rejoins a stable group on its own
//     (its connection to the coordinator broke) makes the whole group
//     rebalance, where unchanged user data would have been handed its
//     assignment back.
//   - A worker commits an action's offset only when every earlier action of
//     its partition has ended: a long action holds back the commits (not
//     the work) of the ones after it, and a crash runs those again.
//   - A restarter that was paused past its session timeout and wakes up
//     may still produce actions and results (never state that counts)
//     until it notices; they are duplicates the reducer ignores.
//   - A crash between a transition's state write and the acknowledgement
//     of the action whose result it applied runs that action again (its
//     second result is ignored): the two are separate writes.
//   - A worker paused past its session timeout while it held an
//     at-most-once action it had not yet claimed may claim and run it
//     after the partition's new owner read past it: at most once holds
//     for workers that notice they lost their partitions.
//   - Only the owner of a job's partition deletes it (Store.Delete);
//     Runner.Delete asks the owner.
//   - an unexported option of the tests skips recovery on takeover: the jobs of a
//     partition taken over then dispatch what they lack only when their
//     results are delivered again.
package kafka
