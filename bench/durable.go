package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/bbolt"
)

// The durable floors are what a sequence of durable steps costs at the
// least, to compare the bolt engine with on scenario b: one durable write
// per action, one after the other, in a fresh file per run. They run no
// handler.

// record is what a durable floor writes per action: about the size of a
// step record of scenario b in store/bolt.
var record = append(bytes.Repeat([]byte{'x'}, 99), '\n')

// fsyncEngine returns "fsync": per action, append a record to a file and
// fsync it.
func fsyncEngine() engine {
	return engine{Name: "fsync", SeqOnly: true,
		About: "per action, append ~100 bytes to a file and fsync",
		Run:   runFsync}
}

func runFsync(_ context.Context, sc scenario, run int, o runOpts) (s sample, err error) {
	path := filepath.Join(o.Dir, fmt.Sprintf("fsync-%s-%d.log", sc.Name, run))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return sample{}, err
	}
	defer func() { err = errors.Join(err, f.Close(), os.Remove(path)) }()

	m := startMeter()
	for range sc.Actions() {
		if _, err := f.Write(record); err != nil {
			return sample{}, err
		}
		if err := f.Sync(); err != nil {
			return sample{}, err
		}
	}
	return m.stop(), nil
}

// bboltEngine returns "bboltcommit": per action, one bbolt transaction
// (fsync on) putting a record under a new key.
func bboltEngine() engine {
	return engine{Name: "bboltcommit", SeqOnly: true,
		About: "per action, one bbolt transaction putting ~100 bytes, fsync on",
		Run:   runBBolt}
}

func runBBolt(_ context.Context, sc scenario, run int, o runOpts) (s sample, err error) {
	path := filepath.Join(o.Dir, fmt.Sprintf("bbolt-%s-%d.db", sc.Name, run))
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		return sample{}, err
	}
	defer func() { err = errors.Join(err, db.Close(), os.Remove(path)) }()
	bucket := []byte("records")
	if err := db.Update(func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucket(bucket)
		return err
	}); err != nil {
		return sample{}, err
	}
	key := make([]byte, 8)

	m := startMeter()
	for i := range sc.Actions() {
		binary.BigEndian.PutUint64(key, uint64(i))
		if err := db.Update(func(tx *bbolt.Tx) error {
			return tx.Bucket(bucket).Put(key, record)
		}); err != nil {
			return sample{}, err
		}
	}
	return m.stop(), nil
}
