package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store/bolt"
	"go.etcd.io/bbolt"
)

// storeJobs creates jobs with job.New and store.Create only, as a process
// that crashed right after submitting them would leave them: unfinished,
// their first actions never run.
func storeJobs(t *testing.T, db string, jobs map[job.ID]ast.Node) {
	t.Helper()
	st, err := bolt.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for id, root := range jobs {
		tr, err := job.New(id, root)
		j := tr.Job
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Create(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResume(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{
		"r1": ast.Seq(ast.Act("log", "one"), ast.Act("log", "two")),
		"r2": ast.Par(ast.Act("log", "three"), ast.Act("sleep", "10ms")),
	})
	r := baton(t, "status", "--store", db).want(t, exitOK)
	contains(t, "status", r.stdout, "r1  running  1 ", "r2  running  1 ")

	r = baton(t, "resume", "--store", db).want(t, exitOK)
	contains(t, "resume", r.stdout, "resuming 2 unfinished jobs in "+db+"\n",
		"seq[0]#1: one\n", "seq[1]#1: two\n", "par[0]#1: three\n",
		"job r1 succeeded: 2/2 actions settled, v3", "job r2 succeeded: 2/2 actions settled")

	r = baton(t, "resume", "--store", db).want(t, exitOK)
	contains(t, "resume", r.stdout, "no unfinished jobs in "+db)
}

func TestResumeFailure(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{
		"good": ast.Act("log", "fine"),
		"bad":  ast.Seq(ast.Act("fail", "kaput"), ast.Act("log", "never")),
	})
	r := baton(t, "resume", "--store", db).want(t, exitFailed)
	contains(t, "resume", r.stdout, "job good succeeded", "job bad failed at seq[0] (fail): kaput")
}

// TestResumeLeavesForeignJobsAlone: a job made by a Go program, whose
// actions the command has no handler for, is never resumed (it would fail
// them for good): it is reported, and stays exactly as it was. Before, it
// was saved as failed.
func TestResumeLeavesForeignJobsAlone(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{
		"good":  ast.Act("log", "fine"),
		"order": ast.Seq(ast.Act("payment.charge", 500), ast.Act("log", "charged")),
	})
	before := loadEncoded(t, db, "order")
	r := baton(t, "resume", "--store", db).want(t, exitOK)
	contains(t, "resume", r.stdout, "job good succeeded",
		`job order skipped: it uses action this command has no handler for: "payment.charge" (a job made by a Go program: resume it with that program)`)
	if after := loadEncoded(t, db, "order"); after != before {
		t.Errorf("the foreign job changed:\nbefore %s\nafter  %s", before, after)
	}
	// Named, it is an error.
	r = baton(t, "resume", "--store", db, "order").want(t, exitError)
	contains(t, "resume order", r.stdout, "job order skipped")
	if after := loadEncoded(t, db, "order"); after != before {
		t.Errorf("the foreign job changed:\nbefore %s\nafter  %s", before, after)
	}
}

// TestResumeNamedJobs: with arguments, resume runs only the jobs named.
func TestResumeNamedJobs(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{
		"a": ast.Act("log", "A"),
		"b": ast.Act("log", "B"),
		"c": ast.Act("log", "C"),
	})
	r := baton(t, "resume", "--store", db, "a", "c").want(t, exitOK)
	contains(t, "resume", r.stdout, "resuming 2 unfinished jobs", "root#1: A\n", "root#1: C\n", "job a succeeded", "job c succeeded")
	if strings.Contains(r.stdout, "B") {
		t.Errorf("resume a c ran b:\n%s", r.stdout)
	}
	r = baton(t, "status", "--store", db).want(t, exitOK)
	contains(t, "status", r.stdout, "b   running")
	r = baton(t, "resume", "--store", db, "a", "nope").want(t, exitError)
	contains(t, "resume a nope", r.stdout, "job a has already finished: succeeded")
	contains(t, "resume a nope", r.stderr, "job nope not found in "+db)
}

// TestResumeIsolatesDamagedJob: one job whose stored state is damaged is
// reported, by name, and left as it is; the others are resumed. delete
// removes it.
func TestResumeIsolatesDamagedJob(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{
		"a":      ast.Act("log", "A"),
		"broken": ast.Act("log", "never"),
		"z":      ast.Act("log", "Z"),
	})
	damageOrigin(t, db, "broken")
	r := baton(t, "resume", "--store", db).want(t, exitStore)
	contains(t, "resume", r.stdout, "job a succeeded", "job z succeeded")
	contains(t, "resume", r.stderr, "job broken in "+db+" cannot be loaded; left as it is ('baton delete broken' removes it)")
	if strings.Contains(r.stdout, "never") {
		t.Errorf("the damaged job ran:\n%s", r.stdout)
	}
	baton(t, "delete", "--store", db, "broken").want(t, exitOK)
	r = baton(t, "resume", "--store", db).want(t, exitOK)
	contains(t, "resume", r.stdout, "no unfinished jobs in "+db)
	baton(t, "delete", "--store", db, "broken").want(t, exitError)
}

func TestInterruptThenResume(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	file := writeWorkflow(t, "slow.json", `{"version":1,"root":{"seq":[
		{"act":"log","payload":"one"},{"act":"sleep","payload":"300ms"},{"act":"log","payload":"two"}]}}`)
	r := interruptibleBaton(t, "seq[0]#1: one\n", "run", file, "--store", db, "--id", "slow")
	if r.code != exitInterrupted {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitInterrupted, r.stdout, r.stderr)
	}
	contains(t, "stderr", r.stderr, "interrupted: job slow is saved in "+db+"; finish it with: baton resume --store "+db+"\n")
	if strings.Contains(r.stdout, "two") {
		t.Fatalf("ran on after the interrupt:\n%s", r.stdout)
	}

	r = baton(t, "status", "--store", db).want(t, exitOK)
	contains(t, "status", r.stdout, "slow  running")

	r = baton(t, "resume", "--store", db).want(t, exitOK)
	contains(t, "resume", r.stdout, "seq[2]#1: two\n", "job slow succeeded: 3/3 actions settled")
	if strings.Contains(r.stdout, "one") {
		t.Errorf("resume ran a finished action again:\n%s", r.stdout)
	}
}

func TestRunLeavesOtherJobsAlone(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{"other": ast.Act("log", "other")})
	r := baton(t, "run", writeWorkflow(t, "h.json", helloJSON), "--store", db, "--id", "mine").want(t, exitOK)
	if strings.Contains(r.stdout, "other") {
		t.Errorf("baton run ran another job:\n%s", r.stdout)
	}
	r = baton(t, "status", "--store", db).want(t, exitOK)
	contains(t, "status", r.stdout, "other  running")
}

// loadEncoded returns job id as stored in db, encoded.
func loadEncoded(t *testing.T, db string, id job.ID) string {
	t.Helper()
	st, err := bolt.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	j, err := st.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := job.Encode(j)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("v%d %s", j.Version(), enc)
}

// damageOrigin overwrites the origin record of job id in the bolt file db
// with bytes that match the meta record's checksum but do not decode, as a
// bug or a disk fault might leave them: the job cannot be loaded, the
// others can.
func damageOrigin(t *testing.T, db string, id job.ID) {
	t.Helper()
	bdb, err := bbolt.Open(db, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	err = bdb.Update(func(tx *bbolt.Tx) error {
		jb := tx.Bucket([]byte("jobs")).Bucket([]byte(id))
		garbage := []byte(`{"format":1,"id":"broken","version":1,"workflow":{"act":"log"},"nodes":[[7,7,7]]}`)
		if err := jb.Bucket([]byte("origin")).Put([]byte("job"), garbage); err != nil {
			return err
		}
		// Keep the meta record's checksum of the origin in step, so that
		// what fails is the decoding.
		meta := append([]byte(nil), jb.Get([]byte("meta"))...)
		binary.BigEndian.PutUint32(meta[34:], crc32.Checksum(garbage, crc32.MakeTable(crc32.Castagnoli)))
		binary.BigEndian.PutUint32(meta[len(meta)-4:], crc32.Checksum(meta[:len(meta)-4], crc32.MakeTable(crc32.Castagnoli)))
		return jb.Put([]byte("meta"), meta)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestResumeInterruptAfterJobFinished: a job that finishes while resume
// drains after Ctrl-C is reported as finished, not as unfinished.
func TestResumeInterruptAfterJobFinished(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{"slow": ast.Act("sleep", "300ms")})
	// Interrupted once the action has begun (a loaded machine may take a
	// while to start it): the drain lets it finish.
	r := interruptibleBaton(t, "action started job=slow", "resume", "--store", db, "--verbose")
	if r.code != exitInterrupted {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitInterrupted, r.stdout, r.stderr)
	}
	contains(t, "stdout", r.stdout, "job slow succeeded: 1/1 actions settled")
	contains(t, "stderr", r.stderr, "interrupted: every resumed job had finished\n")
	if strings.Contains(r.stderr, "unfinished") {
		t.Errorf("a finished job reported unfinished:\n%s", r.stderr)
	}
}
