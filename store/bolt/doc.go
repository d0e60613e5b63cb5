// Package bolt is a store.Store in one file, on go.etcd.io/bbolt: crash
// safe (every write is one bbolt transaction, fsynced at commit), the
// default store for single-machine runs. Callers may alias it (boltstore)
// when they also import bbolt.
//
//	s, err := bolt.Open("baton.db", nil)
//	...
//	defer s.Close()
//
// # Contracts
//
//   - Store implements store.Store and passes store/storetest.Run and
//     RunDurable. All methods may be called concurrently; Close waits for
//     operations in progress and is safe to call twice.
//   - One process at a time. bbolt locks the file (flock); Open waits at
//     most Options.Timeout (default one second) and then fails with an
//     error wrapping ErrLocked: "store/bolt: <path> is locked by another
//     process". It never hangs.
//   - Open never writes to a file it cannot use: a file that is not a
//     bbolt database, or a bbolt database without baton's "baton" bucket,
//     is an error naming the file, and the file is left as it was. An
//     empty or missing file becomes a new store.
//   - A damaged record is an error naming the file, the job and the key
//     (jobs/<id>/steps/<version>, say) and wrapping job.ErrCorrupt; so is a
//     journal that does not replay as recorded. Nothing is rewritten or
//     dropped to get past it.
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
//	jobs/<id>/meta               46 bytes: incarnation, version, status,
//	                             snapshot version, step bytes since the
//	                             snapshot, CRC-32Cs of origin and snapshot
//	jobs/<id>/origin/job         job.Encode of version 1, as Create got it
//	jobs/<id>/snap/job           job.Encode of the newest snapshot (absent
//	                             until the first one)
//	jobs/<id>/steps/<version>    one record per Save: the step's results
//
// Step keys are the version as 8 big-endian bytes, so they sort in order.
// A step record is compact binary: a format byte, the number of results,
// each result's action ID, output and error as length-prefixed bytes, and a
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
// Create writes the origin and the meta record. Save is one transaction: it
// checks the stored version against j.Version()-1 (optimistic concurrency,
// checked inside the transaction, so concurrent savers of one version
// cannot both win), appends the step record, and rewrites the meta record.
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
// Options.CacheSize jobs (default 128), least recently used first out.
//
// Stats reports counters (transactions, record bytes, steps, snapshots,
// page bytes) for benchmarks; see BenchmarkSave.
package bolt
