// Package placement decides where work runs: which worker may take a
// queued action now, which worker holds a key, when a worker quarantines
// itself, and how a consumer group's partitions are shared. It is the
// pure core of baton's placement, as package job is of its workflows.
//
//	order := placement.Rank(placement.KeyHash("dataset-42"), workers)
//	d := placement.Decide(view, entry, now) // claim now, wait until d.At, or pass; d.Reason says why
//	a := placement.Balance(members, partitions)
//
// # The boundary
//
// Everything here is a function of its arguments. The package never
// reads a clock, sleeps, draws random numbers, starts a goroutine or does
// I/O, and it imports nothing of baton (internal/archtest checks it):
// the runners observe the world (a registry they watch, the queue they
// list, their own load and monotonic clock) and pass it in as values.
// Every time in a View or an Entry is on the deciding process's own clock
// (when it saw a worker go down, when it first saw an entry); no time is
// ever compared across machines. No function modifies its arguments;
// returned slices and maps are new and belong to the caller (Worker
// values copied into them share their maps with the input).
//
// # Why each worker decides for itself
//
// There is no placement leader. Each worker runs Decide on its own view
// of a small registry and claims only what Decide gives it; the claim
// itself (a compare-and-swap on ZooKeeper) settles the rare race between
// two views that disagree. Per action nothing is written beyond that
// claim, and there is no leader to lose or elect. What a global view
// would give (spread and pack over the whole fleet) is approximate: the
// strategy orders workers by their published loads, and a worker that is
// not first waits StepDelay for each worker ahead of it (at most
// MaxDelay), then claims anyway, so stale loads never leave an entry
// waiting beside a free slot for long.
//
// # Keys: weighted rendezvous hashing
//
// A key's preference list (Rank) orders workers by capacity / -ln(u),
// with u the fixed hash of (key, worker name) mapped into (0,1). Any
// process computes the same list from the same registry, with nothing
// to store or agree on; a worker that leaves gives up only the keys it
// headed, spread over the others by weight; a newcomer takes a share
// equal to its share of capacity from everyone; and spill and failover
// go to the same next worker, whose cache therefore warms with exactly
// the keys it would inherit. A hash ring without many virtual nodes
// dumps a leaver's keys on one neighbour, and hash mod N moves nearly
// every key when N changes.
//
// The hash is FNV-1a (64 bits) followed by splitmix64's finaliser (see
// KeyHash, NameHash, PairHash), and the logarithm is computed with
// explicitly rounded basic operations, so scores are bit for bit the same
// on every platform and version; testdata/rank.txt holds golden vectors.
// hash/maphash is seeded per process and would make every process
// disagree.
//
// # Affinity and the route token
//
// A queue entry carries its placement in its name, one route token of at
// most MaxRouteLen bytes (Route.Token, ParseRoute): "-" (anywhere),
// "k<16 hex>.<wait in ms, base 36>" (a soft key's hash and wait),
// "p<16 hex>" (a pin) or "g<16 hex>" (a replica group). So a worker decides
// from names alone, reading an entry's data only to claim it.
//
//   - A soft key is a preference. Its holder is the first eligible worker
//     in its preference list (a down, draining or quarantined worker is
//     skipped at once, never waited for); a busy holder's action spills
//     after the key's wait to the next worker in the list with a free
//     slot. Soft keys are not stored.
//   - A pin keeps its actions on one worker: its holder is stored (by the
//     runner, in the claim's own write, when Decision.Persist says so).
//     The pin moves only when its holder is down longer than its grace, is
//     gone, is quarantined for or no longer handles one of the action
//     names under the pinned node, or its drain timed out (the runner
//     then deletes its pins). A draining holder keeps running its pins.
//   - Copies of one replica group go to distinct workers: a worker that
//     runs a copy takes another only after a wait.
//
// The Allocator places keys (Rendezvous by default); a plug-in must be
// deterministic, since every worker runs it on its own view.
//
// # Workers, drain and quarantine
//
// A Worker is a durable name (a process restarted under it is the same
// worker), an admin state stored in its registration (StateAvailable or
// StateDraining; StateDown and StateQuarantined are derived), capacity,
// per-action limits, the actions it handles, its published load and its
// quarantines. Transition is the table of what register, drain, undrain,
// drained and drain-timeout do to a registration (testdata/transitions.txt
// holds it whole): drain is a state, not a signal; draining a down worker
// removes it and releases its pins; a second live process never gets a
// live worker's name.
//
// Quarantine is self-imposed and relative to peers (Quarantine.Observe):
// a worker that keeps failing an action others succeed at stops taking it
// for a back-off. Stops, cancels, deadlines, lost sessions and
// non-retryable errors never count (Outcome.Counts); an action that fails
// everywhere quarantines no one; at most a share of the action's workers
// is quarantined at once, and never the last.
//
// # How the runners use it
//
// runner/zk: every worker watches the registry
// (/<root>/workers/<name> with its live child) and the settings node, and
// keeps a []Worker of them with its own exact load. A queue entry's name
// gains the route token, and the action name is read from the name. For
// each entry it has listed, the work loop calls Decide with the time it
// first saw the entry and the pin's stored holder (/<root>/alloc/...),
// claims on Claim (writing the pin's allocation in the claim's multi-op
// when Persist), sleeps until the earliest At of its Wait decisions, and
// decides again when the registry, the queue or its load changes. It
// decides with a Ranks (View.Ranks: each key's preference list computed
// once, kept while the workers keep their names and capacities) and
// without reasons (View.NoReasons); Decision.Reason is what `baton
// status` prints for the oldest entries, decided with reasons.
// Each attempt's outcome goes to Quarantine.Observe with the peers it
// sees; a Sentence that starts a quarantine is written as a node together
// with a versioned counter, in one multi-op. `baton drain`, `undrain` and
// a worker's start go through Transition and perform its Effect in the
// same write as the new state.
//
// runner/kafka: placement is partition assignment. A
// kafka-go GroupBalancer, in the runner, decodes each member's UserData
// (name, capacity, draining flag, owned partitions and their generation)
// into Members, calls Balance with the topics' partitions, and returns
// its Assignment as kafka-go's. This package does not import kafka-go.
// Spill after a wait, pins, spread and pack do not map onto partitions.
package placement
