// Package store is the persistence seam between runners and the reducer:
// the Store interface, its errors, a memory store, and History, the full
// record of a job's steps.
//
// A store keeps each job as an origin (the job as New made it), a journal of
// steps (the results each Restart applied), and, in durable stores, a
// snapshot now and then so that loading does not replay the whole journal.
// The bytes written per step grow with the results of that step, not with
// the size of the tree: this is where baton improves on keeping the whole
// execution tree after every restart, and it keeps full introspection: any
// past state of a job can be rebuilt with History.At.
//
// Concurrency is optimistic. A job returned by job.Restart knows the
// version it was made from (Version()-1); Save fails with ErrConflict when
// the stored job is no longer at that version, so two runners that loaded
// the same job cannot both apply their results.
//
// Implementations: NewMemory here (tests, benchmarks), store/bolt (one
// file, crash safe, the default for single-machine runs), and the
// ZooKeeper runner's own. Each passes store/storetest.Run.
package store
