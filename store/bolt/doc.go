// Package bolt is a store.Store in one file, on go.etcd.io/bbolt: crash
// safe (every write is one bbolt transaction, fsynced at commit), the
// default store for single-machine runs. Callers may alias it (boltstore)
// when they also import bbolt.
//
//	s, err := bolt.Open("baton.db", nil)
//	...
//	defer s.Close()
//
// Commands that only read (status, history, inspect) use OpenReadOnly,
// which works while a run has the file open for writing:
//
//	s, err := bolt.OpenReadOnly("baton.db", nil)
//
// # Contracts
//
//   - Store implements store.Store and passes store/storetest.Run and
//     RunDurable. All methods may be called concurrently; Close waits for
//     operations in progress and is safe to call twice.
//   - One writer at a time: a second Open of the file, in this process or
//     another, waits at most Options.Timeout (default one second) and then
//     fails with an error wrapping ErrLocked: "store/bolt: <path> is
//     locked by another process". It never hangs.
//   - Readers alongside (Linux): a Store from OpenReadOnly reads while a
//     writer has the file open and commits; see "Readers and locking".
//     It never writes to the file nor creates anything, and its Create,
//     Save and Delete fail with an error wrapping ErrReadOnly.
//   - Open never writes to a file it cannot use: a file that is not a
//     bbolt database, or a bbolt database without baton's "baton" bucket,
//     is an error naming the file, and the file is left as it was. An
//     empty or missing file becomes a new store (OpenReadOnly: an empty
//     file is a store with no jobs, a missing one an error wrapping
//     fs.ErrNotExist).
//   - A damaged record is an error naming the file, the job and the key
//     (jobs/<id>/steps/<version>, say) and wrapping job.ErrCorrupt; so is a
//     journal that does not replay as recorded. Nothing is rewritten or
//     dropped to get past it. It stops no other job: List shows a job
//     whose meta record is damaged with store.Info.Damaged set, beside
//     the others; Sweep leaves it alone (it is not known to have
//     finished) and sweeps the others; Delete removes it.
//   - A damaged or truncated file never crashes the process: it is an
//     error naming the file (and the job, when one is being read),
//     wrapping ErrDamaged and job.ErrCorrupt; see "Damaged files".
//   - Errors name the file and the job and wrap the store's sentinels
//     (store.ErrConflict, ...) and context errors with %w. A write whose
//     context ends before it commits is rolled back.
//   - With Options.NoSync, commits are not fsynced: a crash of the machine
//     can lose or corrupt data. For tests and benchmarks only.
//
// # Layout
//
// The file holds two top-level buckets:
//
//	baton/format                 layout version ("1")
//	jobs/<id>/meta               102 bytes: incarnation, version, status,
//	                             snapshot version, step bytes since the
//	                             snapshot, CRC-32Cs of origin and snapshot,
//	                             the job's incarnation, progress, steps
//	                             since the snapshot, clock, and the times
//	                             of its Create and last write by
//	                             Options.Now (format 4; older formats are
//	                             read, their times unknown, and rewritten
//	                             by the next Save)
//	jobs/<id>/origin/job         job.Encode of version 1, as Create got it
//	jobs/<id>/snap/job           job.Encode of the newest snapshot (absent
//	                             until the first one)
//	jobs/<id>/steps/<version>    one record per Save: the step's results
//	jobs/<id>/ignored/<seq>      the results its transitions ignored
//	                             (store.IgnoreJournal): the newest
//	                             store.MaxIgnored, one store.EncodeIgnored
//	                             record each, absent until the first
//
// Step keys are the version as 8 big-endian bytes, so they sort in order.
// A step record is compact binary: a format byte, the number of results,
// each result's action ID, output and error as length-prefixed bytes (and,
// in later formats, its kind, time and worker: job.EncodeStep), and a
// CRC-32C; the job ID and the version are implied by where it lives. A
// one-result step of a par is about 30 bytes, whatever the size of the
// tree. The meta record ends with its own CRC-32C, so a torn or overwritten
// record is caught when read.
//
// Origin and snapshot live in buckets of their own because bbolt rewrites a
// whole B+tree leaf when any key in it changes: next to the meta record, a
// large encoding would be rewritten by every Save (measured: 540 KB of
// pages per Save for a par of 10,000 leaves; in its own bucket, 24 KB, the
// same as for a par of 100).
//
// The incarnation is a store-wide sequence number given at Create, so a job
// deleted and created again under the same ID is never mistaken for the
// old one (by the cache, below).
//
// # Writes and snapshots
//
// Create writes the origin and the meta record. Creates and Saves are group
// committed: those waiting while a commit is in progress share the next
// write transaction and its fsync, each checked and refused on its own (a
// conflict fails only that Save), each durable when it returns. There is no
// timer: a lone writer commits at once, as with one transaction per write;
// N concurrent writers pay about one fsync per round instead of N (see
// group.go, and Stats.GroupWrites/GroupCommits). Within the transaction, a
// Save checks the stored version against j.Version()-1 and the stored
// incarnation against j's (optimistic concurrency, checked inside the
// transaction, so concurrent savers of one version cannot both win, and a
// deleted job's successor is never mistaken for it), appends the step
// record, and rewrites the meta record.
// So a Save writes O(results) bytes of records.
//
// Now and then a Save also writes a snapshot (job.Encode of the new
// version), replacing the previous one. The rule: when the step records
// written since the last snapshot (or the origin) weigh at least as much as
// it does. Each snapshot is then paid for by at least as many bytes of
// steps, so the amortised bytes written per step stay O(results): a
// snapshot is no larger than the steps since the previous one plus what
// they added to the state, so snapshots cost about one to two times the
// step records (measured: 302 B of snapshots per 322 B step record, for
// 300-byte outputs). And the journal a Load replays is never
// larger than the snapshot it starts from; replaying a step costs less than
// decoding the bytes it weighs (measured on a par of 10,000: Decode of the
// 518 KB origin 71 ms, Replay of all 10,000 one-result steps 31 ms), so a
// cold Load costs at most about two snapshot decodes. Options.SnapshotEvery
// adds a cap on the number of steps between snapshots, for workloads that
// want shorter replays at the price of O(tree) bytes every that many steps.
// Steps are never deleted: History returns the origin and every step, and
// History.At rebuilds any past version.
//
// The package's tests crash a runner at this commit: an unexported fault
// hook (faulthook.go), set only from export_test.go, is asked as every
// operation starts, for each write of a transaction before it commits
// (an error aborts the whole transaction, as a process that dies then
// loses it), and for each once it committed (the write stays, its caller
// hears of a death instead). runner/runnertest's crash scenarios run
// with runner/inmem through it (TestConformanceInmem). Production sets
// no hook: it costs one nil check.
//
// # Reads and the cache
//
// Load reads the meta record; if the in-memory cache holds that
// incarnation at that version it returns the cached job (jobs are
// immutable values), else it decodes the snapshot, replays the steps after
// it with job.Replay, checks that the result is the version and status the
// meta record names, and caches it. Saves put the job they wrote in the
// cache after committing. The cache is only ever trusted when it matches
// the meta record read in the same call, so racing writers, deletes and
// re-creates cost a decode, never a wrong answer. It holds
// Options.CacheSize jobs (default 4096) and about 262,000 actions in all,
// least recently used first out.
//
// History decodes the origin (a job's version 1, which never changes) and
// keeps it beside the cache, keyed by the job's incarnation, for at most 64
// jobs within the same bound on actions: reading a job's history again
// (a job page reloaded, a second viewer) decodes its step records only.
// Stats.Decodes counts the jobs the reads decoded.
//
// # Retention
//
// With Options.Retention, Sweep (store.Sweeper) deletes the settled jobs
// whose clock (job.Job.Clock, the time of the last result they applied,
// kept in the meta record) is older than the retention, by Options.Now.
// The store never sweeps on its own: the runner working on it
// (runner/inmem's Run) calls Sweep now and then. Each call reads at most
// 1,024 meta records, going on from where the previous one stopped, and
// deletes at most 256 jobs in one write transaction, shared with the Saves
// waiting then; a round through the store takes jobs/1,024 calls, then
// the runner waits a tenth of the retention (from a second to a minute).
// Without Retention (the default) every job is kept.
//
// Stats reports counters (transactions, record bytes, steps, snapshots,
// page bytes) for benchmarks; see BenchmarkSave.
//
// # Readers and locking
//
// bbolt reuses the pages that commit N freed in commit N+1, and knows
// only of the read transactions of its own process: a reader in another
// process that has the file mapped would read pages rewritten under it.
// And bbolt flocks the file exclusively for a writer, shared for a reader,
// so the two could not even open it together. On Linux, baton adds its
// own locks, open file description (OFD) locks (fcntl F_OFD_SETLK) on
// three bytes far past any data (from offset 1<<62), which belong to an
// open file rather than a process, so that two Stores in one process
// exclude each other as two processes do:
//
//   - W, the writer byte. Open takes it for writing on a descriptor of
//     its own, before bbolt.Open, and holds it until Close. It is what
//     keeps two writers apart (the second waits Options.Timeout, then
//     ErrLocked).
//   - G, the gate. A writer write-locks it from before each write
//     transaction begins until after it commits (and around bbolt.Open,
//     which may write); a reader read-locks it for each operation. So no
//     write commits while a reader reads, and a reader never sees a page
//     that bbolt is rewriting or has reused.
//   - T, the turnstile, in front of G: a writer that finds readers in G
//     write-locks T while it waits for them to leave, and readers pass T
//     to enter G, so a stream of readers cannot starve the writer.
//
// Open then turns bbolt's exclusive flock into a shared one (flock
// LOCK_SH on bbolt's descriptor), so that readers' bbolt.Open, which
// takes a shared flock, gets in. (Linux changes a flock's kind by
// dropping it and taking the new one; a bbolt program opening the file
// for writing at that instant would get in and make Open fail with
// ErrLocked. Other programs that open the file with bbolt for writing are
// still kept out by the shared flock.)
//
// For each Load, History or List a read-only Store waits at the gate
// (polling, for at most Options.Timeout, then ErrLocked; or until its
// context ends), opens bbolt read-only (so its memory map covers the file
// as it is now), checks the meta pages (see below), reads, copies out what
// it needs, closes bbolt, and leaves the gate. Its operations take turns
// within the Store. A read costs an open, a map and an unmap of the file:
// fine for a status command, not for a hot loop. A writer waiting at the
// gate waits for as long as its context allows: a reader stopped
// mid-read (SIGSTOP, a debugger) holds up the writer's commits.
//
// Readers may: read while a writer is open and committing, from any
// number of processes; open a file they cannot write, in a directory they
// cannot write; read a file that another program's bbolt reader has open.
// They may not: write (ErrReadOnly); read through anything but this
// package (a bare bbolt reader takes no gate and may read torn pages
// while a baton writer commits); expect the gate off Linux.
//
// Off Linux (build tags) there are no OFD locks and nothing of the above:
// the writer keeps bbolt's exclusive flock while it is open, and a read-only
// Store fails with ErrLocked (after Options.Timeout) while a writer is
// open, as Open did before.
//
// # Damaged files
//
// bbolt trusts its file: a page cut off by truncation, or a byte changed
// in a page, makes it fault (SIGSEGV, SIGBUS) or panic (slice bounds,
// assertions), which would crash the process. baton defends in two steps:
//
//   - Before bbolt opens a file, baton reads the two meta pages itself
//     (with ReadAt, not through a memory map), checks their checksums,
//     picks the valid one with the higher transaction id as bbolt does,
//     and checks that the page size is one bbolt can have, that the pages
//     it records as in use (the high-water page id times the page size) fit
//     in the file, and that the root page is a B+tree page in range. A
//     writer also checks the free list: its pages in range, each free page
//     listed once and none in use by the root or the free list itself
//     (bbolt would hand such a page to a write and overwrite live data).
//   - Every bbolt call that touches the memory map (opening, each read and
//     write transaction, closing) runs with runtime/debug.SetPanicOnFault
//     on for its goroutine and recovers panics: a fault or a panic becomes
//     an error wrapping ErrDamaged. After one inside a write transaction
//     the Store is poisoned: bbolt's state in memory can no longer be
//     trusted, so every later call returns that error, until Close (which
//     releases the file even if bbolt's writer lock was left held). A
//     fault in a read transaction leaves bbolt as it was.
//
// Errors for a damaged file name the file (and the job being read) and
// wrap both ErrDamaged and job.ErrCorrupt: job.ErrCorrupt is the test for
// "the stored data is bad", record or file; ErrDamaged, for "the file's
// structure is". A file with neither meta page valid is "not a bbolt
// database, or a damaged one" and wraps ErrDamaged too. Opening and
// reading never write to the file, damaged or not. When the newer meta
// page alone is damaged, bbolt (and baton) reads the file as of the
// transaction before, as after a crash during a commit.
//
// What is left: bbolt's pages carry no checksum, so a damage that keeps a
// page well-formed can go unnoticed. baton's records have their own
// checksums (above), but the keys do not: a changed byte in a job's ID
// shows the job under another ID, and a lowered element count in a page
// of the jobs bucket hides jobs (a raised one is caught: Load of a job
// that is not found walks the jobs bucket and reports damage if its keys
// are out of order). A step record's checksum does not cover its job and
// version, which are implied by where it lives, so a page pointer changed
// to another job's steps of the same shape could replay them. A cycle of
// page pointers would recurse until the goroutine's stack is exhausted,
// which Go cannot recover from; the meta checks do not walk the tree.
package bolt
